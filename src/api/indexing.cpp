// libtorch's indexing (lt/indexing.h) as compositions of primitives: basic indices are views
// (select, slice, unsqueeze); advanced ones become one linear index over the indexed dims,
// read by index_select and written by scatter / scatter_add, so a lazy graph stays one fusable
// trace with no sync. Only a bool mask read (its shape depends on the values) evaluates.
#include "lt/indexing.h"

#include <limits>
#include <ostream>
#include <string>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/metrics.h"
#include "core/shape.h"
#include "ops/autograd_hooks.h"

namespace lt {
namespace indexing {

Slice::Slice(std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step)
    : start_(start.value_or(0)),
      stop_(stop.value_or(std::numeric_limits<int64_t>::max())),
      step_(step.value_or(1)) {
  LT_CHECK(step_ > 0, "Slice: step must be greater than zero, got ", step_);
}

TensorIndex::TensorIndex(const char* s) : type_(TensorIndexType::Ellipsis) {
  LT_CHECK(s != nullptr && std::string(s) == "...",
           "TensorIndex: expected \"...\" (Ellipsis), got \"", s ? s : "", "\"");
}

std::ostream& operator<<(std::ostream& os, const Slice& s) {
  return os << s.start() << ":" << s.stop() << ":" << s.step();
}

std::ostream& operator<<(std::ostream& os, const TensorIndex& i) {
  switch (i.type()) {
    case TensorIndexType::None:
      return os << "None";
    case TensorIndexType::Ellipsis:
      return os << "...";
    case TensorIndexType::Integer:
      return os << i.integer();
    case TensorIndexType::Boolean:
      return os << (i.boolean() ? "true" : "false");
    case TensorIndexType::Slice:
      return os << i.slice();
    case TensorIndexType::Tensor:
      return os << "Tensor" << shape_str(i.tensor().sizes());
  }
  return os;
}

}  // namespace indexing

using indexing::TensorIndex;
using indexing::TensorIndexType;

Tensor nonzero(const Tensor& t) {
  if (t.device().type() != kCPU) metrics_impl::add("DataDependentSync");
  const std::vector<bool> v = (t.dtype() == kBool ? t : t.ne(0)).to_vector<bool>();
  const int64_t nd = t.dim();
  std::vector<int64_t> coords;
  Dims c(nd, 0);
  int64_t n = 0;
  for (bool set : v) {
    if (set) {
      coords.insert(coords.end(), c.begin(), c.end());
      ++n;
    }
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++c[d] < t.size(d)) break;
      c[d] = 0;
    }
  }
  return tensor(coords, {n, nd}).to(t.device());
}
Tensor Tensor::nonzero() const { return lt::nonzero(*this); }

