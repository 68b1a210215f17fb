// unique and unique_consecutive: a data-dependent number of results, so on the lazy device each
// is a documented sync point (masked_select's: one DataDependentSync). Runs start where an element
// differs from the one before it (after a stable sort, for unique); a run's id is the running
// count of starts; counts are a scatter_add of ones by id, and the inverse maps each element to
// its run (through the sort's permutation for unique). NaNs differ from everything, NaN
// included, so each is a run of its own.
#include <tuple>

#include "api/dispatch.h"
#include "core/check.h"
#include "core/shape.h"

namespace lt {
namespace {

struct Runs {
  Tensor values, ids, counts;  // values: the runs' first elements (slices); ids: per element
};

// Runs along dim 0 of x (slices compared whole).
Runs runs_of(const Tensor& x) {
  const int64_t n = x.size(0);
  const TensorOptions longs = TensorOptions(x.device()).dtype(kInt64);
  Tensor starts = ones({std::min<int64_t>(n, 1)}, TensorOptions(x.device()).dtype(kBool));
  if (n > 1) {
    Tensor diff = x.narrow(0, 1, n - 1) != x.narrow(0, 0, n - 1);
    if (diff.dim() > 1) {
      std::vector<int64_t> rest;
      for (int64_t d = 1; d < diff.dim(); ++d) rest.push_back(d);
      diff = diff.any(rest);
    }
    starts = cat({starts, diff}, 0);
  }
  Runs r;
  Tensor ids = cumsum(starts.to(kInt64), 0) - 1;
  Tensor first = masked_select(arange(n, longs), starts);
  r.values = x.index_select(0, first);  // the sync: how many runs there are
  r.ids = ids;
  const int64_t groups = first.size(0);
  r.counts = zeros({groups}, longs).scatter_add(0, ids, ones({n}, longs));
  return r;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& x, bool return_inverse,
                                                      bool return_counts,
                                                      std::optional<int64_t> dim) {
  OpContext ctx("unique_consecutive");
  Tensor y = dim ? movedim(x, wrap_dim(*dim, x.dim(), "unique_consecutive"), 0) : x.reshape({-1});
  Runs r = runs_of(y);
  Tensor values = dim ? movedim(r.values, 0, *dim) : r.values;
  const Tensor none = zeros({0}, TensorOptions(x.device()).dtype(kInt64));
  return {values, return_inverse ? (dim ? r.ids : r.ids.reshape(x.sizes())) : none,
          return_counts ? r.counts : none};
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted, bool return_inverse,
                                          bool return_counts) {
  OpContext ctx("unique");
  (void)sorted;  // always sorted, as PyTorch's CPU unique
  Tensor flat = x.reshape({-1});
  Tensor order = argsort(flat, 0, false, true);
  Runs r = runs_of(flat.index_select(0, order));
  const TensorOptions longs = TensorOptions(x.device()).dtype(kInt64);
  Tensor inverse = zeros({0}, longs), counts = zeros({0}, longs);
  if (return_inverse)
    inverse = zeros({flat.size(0)}, longs).scatter(0, order, r.ids).reshape(x.sizes());
  if (return_counts) counts = r.counts;
  return {r.values, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, int64_t dim, bool sorted,
                                              bool return_inverse, bool return_counts) {
  OpContext ctx("unique_dim");
  (void)sorted;  // always sorted, as PyTorch's
  const int64_t d = wrap_dim(dim, x.dim(), "unique_dim");
  Tensor y = movedim(x, d, 0);
  const int64_t n = y.size(0);
  int64_t m = 1;
  for (int64_t k = 1; k < y.dim(); ++k) m *= y.size(k);
  Tensor rows = y.reshape({n, m});
  // Slices in lexicographic order: stable sorts by each column, the last column first.
  Tensor order = arange(n, TensorOptions(x.device()).dtype(kInt64));
  for (int64_t c = rows.size(1) - 1; c >= 0; --c)
    order =
        order.index_select(0, argsort(rows.select(1, c).index_select(0, order), 0, false, true));
  Runs r = runs_of(y.index_select(0, order));
  const Tensor none = zeros({0}, TensorOptions(x.device()).dtype(kInt64));
  Tensor inverse = return_inverse ? zeros({n}, none.options()).scatter(0, order, r.ids) : none;
  return {movedim(r.values, 0, d), inverse, return_counts ? r.counts : none};
}

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted, bool return_inverse,
                                            bool return_counts) {
  return unique(x, sorted, return_inverse, return_counts);
}
std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted, bool return_inverse) {
  auto [v, i, c] = unique(x, sorted, return_inverse, false);
  return {v, i};
}

std::tuple<Tensor, Tensor, Tensor> Tensor::unique_consecutive(bool return_inverse,
                                                              bool return_counts,
                                                              std::optional<int64_t> dim) const {
  return lt::unique_consecutive(*this, return_inverse, return_counts, dim);
}

}  // namespace lt
