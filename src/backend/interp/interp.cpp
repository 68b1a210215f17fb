// The reference backend: an execution plan that walks the graph with the eager kernels.
// Values are released after their last use; a donated input buffer is written in place by an
// elementwise step that is its last reader.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "backend/backend.h"
#include "backend/plan_node.h"
#include "core/check.h"
#include "core/tensor_impl.h"
#include "eager/executor.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt::backend {
namespace {

class Plan : public Executable {
 public:
  explicit Plan(const ir::Graph& g) : steps_(flatten(g, &roots_)), frees_(steps_.size()) {
    // Liveness: a value dies after the last step that reads it (roots never die).
    std::vector<int32_t> last(steps_.size(), -1);
    for (size_t i = 0; i < steps_.size(); ++i)
      for (int32_t a : steps_[i].args) last[a] = static_cast<int32_t>(i);
    for (int32_t r : roots_) last[r] = static_cast<int32_t>(steps_.size());
    for (size_t v = 0; v < steps_.size(); ++v)
      if (last[v] >= 0 && last[v] < static_cast<int32_t>(steps_.size()))
        frees_[last[v]].push_back(static_cast<int32_t>(v));
    // A view shares its source's buffer: a buffer lives until the last use of any view of it.
    buf_of_ = buffer_owners(steps_);
    buf_last_.assign(steps_.size(), -1);
    for (size_t v = 0; v < steps_.size(); ++v)
      buf_last_[buf_of_[v]] = std::max(buf_last_[buf_of_[v]], last[v]);
  }

  std::vector<Tensor> run(const RunArgs& args) override {
    std::vector<Tensor> vals(steps_.size());
    std::vector<int8_t> donor(steps_.size(), 0);  // value is a donated input buffer
    for (size_t i = 0; i < steps_.size(); ++i) {
      const PlanNode& s = steps_[i];
      if (s.kind == ir::NodeKind::Op) {
        vals[i] = exec(i, s, vals, donor);
      } else {
        vals[i] = leaf_value(s, args);
        donor[i] = s.kind == ir::NodeKind::Data &&
                   args.donate.size() > static_cast<size_t>(s.slot) && args.donate[s.slot];
      }
      for (int32_t f : frees_[i]) vals[f] = Tensor();
    }
    // Roots are standalone buffers: a root that is a view, a leaf, or a second name for
    // another root's buffer is copied (a later in-place write must not show through).
    std::vector<Tensor> out;
    std::vector<int32_t> used;
    for (int32_t v : roots_) {
      Tensor t = vals[v];
      const PlanNode& s = steps_[v];
      bool own = s.kind == ir::NodeKind::Op && buf_of_[v] == v && t.is_contiguous() &&
                 std::find(used.begin(), used.end(), buf_of_[v]) == used.end();
      if (!own) {
        Tensor c = make_eager(t.sizes(), t.dtype());
        copy_into(c, t);
        t = c;
      }
      used.push_back(buf_of_[v]);
      out.push_back(t);
    }
    return out;
  }

 private:
  Tensor exec(size_t i, const PlanNode& s, std::vector<Tensor>& vals,
              std::vector<int8_t>& donor) {
    OpAttrs attrs;
    std::vector<Tensor> in = op_inputs(s, vals, &attrs);
    // Donation: an elementwise step that is the last reader of a donated, same-shaped and
    // same-dtype contiguous input writes its result into that buffer.
    if (is_elementwise(s.op) && s.op != OpKind::Cast) {
      for (int32_t a : s.args) {
        if (!donor[a] || buf_of_[a] != a || buf_last_[a] != static_cast<int32_t>(i)) continue;
        // Another operand reading this buffer through a view would see the writes.
        bool aliased = false;
        for (int32_t b : s.args) aliased = aliased || (b != a && buf_of_[b] == a);
        if (aliased) continue;
        const Tensor& d = vals[a];
        if (d.dtype() != s.meta.dtype || !d.sizes().equals(s.meta.sizes) || !d.is_contiguous())
          continue;
        eager_execute_into(s.op, in, attrs, s.meta, d);
        donor[i] = 1;
        return d;
      }
    }
    return eager_execute(s.op, in, attrs, s.meta);
  }

  std::vector<int32_t> roots_;  // before steps_: flatten() fills it in the initializer list
  std::vector<PlanNode> steps_;
  std::vector<std::vector<int32_t>> frees_;  // values dead after each step
  std::vector<int32_t> buf_of_;    // value -> the value whose buffer it lives in
  std::vector<int32_t> buf_last_;  // buffer -> last step reading it or any view of it
};

class InterpBackend : public Backend {
 public:
  const char* name() const override { return "interp"; }
  bool supports(OpKind) const override { return true; }
  std::unique_ptr<Executable> compile(const ir::Graph& g) override {
    return std::make_unique<Plan>(g);
  }
};

}  // namespace

std::unique_ptr<Backend> make_interp_backend() { return std::make_unique<InterpBackend>(); }

}  // namespace lt::backend