namespace {

// An index tensor for dimension `dim` of the basic-indexed view: int64, or a bool mask over
// dims [dim, dim + mask.dim()) when masks are kept.
struct Advanced {
  int64_t dim;
  Tensor index;
};

int64_t dims_used(const TensorIndex& i) {
  switch (i.type()) {
    case TensorIndexType::Integer:
    case TensorIndexType::Slice:
      return 1;
    case TensorIndexType::Tensor:
      return i.tensor().dtype() == kBool ? i.tensor().dim() : 1;
    default:
      return 0;
  }
}

// Applies the basic indices of `ix` to self (a view) and collects the tensor ones. Bool masks
// become int64 indices (evaluating them) unless keep_masks.
Tensor apply_basic(const Tensor& self, ArrayRef<TensorIndex> ix, std::vector<Advanced>* adv,
                   bool keep_masks, const char* op) {
  LT_CHECK(self.defined(), op, ": undefined tensor");
  int64_t used = 0, ellipses = 0;
  for (const TensorIndex& i : ix) {
    if (i.is_tensor()) LT_CHECK(i.tensor().defined(), op, ": an index tensor is undefined");
    used += dims_used(i);
    ellipses += i.is_ellipsis();
  }
  LT_CHECK(ellipses <= 1, op, ": an index can only have a single Ellipsis (...), got ", ellipses);
  LT_CHECK(used <= self.dim(), op, ": too many indices for a tensor of dimension ", self.dim(),
           " (shape ", shape_str(self.sizes()), "): ", used, " index dimensions");
  Tensor r = self;
  int64_t d = 0;    // the next dimension of r
  int64_t src = 0;  // the next dimension of self (for messages)
  for (const TensorIndex& i : ix) {
    switch (i.type()) {
      case TensorIndexType::None:
        r = r.unsqueeze(d++);
        break;
      case TensorIndexType::Ellipsis:
        d += self.dim() - used;
        src += self.dim() - used;
        break;
      case TensorIndexType::Integer: {
        const int64_t n = r.size(d), k = i.integer();
        LT_CHECK(k >= -n && k < n, op, ": index ", k, " is out of bounds for dimension ", src,
                 " with size ", n, " (shape ", shape_str(self.sizes()), ")");
        r = r.select(d, k);
        ++src;
      } break;
      case TensorIndexType::Slice:
        r = r.slice(d++, i.slice().start(), i.slice().stop(), i.slice().step());
        ++src;
        break;
      case TensorIndexType::Boolean:
        r = r.unsqueeze(d);
        if (!i.boolean()) r = r.narrow(d, 0, 0);
        ++d;
        break;
      case TensorIndexType::Tensor: {
        const Tensor& t = i.tensor();
        if (t.dtype() == kBool) {
          for (int64_t j = 0; j < t.dim(); ++j)
            LT_CHECK(t.size(j) == r.size(d + j), op, ": the mask of shape ", shape_str(t.sizes()),
                     " does not match the indexed tensor of shape ", shape_str(self.sizes()),
                     " at dimension ", src + j);
          if (t.dim() == 0) {  // a 0-d mask adds a dimension of size 1 (true) or 0 (false)
            r = r.unsqueeze(d);
            adv->push_back(
                {d, zeros({t.nonzero().size(0)}, TensorOptions(t.device()).dtype(kInt64))});
            ++d;
          } else if (keep_masks) {
            adv->push_back({d, t});
            d += t.dim();
          } else {
            Tensor nz = t.nonzero();
            for (int64_t j = 0; j < t.dim(); ++j) adv->push_back({d++, nz.select(1, j)});
          }
          src += t.dim();
        } else {
          LT_CHECK(t.dtype() == kInt64 || t.dtype() == kInt32, op,
                   ": tensors used as indices must be int64, int32 or bool, got ",
                   dtype_name(t.dtype()), " (shape ", shape_str(t.sizes()), ")");
          LT_CHECK(t.device() == self.device(), op, ": an index on ", t.device().str(),
                   " cannot index a tensor on ", self.device().str());
          adv->push_back({d++, t.to(kInt64)});
          ++src;
        }
      } break;
    }
  }
  return r;
}

// The advanced part of an index on the basic view r: r's indexed dims moved first and
// flattened into one of size `flat_size`, read at `flat` ([n] int64).
struct Gather {
  Dims perm;       // r.permute(perm): indexed dims first, the rest in order
  Dims rest;       // sizes of the other dims
  Dims bshape;     // the broadcast shape of the index tensors
  int64_t at = 0;  // where bshape goes in the result (adjacent indexed dims keep their place)
  int64_t flat_size = 1;
  Tensor flat;
};

Gather plan_gather(const Tensor& r, const std::vector<Advanced>& adv, const char* op) {
  Gather g;
  std::vector<bool> indexed(r.dim(), false);
  bool adjacent = true;
  for (size_t j = 0; j < adv.size(); ++j) {
    indexed[adv[j].dim] = true;
    g.perm.push_back(adv[j].dim);
    if (j > 0 && adv[j].dim != adv[j - 1].dim + 1) adjacent = false;
    g.bshape =
        j == 0 ? Dims(adv[j].index.sizes()) : broadcast_shape(g.bshape, adv[j].index.sizes(), op);
  }
  for (int64_t d = 0; d < r.dim(); ++d)
    if (!indexed[d]) {
      g.perm.push_back(d);
      g.rest.push_back(r.size(d));
    }
  g.at = adjacent ? adv[0].dim : 0;
  Tensor lin, bad;
  for (size_t jj = adv.size(); jj-- > 0;) {
    const int64_t n = r.size(adv[jj].dim);
    const Tensor& idx = adv[jj].index;
    Tensor wrapped = idx;
    Tensor known = known_values(idx);
    if (known.defined()) {  // check at the user's line; wrap only if needed
      bool negative = false;
      for (int64_t k : known.to_vector<int64_t>()) {
        LT_CHECK(k >= -n && k < n, op, ": index ", k, " is out of bounds for dimension ",
                 adv[jj].dim, " with size ", n);
        negative |= k < 0;
      }
      if (negative) wrapped = where(idx.lt(0), idx + n, idx);
    } else {  // computed in the graph: an out-of-range one makes the read fail when it runs
      wrapped = where(idx.lt(0), idx + n, idx);
      Tensor b = idx.lt(-n).logical_or(idx.ge(n));
      bad = bad.defined() ? bad.logical_or(b) : b;
    }
    Tensor term = g.flat_size == 1 ? wrapped : wrapped * g.flat_size;
    lin = lin.defined() ? lin + term : term;
    g.flat_size *= n;
  }
  if (bad.defined()) lin = where(bad, full({}, g.flat_size, lin.options()), lin);
  g.flat = lin.expand(g.bshape).reshape({-1});
  return g;
}

// Moves the bshape dims of a [bshape, rest] tensor to position g.at.
Tensor move_bdims(const Tensor& t, const Gather& g) {
  if (g.at == 0) return t;
  const int64_t nb = static_cast<int64_t>(g.bshape.size()), nd = t.dim();
  Dims p;
  for (int64_t j = 0; j < g.at; ++j) p.push_back(nb + j);
  for (int64_t j = 0; j < nb; ++j) p.push_back(j);
  for (int64_t j = nb + g.at; j < nd; ++j) p.push_back(j);
  return t.permute(p);
}

// Whether `from` broadcasts to exactly `to`.
bool broadcasts_to(IntList from, IntList to) {
  if (from.size() > to.size()) return false;
  const size_t off = to.size() - from.size();
  for (size_t j = 0; j < from.size(); ++j)
    if (from[j] != 1 && from[j] != to[off + j]) return false;
  return true;
}

Dims with_front(int64_t n, IntList rest) {
  Dims s{n};
  for (int64_t v : rest) s.push_back(v);
  return s;
}

Tensor index_impl(const Tensor& self, ArrayRef<TensorIndex> ix, const char* op) {
  std::vector<Advanced> adv;
  Tensor r = apply_basic(self, ix, &adv, false, op);
  if (adv.empty()) return r;
  const Gather g = plan_gather(r, adv, op);
  Tensor x = r.permute(g.perm).reshape(with_front(g.flat_size, g.rest));
  Dims bs = g.bshape;
  for (int64_t v : g.rest) bs.push_back(v);
  Tensor out = x.index_select(0, g.flat).reshape(bs);
  return g.at == 0 ? out : move_bdims(out, g).contiguous();
}

}  // namespace

