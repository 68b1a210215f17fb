// The JIT's target (target.h): the host CPU as LLVM detects it, restricted by LT_CPU_FEATURES,
// and the codegen parameters derived from it. LLVM headers only.
#include "backend/mlir/target.h"

#include <cstdlib>
#include <sstream>

#include "backend/mlir/mlir_runtime.h"
#include "core/check.h"
#include "core/config.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace lt::backend {

bool CpuTarget::has(const std::string& f) const {
  auto it = features.find(f);
  return it != features.end() && it->second;
}

std::vector<std::string> CpuTarget::llvm_features() const {
  // Enabled ones first: LLVM applies the list in order and enabling a feature enables what it
  // implies (+fma turns avx back on), disabling one disables what implies it, so the "-" win.
  std::vector<std::string> out;
  out.reserve(features.size());
  for (const auto& [name, on] : features)
    if (on) out.push_back("+" + name);
  for (const auto& [name, on] : features)
    if (!on) out.push_back("-" + name);
  return out;
}

std::string CpuTarget::summary() const {
  std::ostringstream os;
  os << cpu << ", " << vector_bits << "-bit vectors x " << vector_regs << " registers";
  if (!restriction.empty()) os << " (LT_CPU_FEATURES=" << restriction << ")";
  return os.str();
}

CpuTarget describe_target(const std::string& cpu, const std::map<std::string, bool>& features,
                          const std::string& restriction) {
  CpuTarget t;
  t.cpu = cpu;
  t.features = features;
  t.restriction = restriction;
  std::stringstream ss(restriction);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    LT_CHECK(item.size() > 1 && (item[0] == '+' || item[0] == '-'), "LT_CPU_FEATURES=", restriction,
             ": entry '", item, "' must be +feature or -feature (LLVM names, e.g. -avx512f)");
    const std::string name = item.substr(1);
    auto it = t.features.find(name);
    LT_CHECK(it != t.features.end(), "LT_CPU_FEATURES=", restriction, ": LLVM knows no feature '",
             name, "' on this CPU (", cpu, ")");
    LT_CHECK(item[0] == '-' || features.at(name), "LT_CPU_FEATURES=", restriction, ": this CPU (",
             cpu, ") lacks ", name, ", so code compiled for it would not run here");
    it->second = item[0] == '+';
  }
  // What the vector width needs, as LLVM's feature implications have it: clearing a feature
  // clears the ones that build on it.
  auto on = [&](const char* f) { return t.has(f); };
  const bool avx = on("avx") && on("sse4.2");
  const bool avx2 = avx && on("avx2") && on("fma");
  const bool avx512 = avx2 && on("avx512f") && on("f16c");
  if (!avx512)
    for (auto& [name, v] : t.features)
      if (name.rfind("avx512", 0) == 0 || name.rfind("amx", 0) == 0 || name == "evex512" ||
          name.rfind("avx10", 0) == 0)
        v = false;
  if (!avx)
    for (auto& [name, v] : t.features)
      if (name.rfind("avx", 0) == 0 || name == "fma" || name == "f16c" || name == "fma4" ||
          name == "xop" || name == "vaes" || name == "vpclmulqdq")
        v = false;
  if (!avx2) t.features["avx2"] = false;
  t.vector_bits = avx512 ? 512 : avx ? 256 : 128;
  t.vector_regs = avx512 ? 32 : 16;
  return t;
}

const CpuTarget& host_target() {
  static const CpuTarget t = [] {
    std::map<std::string, bool> f;
    for (const auto& kv : llvm::sys::getHostCPUFeatures()) f[kv.getKey().str()] = kv.getValue();
    return describe_target(llvm::sys::getHostCPUName().str(), f,
                           config::text("LT_CPU_FEATURES").value_or(""));
  }();
  return t;
}

RegisterTile matmul_register_tile(const CpuTarget& t) {
  return {t.vector_regs / 4, 2 * int64_t{t.float_lanes()}};
}

llvm::orc::JITTargetMachineBuilder jit_target_builder() {
  const CpuTarget& t = host_target();
  llvm::orc::JITTargetMachineBuilder b{llvm::Triple(llvm::sys::getProcessTriple())};
  b.setCPU(t.cpu);
  b.addFeatures(t.llvm_features());
  // Position-independent code, so the object can also be linked into the disk cache's shared
  // library (x86-64 addresses RIP-relative either way: no cost in the loops).
  b.setRelocationModel(llvm::Reloc::PIC_);
  return b;
}

}  // namespace lt::backend
