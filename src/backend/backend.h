// The compiler-backend interface of the lazy device: compile a graph into an executable,
// run it on input buffers. The interp backend's "executable" is an execution plan; the MLIR
// backend's will be JIT-compiled code. Both are cached by the lazy runtime the same way.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/shape_profile.h"

namespace lt::backend {

struct RunArgs {
  std::vector<Tensor> data;    // buffers of Graph::data, in slot order
  std::vector<Tensor> params;  // 0-d tensors of Graph::params, in slot order
  // donate[i]: data[i]'s buffer may be overwritten (the paper's conditions hold at a barrier).
  std::vector<bool> donate;
  // The concrete graph of this call: a shape-generic executable reads its sizes from it.
  const ir::Graph* graph = nullptr;
};

class Executable {
 public:
  virtual ~Executable() = default;
  // One contiguous buffer per root, never aliasing a non-donated input.
  virtual std::vector<Tensor> run(const RunArgs& args) = 0;
  // True when this executable will never run compiled code: a background compile that ended
  // without code (generic code the backend declined). The lazy runtime then forgets it.
  virtual bool declined() const { return false; }
  // Set by the lazy runtime: the graph has a step that can throw on values (an index computed
  // in the graph), so its inputs are never donated and a failed run can be recovered from.
  bool may_fail = false;
};

// What a compile spends on the speed of its code. Quick: LLVM's fast instruction selection and
// register allocation, and OpenBLAS for every library matmul (no kernels compiled or timed):
// about half the compile for code that runs up to ~25% slower. A background compile of
// shape-generic code makes Quick code first, then Full code once the Quick code has run long
// enough (lazy/background_compile.h).
enum class Tier { Full, Quick };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual bool supports(OpKind op) const = 0;
  virtual std::unique_ptr<Executable> compile(const ir::Graph& g) = 0;
  // A shape-generic executable of g's structure: the sizes `dyn` marks dynamic are read at run
  // time (RunArgs::graph), for every graph `dyn` admits. nullptr: the backend declines (it
  // cannot make code generic for some op); the caller compiles g as it is.
  virtual std::unique_ptr<Executable> compile_generic(const ir::Graph&,
                                                      std::shared_ptr<ir::DynamicShapes>,
                                                      Tier = Tier::Full) {
    return nullptr;
  }
  // Host measurements that compiles rely on (timings of the host), made on the caller's thread
  // before compiles move to a background thread, where they would be timed against the
  // program's own work.
  virtual void prepare_background_compiles() {}
};

// Set on the thread that compiles in the background (lazy/background_compile.cpp): a compile
// there leaves one core to the program, whose graphs run on the interpreter meanwhile.
void set_compiling_in_background(bool on);
bool compiling_in_background();
// Threads a compile may use: LT_NUM_THREADS, one fewer in the background (at least one).
int compile_threads();

// LT_BACKEND=mlir (default) or interp, chosen once per process.
Backend& active_backend();
// The interpreter, made once: runs graphs the lazy runtime does not compile (background compiles'
// first runs, recovery from a failed run).
Backend& interp_backend();
void set_active_backend(const std::string& name);  // "mlir" or "interp"
std::unique_ptr<Backend> make_interp_backend();
std::unique_ptr<Backend> make_mlir_backend();

}  // namespace lt::backend
