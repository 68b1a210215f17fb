#!/usr/bin/env bash
# The whole test suite: dependencies, a release build + ctest, then an ASan+UBSan build + ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
export OMP_WAIT_POLICY=PASSIVE
echo "== release build + tests"
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
(cd build && ctest --output-on-failure -j2)
echo "== ASan + UBSan build + tests"
bash scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLT_SANITIZE=ON -DLT_BUILD_BENCH=OFF
# use_sigaltstack=0: LLVM's signal handlers give a compile thread an alternate signal stack of
# their own (malloc'd), and ASan's runtime then tries to munmap it as its own when that thread
# exits ("CHECK failed: sanitizer_posix.cpp:61 unable to unmap", 1 run in 9 of a test whose child
# compiles on two threads; llvm/llvm-project#179000). Memory checking is unchanged.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:use_sigaltstack=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j2)