Tensor Tensor::index(ArrayRef<TensorIndex> ix) const { return index_impl(*this, ix, "index"); }
Tensor Tensor::index(std::initializer_list<TensorIndex> ix) const {
  return index(ArrayRef<TensorIndex>(ix));
}
Tensor Tensor::operator[](const Tensor& index) const { return this->index({index}); }

Tensor& Tensor::index_put_(ArrayRef<TensorIndex> ix, const Tensor& v_in, bool accumulate) const {
  LT_CHECK(v_in.defined(), "index_put_: undefined values");
  std::vector<Advanced> adv;
  Tensor r = apply_basic(*this, ix, &adv, true, "index_put_");
  Tensor v = v_in.to(r.device(), r.dtype());
  // Writes through a view of r where autograd need not see them (it does not track writes
  // through views): basic indices, and a mask with one value (a select, no sync).
  const bool tracked = any_autograd({v}) && hook(autograd_hooks().needed, "autograd.needed")({v});
  if (!tracked) {
    if (adv.empty()) {
      if (accumulate)
        r.add_(v);
      else
        r.copy_(v);
      return const_cast<Tensor&>(*this);  // a handle: the write went to its tensor
    }
    if (adv.size() == 1 && adv[0].index.dtype() == kBool && v.numel() == 1 && v.dim() <= 1) {
      const Tensor& m = adv[0].index;
      Dims ms(r.dim(), 1);
      for (int64_t j = 0; j < m.dim(); ++j) ms[adv[0].dim + j] = m.size(j);
      Tensor mb = m.reshape(ms), v0 = v.reshape({});
      if (accumulate)
        r.add_(lt::where(mb, v0, zeros({}, r.options())));
      else
        r.copy_(lt::where(mb, v0, r));
      return const_cast<Tensor&>(*this);  // a handle: the write went to its tensor
    }
  }
  // Otherwise the positions in this tensor that index() would read, and one scatter into its
  // flattened values, written back whole (gradients reach v and the rest of this tensor).
  Tensor pos =
      index_impl(arange(numel(), options().dtype(kInt64)).reshape(sizes()), ix, "index_put_");
  LT_CHECK(broadcasts_to(v.sizes(), pos.sizes()), "index_put_: values of shape ",
           shape_str(v.sizes()), " cannot be broadcast to the indexed shape ",
           shape_str(pos.sizes()));
  Tensor pf = pos.reshape({-1}), vf = v.expand(pos.sizes()).reshape({-1});
  Tensor flat = reshape({-1});
  Tensor nx = accumulate ? flat.scatter_add(0, pf, vf) : flat.scatter(0, pf, vf);
  return copy_(nx.reshape(sizes()));
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> ix, const Tensor& v,
                           bool accumulate) const {
  return index_put_(ArrayRef<TensorIndex>(ix), v, accumulate);
}
Tensor& Tensor::index_put_(ArrayRef<TensorIndex> ix, const Scalar& v) const {
  return index_put_(ix, full({}, v, options()));
}
Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> ix, const Scalar& v) const {
  return index_put_(ArrayRef<TensorIndex>(ix), v);
}

Tensor& Tensor::operator=(const Tensor& src) && { return copy_(src); }
Tensor& Tensor::operator=(Tensor&& src) && { return copy_(src); }
Tensor& Tensor::operator=(const Scalar& v) && { return fill_(v); }

Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& v) const {
  LT_CHECK(mask.dtype() == kBool, "masked_fill: expected a bool mask, got ",
           dtype_name(mask.dtype()), " (shape ", shape_str(mask.sizes()), ")");
  LT_CHECK(v.dim() == 0, "masked_fill: the value must be a 0-d tensor, got shape ",
           shape_str(v.sizes()));
  LT_CHECK(broadcasts_to(mask.sizes(), sizes()), "masked_fill: the mask of shape ",
           shape_str(mask.sizes()), " cannot be broadcast to the tensor's shape ",
           shape_str(sizes()));
  return lt::where(mask, v.to(device(), dtype()), *this);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& v) const {
  return masked_fill(mask, full({}, v, options()));
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& v) {
  return x.masked_fill(mask, v);
}
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& v) {
  return x.masked_fill(mask, v);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& v) const {
  return copy_(masked_fill(mask, v));
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& v) const {
  return copy_(masked_fill(mask, v));
}

}  // namespace lt
