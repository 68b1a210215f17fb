// The MLIR backend's compile cache on disk (LT_CACHE_DIR) and its OpenMP-parallel loops.
// Each disk-cache case runs a child process (a fresh in-memory cache, as a second process of a
// user would have) on the same program and reads the child's counters.
#include <gtest/gtest.h>
#include <lt/lt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace {

namespace fs = std::filesystem;
const lt::Device kLazy("lazy");

// Three graphs (an elementwise chain with broadcasting; softmax = clusters around reductions; a
// scaling, a matmul the generated kernel takes, then relu), checked against the eager device
// (tolerance as below; the matmul: 1e-3 absolute per unit of scale, see test_lazy's
// CompiledMatmulByGeneratedCodeMatchesEager);
// the counters go to LT_TEST_OUT.
TEST(CacheChild, Program) {
  if (!std::getenv("LT_TEST_CHILD")) GTEST_SKIP() << "runs as a child of the DiskCache tests";
  lt::manual_seed(7);
  lt::Tensor x = lt::randn({33, 70}), y = lt::randn({70});
  lt::Tensor lx = x.to(kLazy), ly = y.to(kLazy);
  lt::Tensor a = ((lx * ly + 1.5f).exp() - lx).tanh();
  lt::mark_step();
  lt::Tensor b = lt::softmax(lx * 2.0f, 1);
  lt::mark_step();
  EXPECT_TRUE(lt::allclose(a.to("cpu"), ((x * y + 1.5f).exp() - x).tanh(), 3e-5, 3e-6));
  EXPECT_TRUE(lt::allclose(b.to("cpu"), lt::softmax(x * 2.0f, 1), 3e-5, 3e-6));
  lt::Tensor p = lt::randn({32, 128}), q = lt::randn({128, 128});
  lt::Tensor c = lt::matmul(p.to(kLazy) * 2.0f, q.to(kLazy)).relu();  // two clusters
  lt::mark_step();
  EXPECT_TRUE(lt::allclose(c.to("cpu"), lt::matmul(p * 2.0f, q).relu(), 0, 2e-3));
  std::ofstream out(std::getenv("LT_TEST_OUT"));
  for (const char* c :
       {"DiskCacheHit", "DiskCacheMiss", "DiskCacheWrite", "DiskCacheCorrupt", "MlirClusters",
        "CompileFallback", "CodegenMatmulSteps", "CodegenMatmulCompiles", "CodegenMatmulChosen",
        "CodegenMatmulDeclined", "CodegenMatmulChoiceCached", "DiskCacheLockWaits",
        "MlirJitModules"})
    out << c << " " << lt::metrics::counter(c) << "\n";
}

class DiskCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/lt_cache_" + std::to_string(getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the child program; returns its counters.
  // LT_MLIR_MATMUL=codegen (default): the generated kernel runs whatever the host's timing says;
  // "" times it against OpenBLAS.
  std::map<std::string, int64_t> run_child(const std::string& matmul = "codegen",
                                           const std::string& tag = "") {
    // Beside the cache, not in it (the unwritable-directory case points dir_ at /proc).
    const std::string out =
        ::testing::TempDir() + "/lt_child_" + std::to_string(getpid()) + tag + ".out";
    // Two threads: graphs of several clusters compile as two modules (jit.h), whose two
    // objects the cache links into one library.
    const std::string cmd =
        "LT_TEST_CHILD=1 LT_NUM_THREADS=2 LT_BACKEND=mlir LT_MLIR_MATMUL=" + matmul +
        " LT_CACHE_DIR=" + dir_ + " LT_TEST_OUT=" + out + " /proc/" + std::to_string(getpid()) +
        "/exe --gtest_filter=CacheChild.Program > " + out + ".log 2>&1";
    const int status = std::system(cmd.c_str());
    if (status != 0) {  // the child's own report (a failed check, a sanitizer's) says why
      std::ifstream log(out + ".log");
      std::stringstream text;
      text << log.rdbuf();
      ADD_FAILURE() << "the child exited with status " << status << ":\n" << text.str();
    }
    fs::remove(out + ".log");
    std::map<std::string, int64_t> m;
    std::ifstream in(out);
    std::string name;
    int64_t v;
    while (in >> name >> v) m[name] = v;
    fs::remove(out);
    return m;
  }

  std::vector<fs::path> libraries() const {
    std::vector<fs::path> v;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().extension() == ".so") v.push_back(e.path());
    std::sort(v.begin(), v.end());
    return v;
  }

  std::string dir_;
};

