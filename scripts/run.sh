#!/usr/bin/env bash
# The main job: dependencies, a release build, then the demo of the eager API.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
OMP_WAIT_POLICY=PASSIVE ./build/tools/lt-demo "$@"
