#!/usr/bin/env bash
# The benchmark suite against PyTorch eager and torch._lazy, on this machine, in one run:
# installs what is missing (python3-torch included), builds the benchmarks, runs interleaved
# rounds and writes bench/results/{latest.json,latest.md,ratios.svg}.
#   scripts/bench.sh [compare.py args, e.g. --rounds 5 --threads 2 --quick]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && apt-get install -y --no-install-recommends python3-torch >/dev/null
fi
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release -DLT_BUILD_BENCH=ON
exec /usr/bin/python3 bench/compare.py --build-dir build "$@"