TEST_F(DiskCache, SecondProcessSkipsCompilation) {
  auto first = run_child();
  EXPECT_EQ(first["DiskCacheHit"], 0);
  EXPECT_GE(first["DiskCacheMiss"], 4);  // three graphs and one generated matmul kernel
  EXPECT_EQ(first["DiskCacheWrite"], first["DiskCacheMiss"]);
  EXPECT_GT(first["MlirClusters"], 0);
  EXPECT_GT(first["MlirJitModules"], 3);  // some graph was split across the two threads
  EXPECT_EQ(first["CompileFallback"], 0);
  EXPECT_EQ(first["CodegenMatmulCompiles"], 1);
  EXPECT_EQ(first["CodegenMatmulSteps"], 1);
  EXPECT_EQ(libraries().size(), static_cast<size_t>(first["DiskCacheWrite"]));
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file is left behind
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();

  auto second = run_child();
  EXPECT_EQ(second["DiskCacheHit"], first["DiskCacheMiss"]);
  EXPECT_EQ(second["DiskCacheMiss"], 0);
  EXPECT_EQ(second["DiskCacheWrite"], 0);
  EXPECT_EQ(second["MlirClusters"], 0);  // MLIR and LLVM did not run at all
  EXPECT_EQ(second["MlirJitModules"], 0);
  EXPECT_EQ(second["CodegenMatmulCompiles"], 0);
  EXPECT_EQ(second["CodegenMatmulSteps"], 1);
}

TEST_F(DiskCache, ConcurrentProcessesCompileEachGraphOnce) {
  // Two processes started together on one cache directory (data-parallel ranks): a miss takes
  // the key's lock, so the one that comes second waits and loads the entry; across both, every
  // graph and kernel is compiled once, whether or not they overlapped.
  std::map<std::string, int64_t> a, b;
  std::thread ta([&] { a = run_child("codegen", "a"); });
  std::thread tb([&] { b = run_child("codegen", "b"); });
  ta.join();
  tb.join();
  EXPECT_GE(a["DiskCacheMiss"] + b["DiskCacheMiss"], 4);
  EXPECT_EQ(static_cast<size_t>(a["DiskCacheMiss"] + b["DiskCacheMiss"]), libraries().size())
      << "a key compiled twice: " << a["DiskCacheMiss"] << " and " << b["DiskCacheMiss"]
      << " misses (" << a["DiskCacheLockWaits"] + b["DiskCacheLockWaits"] << " waits)";
  EXPECT_EQ(a["CodegenMatmulCompiles"] + b["CodegenMatmulCompiles"], 1);
  EXPECT_EQ(a["CompileFallback"] + b["CompileFallback"], 0);
}

TEST_F(DiskCache, SecondProcessReusesTheMatmulChoice) {
  // The host's timing of the generated matmul against OpenBLAS is kept beside the kernel: a
  // second process on this CPU reads the decision instead of timing again.
  auto first = run_child("");
  EXPECT_EQ(first["CodegenMatmulChosen"] + first["CodegenMatmulDeclined"], 1);
  EXPECT_EQ(first["CodegenMatmulChoiceCached"], 0);
  auto second = run_child("");
  EXPECT_EQ(second["CodegenMatmulChosen"] + second["CodegenMatmulDeclined"], 0);
  EXPECT_EQ(second["CodegenMatmulChoiceCached"], 1);
  EXPECT_EQ(second["CodegenMatmulCompiles"], 0);
  EXPECT_EQ(second["CodegenMatmulSteps"], first["CodegenMatmulSteps"]);  // the same choice
}

TEST_F(DiskCache, DamagedEntriesAreDetectedAndRecompiled) {
  auto first = run_child();
  std::vector<fs::path> libs = libraries();
  ASSERT_GE(libs.size(), 2u);
  // One library truncated, one with a flipped byte of the same size.
  fs::resize_file(libs[0], fs::file_size(libs[0]) / 2);
  {
    std::fstream f(libs[1], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(libs[1]) / 2));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(fs::file_size(libs[1]) / 2));
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  auto second = run_child();  // results are still checked against eager in the child
  EXPECT_EQ(second["DiskCacheCorrupt"], 2);
  EXPECT_EQ(second["DiskCacheWrite"], 2);
  EXPECT_EQ(second["DiskCacheHit"], first["DiskCacheMiss"] - 2);
  auto third = run_child();  // rewritten entries are good again
  EXPECT_EQ(third["DiskCacheCorrupt"], 0);
  EXPECT_EQ(third["DiskCacheHit"], first["DiskCacheMiss"]);
}

