#!/usr/bin/env bash
# Configures and builds one tree: scripts/build.sh <dir> [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
ninja -C "$dir" -j"${LT_BUILD_JOBS:-2}"
