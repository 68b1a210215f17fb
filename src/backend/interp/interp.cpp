// The reference backend: an execution plan that walks the graph with the eager kernels.
// Values are released after their last use; a donated input buffer is written in place by an
// elementwise step that is its last reader.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "backend/backend.h"
#include "core/check.h"
#include "core/tensor_impl.h"
#include "eager/executor.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt::backend {
namespace {

struct Step {
  ir::NodeKind kind;
  OpKind op;
  OpMeta meta;
  OpAttrs attrs;
  std::vector<int32_t> args;   // value indices
  int64_t slot = -1;           // Data/Param: input slot
  double cf = 0;               // Const value
  int64_t ci = 0;
  std::vector<int32_t> frees;  // values dead after this step
};

bool is_view_op(OpKind op) {
  return op == OpKind::Reshape || op == OpKind::Permute || op == OpKind::Expand ||
         op == OpKind::Slice;
}

class Plan : public Executable {
 public:
  explicit Plan(const ir::Graph& g) {
    std::unordered_map<const ir::Node*, int32_t> idx;
    for (const ir::Node* n : g.order) {
      Step s;
      s.kind = n->kind;
      s.op = n->op;
      s.meta = n->meta;
      s.attrs = n->attrs;
      s.slot = n->slot;
      s.cf = n->param_f;
      s.ci = n->param_i;
      for (uint32_t k = 0; k < n->n_operands; ++k) s.args.push_back(idx.at(n->operands[k].get()));
      idx[n] = static_cast<int32_t>(steps_.size());
      steps_.push_back(std::move(s));
    }
    for (const ir::NodePtr& r : g.roots) roots_.push_back(idx.at(r.get()));
    // Liveness: a value dies after the last step that reads it (roots never die).
    std::vector<int32_t> last(steps_.size(), -1);
    for (size_t i = 0; i < steps_.size(); ++i)
      for (int32_t a : steps_[i].args) last[a] = static_cast<int32_t>(i);
    for (int32_t r : roots_) last[r] = static_cast<int32_t>(steps_.size());
    for (size_t v = 0; v < steps_.size(); ++v)
      if (last[v] >= 0 && last[v] < static_cast<int32_t>(steps_.size()))
        steps_[last[v]].frees.push_back(static_cast<int32_t>(v));
    // A view shares its source's buffer: a buffer lives until the last use of any view of it.
    buf_of_.resize(steps_.size());
    buf_last_.assign(steps_.size(), -1);
    for (size_t v = 0; v < steps_.size(); ++v) {
      const Step& s = steps_[v];
      buf_of_[v] = s.kind == ir::NodeKind::Op && is_view_op(s.op) ? buf_of_[s.args[0]]
                                                                   : static_cast<int32_t>(v);
      buf_last_[buf_of_[v]] = std::max(buf_last_[buf_of_[v]], last[v]);
    }
  }

  std::vector<Tensor> run(const RunArgs& args) override {
    std::vector<Tensor> vals(steps_.size());
    std::vector<int8_t> donor(steps_.size(), 0);  // value is a donated input buffer
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      switch (s.kind) {
        case ir::NodeKind::Data:
          vals[i] = args.data.at(s.slot);
          donor[i] = args.donate.size() > static_cast<size_t>(s.slot) && args.donate[s.slot];
          break;
        case ir::NodeKind::Param:
          vals[i] = args.params.at(s.slot);
          break;
        case ir::NodeKind::Const: {
          vals[i] = make_eager({}, s.meta.dtype);
          fill_kernel(vals[i], s.cf, s.ci);
          break;
        }
        case ir::NodeKind::Op:
          vals[i] = exec(i, s, vals, donor);
          break;
      }
      for (int32_t f : s.frees) vals[f] = Tensor();
    }
    // Roots are standalone buffers: a root that is a view, a leaf, or a second name for
    // another root's buffer is copied (a later in-place write must not show through).
    std::vector<Tensor> out;
    std::vector<int32_t> used;
    for (int32_t v : roots_) {
      Tensor t = vals[v];
      const Step& s = steps_[v];
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
  Tensor exec(size_t i, const Step& s, std::vector<Tensor>& vals, std::vector<int8_t>& donor) {
    std::vector<Tensor> in;
    in.reserve(s.args.size());
    for (int32_t a : s.args) in.push_back(vals[a]);
    OpAttrs attrs = s.attrs;
    if (op_category(s.op) == OpCategory::Random) {  // seed and offset arrive as parameters
      attrs.i[0] = in.at(0).item<int64_t>();
      attrs.i[1] = in.at(1).item<int64_t>();
      in.clear();
    }
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

  std::vector<Step> steps_;
  std::vector<int32_t> roots_;
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
