#!/usr/bin/env bash
# The main job: dependencies, a release build, then training the MLP on Fashion-MNIST on the
# lazy device (extra arguments go to lt-train, e.g. --model cnn or --device cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
mkdir -p build/results
./build/tools/lt-train --out-dir build/results "$@"
