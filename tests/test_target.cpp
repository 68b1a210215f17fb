// The JIT's target description (src/backend/mlir/target.h): LT_CPU_FEATURES, the vector width
// and register count derived from the features, and the matmul register tile chosen from them,
// checked against fixed descriptions of an AVX-512 and an AVX2-only host, and against this
// process's own target.
#include <gtest/gtest.h>
#include <lt/lt.h>

#include <cstdlib>
#include <map>
#include <string>

#include "backend/mlir/par_threshold.h"
#include "backend/mlir/target.h"

namespace {

using lt::backend::CpuTarget;
using lt::backend::describe_target;
using lt::backend::matmul_register_tile;

// The features LLVM reports for the two kinds of development host (a subset: the ones the
// derivation reads, plus a few it must carry through untouched).
std::map<std::string, bool> zen3() {
  return {{"sse4.2", true},    {"avx", true},         {"avx2", true},     {"fma", true},
          {"f16c", true},      {"bmi2", true},        {"avx512f", false}, {"avx512bw", false},
          {"avx512vl", false}, {"avx512bf16", false}, {"evex512", false}, {"amx-tile", false}};
}
std::map<std::string, bool> zen5() {
  auto f = zen3();
  for (const char* k : {"avx512f", "avx512bw", "avx512vl", "avx512bf16", "evex512"}) f[k] = true;
  return f;
}

std::string error_of(const std::string& cpu, const std::map<std::string, bool>& f,
                     const std::string& restriction) {
  try {
    describe_target(cpu, f, restriction);
  } catch (const lt::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Target, Avx512HostGetsWideVectorsAndTheWideTile) {
  const CpuTarget t = describe_target("znver5", zen5(), "");
  EXPECT_EQ(t.vector_bits, 512);
  EXPECT_EQ(t.vector_regs, 32);
  EXPECT_EQ(matmul_register_tile(t).rows, 8);
  EXPECT_EQ(matmul_register_tile(t).cols, 32);
  EXPECT_EQ(t.summary(), "znver5, 512-bit vectors x 32 registers");
}

TEST(Target, Avx2HostGetsTheTileThatFitsSixteenRegisters) {
  const CpuTarget t = describe_target("znver3", zen3(), "");
  EXPECT_EQ(t.vector_bits, 256);
  EXPECT_EQ(t.vector_regs, 16);
  // 4 rows x 2 vectors of 8 floats: 8 accumulators + 2 B vectors + 1 broadcast of A.
  EXPECT_EQ(matmul_register_tile(t).rows, 4);
  EXPECT_EQ(matmul_register_tile(t).cols, 16);
}

TEST(Target, DisablingAvx512fGivesTheAvx2PathAndDropsWhatNeedsIt) {
  const CpuTarget t = describe_target("znver5", zen5(), "-avx512f");
  EXPECT_EQ(t.vector_bits, 256);
  EXPECT_EQ(t.vector_regs, 16);
  EXPECT_EQ(matmul_register_tile(t).cols, 16);
  for (const char* f : {"avx512f", "avx512bw", "avx512vl", "avx512bf16", "evex512"})
    EXPECT_FALSE(t.has(f)) << f;
  EXPECT_TRUE(t.has("avx2"));
  EXPECT_TRUE(t.has("bmi2"));  // unrelated features stay
  // The target machine gets every feature with its sign, the restriction applied.
  bool minus = false;
  for (const std::string& f : t.llvm_features()) minus = minus || f == "-avx512f";
  EXPECT_TRUE(minus);
  EXPECT_EQ(t.summary(), "znver5, 256-bit vectors x 16 registers (LT_CPU_FEATURES=-avx512f)");
}

TEST(Target, DisablingAvxGivesSseVectors) {
  const CpuTarget t = describe_target("znver3", zen3(), "-avx");
  EXPECT_EQ(t.vector_bits, 128);
  EXPECT_EQ(matmul_register_tile(t).rows, 4);
  EXPECT_EQ(matmul_register_tile(t).cols, 8);
  EXPECT_FALSE(t.has("avx2"));  // needs avx
  // -fma alone: AVX's 256-bit float vectors without FMA (AVX2 off: LLVM's avx2 implies fma).
  const CpuTarget nofma = describe_target("znver3", zen3(), "-fma");
  EXPECT_EQ(nofma.vector_bits, 256);
  EXPECT_FALSE(nofma.has("avx2"));
}

TEST(Target, MalformedRestrictionsAreErrorsNamingTheVariable) {
  std::string e = error_of("znver3", zen3(), "avx512f");
  EXPECT_NE(e.find("LT_CPU_FEATURES=avx512f"), std::string::npos) << e;
  EXPECT_NE(e.find("+feature or -feature"), std::string::npos) << e;
  e = error_of("znver3", zen3(), "-avx513f");
  EXPECT_NE(e.find("no feature 'avx513f'"), std::string::npos) << e;
  // Enabling what the CPU lacks would compile instructions that fault here.
  e = error_of("znver3", zen3(), "+avx512f");
  EXPECT_NE(e.find("lacks avx512f"), std::string::npos) << e;
  EXPECT_EQ(error_of("znver3", zen3(), "-avx2,,+avx2"), "");  // empty entries skipped; last wins
  EXPECT_EQ(describe_target("znver3", zen3(), "-avx2,+avx2").vector_bits, 256);
}

TEST(Target, ThisProcessFollowsLtCpuFeatures) {
  // This process's target is the host restricted by LT_CPU_FEATURES (ctest runs the lazy
  // tests again with -avx512f and with -avx: the AVX2 and SSE paths on any x86-64 host).
  const CpuTarget& t = lt::backend::host_target();
  const char* e = std::getenv("LT_CPU_FEATURES");
  EXPECT_EQ(t.restriction, e ? e : "");
  EXPECT_FALSE(t.cpu.empty());
  EXPECT_TRUE(t.has("sse4.2") || t.vector_bits == 128);
  if (t.restriction.find("-avx512f") != std::string::npos) EXPECT_LE(t.vector_bits, 256);
  if (t.restriction == "-avx") EXPECT_EQ(t.vector_bits, 128);
  EXPECT_EQ(matmul_register_tile(t).rows * matmul_register_tile(t).cols / t.float_lanes(),
            t.vector_regs / 2);  // half the registers accumulate
}

TEST(ParThreshold, MeasuredOnTheHostAsAPowerOfTwo) {
  // One thread never forks; with two, the threshold comes from the measured fork/join cost
  // and per-element time: a power of two from 2^13 up, and the figures are reported.
  std::string why;
  EXPECT_EQ(lt::backend::measure_par_threshold(1, &why), -1);
  const int64_t t = lt::backend::measure_par_threshold(2, &why);
  EXPECT_GE(t, int64_t{1} << 13) << why;
  EXPECT_EQ(t & (t - 1), 0) << t;
  EXPECT_NE(why.find("fork/join"), std::string::npos) << why;
  EXPECT_NE(why.find("2^20"), std::string::npos) << why;
  // LT_MLIR_PAR_MIN, where set, is the process's threshold.
  if (const char* e = std::getenv("LT_MLIR_PAR_MIN"))
    EXPECT_EQ(lt::backend::par_threshold(), std::atoll(e));
}

}  // namespace
