// Linked into every test program. The tests count compiles and read what a compile produced
// (metrics, saved IR, donation) right after the barrier, so they compile synchronously unless
// the test run sets LT_COMPILE itself: ctest's *_async entries run the default, background
// compiles, and test_background_compile.cpp tests it directly.
#include <cstdlib>

namespace {
const bool kSyncByDefault = [] { return setenv("LT_COMPILE", "sync", /*overwrite=*/0) == 0; }();
}  // namespace
