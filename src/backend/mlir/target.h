// The CPU the JIT compiles for, described by what codegen choices depend on: the LLVM CPU name,
// the feature list, and from it the widest float vector and the number of vector registers.
// The host's own description, restricted by LT_CPU_FEATURES (a comma-separated LLVM feature
// list, e.g. "-avx512f": an AVX-512 machine then compiles, chooses and tests the AVX2 path).
// Plain C++ header; target.cpp reads the host through LLVM.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lt::backend {

struct CpuTarget {
  std::string cpu;  // LLVM's name, e.g. znver3
  std::map<std::string, bool>
      features;             // every feature LLVM knows for the host, after LT_CPU_FEATURES
  std::string restriction;  // LT_CPU_FEATURES as given ("" = none)
  int vector_bits = 128;    // widest float vector: 512 (avx512f), 256 (avx), 128 (sse)
  int vector_regs = 16;     // architectural vector registers: 32 with avx512f, else 16
  int float_lanes() const { return vector_bits / 32; }
  bool has(const std::string& f) const;
  std::vector<std::string> llvm_features() const;  // "+f"/"-f", for the target machine
  std::string summary() const;  // "znver3, 256-bit vectors x 16 registers (LT_CPU_FEATURES=...)"
};

// A description from a CPU name, its features (as LLVM's getHostCPUFeatures gives them) and an
// LT_CPU_FEATURES value. Throws lt::Error naming LT_CPU_FEATURES for a malformed entry, a feature
// LLVM does not know for this CPU, or a "+f" the CPU lacks (its code would not run here).
// Disabling a feature disables what needs it for the vector width (-avx: no avx2, fma, avx512f).
CpuTarget describe_target(const std::string& cpu, const std::map<std::string, bool>& features,
                          const std::string& restriction);
// This process's target: the host, restricted by LT_CPU_FEATURES; computed once.
const CpuTarget& host_target();

// The generated matmul's register tile, from the target (rows x cols of C held in registers
// over the k loop): half the registers accumulate, as `rows` rows of two vectors of columns;
// two B vectors and one broadcast A element use three more, the rest is the compiler's. AVX-512
// (32 x 512 bit): 8x32; AVX2 (16 x 256 bit): 4x16; SSE: 4x8.
struct RegisterTile {
  int64_t rows = 0, cols = 0;
};
RegisterTile matmul_register_tile(const CpuTarget& t);

}  // namespace lt::backend