TEST_F(DiskCache, UnwritableDirectoryOnlyCosts) {
  dir_ = "/proc/lt_cache_cannot_exist";
  auto m = run_child();  // the child's results are right: compiled graphs stay in memory
  EXPECT_GT(m["MlirClusters"], 0);  // it compiled (and its counters were read)
  EXPECT_EQ(m["DiskCacheWrite"], 0);
  EXPECT_EQ(m["CompileFallback"], 0);
  dir_ = ::testing::TempDir() + "/lt_cache_" + std::to_string(getpid());
}

// Large elementwise and reduction-bounded graphs run their loops on OpenMP threads; the results
// equal eager's within the op sweep's tolerance for transcendental functions (rtol 3e-5, atol 3e-6:
// the compiled code uses MLIR's polynomial approximations) on every thread count.
TEST(ParallelLoops, LargeGraphsMatchEagerOnEveryThreadCount) {
  const std::string before = lt::lazy_backend();
  lt::set_lazy_backend("mlir");
  const int threads = lt::get_num_threads();
  lt::manual_seed(3);
  // Odd sizes (uneven chunks) above LT_MLIR_PAR_MIN's default of 262144 iterations.
  lt::Tensor x = lt::randn({701, 401}), y = lt::randn({401});
  lt::Tensor want = ((x * y + 1.0f).sigmoid() - x).tanh();
  lt::Tensor want_sm = lt::softmax(x, 1);
  for (int nt : {1, 2, 3}) {
    lt::set_num_threads(nt);
    lt::Tensor lx = x.to(kLazy), ly = y.to(kLazy);
    lt::Tensor got = ((lx * ly + 1.0f).sigmoid() - lx).tanh();
    lt::Tensor sm = lt::softmax(lx, 1);
    lt::mark_step();
    EXPECT_TRUE(lt::allclose(got.to("cpu"), want, 3e-5, 3e-6)) << nt << " threads";
    EXPECT_TRUE(lt::allclose(sm.to("cpu"), want_sm, 3e-5, 3e-6)) << nt << " threads";
  }
  lt::set_num_threads(threads);
  lt::set_lazy_backend(before);
}

// A graph of several clusters is split into LT_JIT_MODULES_PER_THREAD (default 2) modules per
// thread, which those threads compile (jit.h); each split gives eager's results (tolerance as
// above).
TEST(ParallelJit, ModulesPerThreadMatchEager) {
  const std::string before = lt::lazy_backend();
  lt::set_lazy_backend("mlir");
  const int threads = lt::get_num_threads();
  lt::manual_seed(5);
  setenv("LT_DYNAMIC_SHAPES", "off", 1);  // no shape-generic code: one compile per shape
  for (int nt : {1, 2, 3}) {
    lt::set_num_threads(nt);
    // A new shape per thread count: each is a compile, never a cache hit.
    lt::Tensor x = lt::randn({9 + nt, 40}), w = lt::randn({40, 24}), b = lt::randn({24});
    auto step = [](const lt::Tensor& x, const lt::Tensor& w, const lt::Tensor& b) {
      lt::Tensor h = lt::matmul((x * 0.5f).tanh(), w) + b;  // clusters around the matmul
      return lt::log_softmax(h.relu() - h.mean(0), 1).exp().sum(1);
    };
    const int64_t modules = lt::metrics::counter("MlirJitModules");
    const int64_t clusters = lt::metrics::counter("MlirClusters");
    const int64_t compiles = lt::metrics::counter("UncachedCompile");
    lt::Tensor got = step(x.to(kLazy), w.to(kLazy), b.to(kLazy));
    lt::mark_step();
    EXPECT_EQ(lt::metrics::counter("UncachedCompile") - compiles, 1);
    const int64_t n = lt::metrics::counter("MlirClusters") - clusters;
    EXPECT_GE(n, 2);
    const char* per = std::getenv("LT_JIT_MODULES_PER_THREAD");
    EXPECT_EQ(lt::metrics::counter("MlirJitModules") - modules,
              std::min<int64_t>(nt * (per ? std::atoi(per) : 2), n))
        << nt << " threads";
    EXPECT_TRUE(lt::allclose(got.to("cpu"), step(x, w, b), 3e-5, 3e-6)) << nt << " threads";
  }
  unsetenv("LT_DYNAMIC_SHAPES");
  lt::set_num_threads(threads);
  lt::set_lazy_backend(before);
}

}  // namespace
