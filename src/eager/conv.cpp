// conv2d as im2col + GEMM over chunks of images per group (1x1/stride-1 convs skip im2col);
// pooling loops.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/check.h"
#include "core/parallel.h"
#include "core/storage.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"

namespace lt {
namespace {

struct ConvGeom {
  int64_t C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw;
  int64_t K() const { return C * KH * KW; }
  int64_t L() const { return OH * OW; }
};

ConvGeom geom(int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t OH, int64_t OW,
              const ConvAttrs& p) {
  return {C, H, W, KH, KW, OH, OW, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dil_h, p.dil_w};
}

// The convolutions run on chunks of images: im2col of `nb` images of one group side by side
// gives cols [K, nb L], and one GEMM per chunk and group does the work of nb per-image GEMMs
// (per-image calls left OpenMP's barriers and small GEMMs most of a small ResNet's step). A
// thread's chunk of columns fits in half of its L2 cache (the other half holds OpenBLAS's packed
// panels and the product), so that im2col writes them and the GEMM's packing reads them there:
// with chunks of 4 MB per thread the 9x expanded columns went through L3 twice, and a
// convolution's forward and backward took 10% longer (the small ResNet's 3x3 convolutions at
// 28x28 and 7x7, batch 64, AVX-512 host with 1 MB of L2 per core).
int64_t cols_budget_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return static_cast<int64_t>(l2 > 0 ? l2 : 512 * 1024) / 2;
  }();
  return bytes;
}

// Where kernel offset (kh, kw) reads: input column iw = ow * sw + off_w, in range for output
// columns [lo, hi); input row ih = oh * sh + shift, and at stride 1 in range for output rows
// [oh0, oh1). im2col and col2im share it, computed once per kernel offset (taps_of): per column
// row its divisions had cost as much as copying a 7x7 plane.
struct Tap {
  int64_t off_w, lo, hi, shift, oh0, oh1;
};
Tap tap_of(const ConvGeom& g, int64_t kh, int64_t kw) {
  Tap t;
  t.off_w = kw * g.dw - g.pw;
  t.lo = t.off_w >= 0 ? 0 : std::min(g.OW, (-t.off_w + g.sw - 1) / g.sw);
  t.hi = g.W - t.off_w <= 0 ? 0 : std::min(g.OW, (g.W - t.off_w + g.sw - 1) / g.sw);
  t.shift = kh * g.dh - g.ph;
  t.oh0 = std::clamp<int64_t>(-t.shift, 0, g.OH);
  t.oh1 = std::clamp<int64_t>(g.H - t.shift, t.oh0, g.OH);
  return t;
}

// Stride 1 with output rows as long as the input's: a column row's in-range rows are one
// contiguous run in both the image and the columns.
bool rows_run(const ConvGeom& g) { return g.sh == 1 && g.sw == 1 && g.OW == g.W; }

// Every kernel offset's tap, at kh * KW + kw.
std::vector<Tap> taps_of(const ConvGeom& g) {
  std::vector<Tap> t;
  t.reserve(static_cast<size_t>(g.KH * g.KW));
  for (int64_t kh = 0; kh < g.KH; ++kh)
    for (int64_t kw = 0; kw < g.KW; ++kw) t.push_back(tap_of(g, kh, kw));
  return t;
}

// One im2col row (channel c, kernel offset kh, kw) of one image plane x[H, W] into dst[L]:
// per output row the in-range span is a strided copy, the rest zero.
template <typename T>
void im2col_row(const T* x, const ConvGeom& g, const Tap& tap, T* dst) {
  const auto [off_w, lo, hi, shift, oh0, oh1] = tap;
  if (rows_run(g)) {
    // The in-range rows are one contiguous copy, and only their out-of-range columns (which the
    // copy filled from the neighbouring rows) are zeroed after, instead of a copy per row.
    std::fill(dst, dst + oh0 * g.OW, T(0));
    std::fill(dst + oh1 * g.OW, dst + g.OH * g.OW, T(0));
    if (hi <= lo) {
      std::fill(dst + oh0 * g.OW, dst + oh1 * g.OW, T(0));
      return;
    }
    if (oh1 > oh0) {
      std::copy(x + (oh0 + shift) * g.W + lo + off_w, x + (oh1 - 1 + shift) * g.W + hi + off_w,
                dst + oh0 * g.OW + lo);
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        T* row = dst + oh * g.OW;
        for (int64_t ow = 0; ow < lo; ++ow) row[ow] = T(0);
        for (int64_t ow = hi; ow < g.OW; ++ow) row[ow] = T(0);
      }
    }
    return;
  }
  for (int64_t oh = 0; oh < g.OH; ++oh, dst += g.OW) {
    const int64_t ih = oh * g.sh + shift;
    if (ih < 0 || ih >= g.H || hi <= lo) {
      for (int64_t ow = 0; ow < g.OW; ++ow) dst[ow] = T(0);
      continue;
    }
    const T* row = x + ih * g.W + off_w;
    for (int64_t ow = 0; ow < lo; ++ow) dst[ow] = T(0);
    for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = row[ow * g.sw];
    for (int64_t ow = hi; ow < g.OW; ++ow) dst[ow] = T(0);
  }
}

// cols[K, nb L] (rows `ld` apart) <- images n0 .. n0 + nb of group gi of x[N, Ctot, H, W].
template <typename T>
void im2col_chunk(const T* x, int64_t ctot, int64_t gi, int64_t n0, int64_t nb, const ConvGeom& g,
                  T* cols, int64_t ld) {
  const int64_t kk = g.KH * g.KW;
  const std::vector<Tap> taps = taps_of(g);
  parallel_for(g.K() * nb, 4, [&](int64_t b, int64_t e) {
    // i = r * nb + n: column row r (channel r / kk, kernel offset r % kk) of image n.
    int64_t r = b / nb, n = b % nb;
    for (int64_t i = b; i < e; ++i) {
      im2col_row(x + ((n0 + n) * ctot + gi * g.C + r / kk) * g.H * g.W, g,
                 taps[static_cast<size_t>(r % kk)], cols + r * ld + n * g.L());
      if (++n == nb) n = 0, ++r;
    }
  });
}

// x[N, Ctot, H, W] (group gi, images n0 ..) += cols[K, nb L] (rows `ld` apart) scattered back
// (im2col's adjoint).
// With stride 1 and rows as long as the input's, the in-range rows of a column row add as one
// contiguous run: its entries from the padding columns (inside the run, they would land on the
// neighbouring rows' edges) are zeroed first. `cols` is the caller's scratch.
template <typename T>
void col2im_chunk(T* cols, int64_t ld, int64_t ctot, int64_t gi, int64_t n0, int64_t nb,
                  const ConvGeom& g, T* x) {
  const bool runs = rows_run(g);
  const std::vector<Tap> taps = taps_of(g);
  parallel_for(g.C * nb, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t c = i / nb, n = i % nb;
      T* plane = x + ((n0 + n) * ctot + gi * g.C + c) * g.H * g.W;
      for (int64_t kh = 0; kh < g.KH; ++kh)
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          T* src = cols + ((c * g.KH + kh) * g.KW + kw) * ld + n * g.L();
          // The output columns whose input column is inside the image, as in im2col_row: a
          // contiguous (vectorized) add at unit stride.
          const auto [off_w, lo, hi, shift, oh0, oh1] = taps[static_cast<size_t>(kh * g.KW + kw)];
          if (runs) {
            if (oh1 == oh0 || hi <= lo) continue;
            for (int64_t oh = oh0; oh < oh1; ++oh) {
              T* r = src + oh * g.OW;
              if (oh > oh0)
                for (int64_t ow = 0; ow < lo; ++ow) r[ow] = T(0);
              if (oh + 1 < oh1)
                for (int64_t ow = hi; ow < g.OW; ++ow) r[ow] = T(0);
            }
            T* to = plane + (oh0 + shift) * g.W + lo + off_w;
            const T* from = src + oh0 * g.OW + lo;
            const int64_t len = (oh1 - 1 - oh0) * g.OW + hi - lo;
            for (int64_t j = 0; j < len; ++j) to[j] += from[j];
            continue;
          }
          for (int64_t oh = 0; oh < g.OH; ++oh) {
            const int64_t ih = oh * g.sh + shift;
            if (ih < 0 || ih >= g.H) continue;
            T* row = plane + ih * g.W + off_w;
            const T* from = src + oh * g.OW;
            if (g.sw == 1)
              for (int64_t ow = lo; ow < hi; ++ow) row[ow] += from[ow];
            else
              for (int64_t ow = lo; ow < hi; ++ow) row[ow * g.sw] += from[ow];
          }
        }
    }
  });
}

// Between a tensor y[N, O, L] (group gi's Og channels, images n0 ..) and a matrix m[Og, nb L]
// (rows `ld` apart): to_matrix gathers, else scatters.
template <typename T>
void regroup(T* y, int64_t o, int64_t gi, int64_t og, int64_t n0, int64_t nb, int64_t l, T* m,
             int64_t ld, bool to_matrix) {
  parallel_for(og * nb, 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t oc = i / nb, n = i % nb;
      T* t = y + ((n0 + n) * o + gi * og + oc) * l;
      T* v = m + oc * ld + n * l;
      if (to_matrix)
        std::copy(t, t + l, v);
      else
        std::copy(v, v + l, t);
    }
  });
}

template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, const T* b, T beta,
          T* c) {
  blas_gemm<T>(ta, tb, m, n, k, a, ta ? m : k, b, tb ? k : n, beta, c, n);
}

// A chunk's matrices have rows of up to n + kColumnSlack floats: room for a ConvGemm's columns.
constexpr int64_t kColumnSlack = 64;

// The padded columns of a chunk of n = images x L columns when its product, the ConvGemm's
// shape(padded n), runs on a kernel; 0 where OpenBLAS runs it (no ConvGemm, not float32, no
// kernel for the shape, or more columns than the chunk's matrices have room for: `cap`).
template <typename T, typename Shape>
int64_t kernel_columns(const ConvGemm* kernels, int64_t n, int64_t cap, bool accumulate,
                       const Shape& shape) {
  if constexpr (std::is_same_v<T, float>) {
    if (kernels) {
      const int64_t c = kernels->padded(n);
      const auto [m, cn, k] = shape(c);
      if (c <= cap && kernels->has(m, cn, k, accumulate)) return c;
    }
  }
  return 0;
}

// Zeroes columns [used, ld) of each of `rows` rows: the columns a kernel reads past a chunk's own
// (their products are dropped; zeros keep them finite and the runs repeatable).
template <typename T>
void zero_tail(T* m, int64_t rows, int64_t used, int64_t ld) {
  if (used < ld)
    for (int64_t r = 0; r < rows; ++r) std::fill(m + r * ld + used, m + (r + 1) * ld, T(0));
}

// C (+)= A B on the ConvGemm (float32; the caller checked kernel_columns).
template <typename T>
void kernel_gemm(const ConvGemm* kernels, int64_t m, int64_t n, int64_t k, bool accumulate,
                 const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>) kernels->run(m, n, k, accumulate, a, b, c);
}

// A 1x1 kernel with unit stride and no padding maps pixels one to one, unless the input extent
// differs from the output's (a transposed convolution's output_padding): then im2col/col2im.
bool is_direct(const ConvGeom& g) {
  return g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
         g.H == g.OH && g.W == g.OW;
}

// The images [0, N) split over the threads, f(first, end, thread) on each part: each thread
// runs im2col and GEMMs on its own images (one GEMM per chunk of images, split into parts had
// left im2col serial and the small ResNet's step 1.1x faster on 2 threads than on 1). With
// fewer images than threads, one part, whose GEMMs blas_gemm splits.
// `parts`: parts_of(N), taken once by the caller (a background compile changes run_threads).
int64_t parts_of(int64_t N) { return omp_in_parallel() ? 1 : std::min<int64_t>(run_threads(), N); }

// Part t of N images split into nt parts begins at this image.
int64_t part_begin(int64_t N, int64_t t, int64_t nt) { return N * t / nt; }

template <typename F>
void over_images(int64_t N, int64_t nt, const F& f) {
  if (nt <= 1) {
    f(int64_t{0}, N, int64_t{0});
    return;
  }
  parallel_for(nt, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) f(part_begin(N, t, nt), part_begin(N, t + 1, nt), t);
  });
}

// Images per chunk: their columns fill at most cols_budget_bytes().
int64_t part_chunk(const ConvGeom& g, int64_t n, size_t elem) {
  return std::clamp<int64_t>(
      cols_budget_bytes() / static_cast<int64_t>(elem) / std::max<int64_t>(g.K() * g.L(), 1), 1, n);
}

// f(n0, m, gi) for each chunk of at most nb images n0 .. n0 + m - 1 of [i0, i1), and each group.
template <typename F>
void each_chunk(int64_t i0, int64_t i1, int64_t nb, int64_t groups, const F& f) {
  for (int64_t n0 = i0; n0 < i1; n0 += nb)
    for (int64_t gi = 0; gi < groups; ++gi) f(n0, std::min(nb, i1 - n0), gi);
}

template <typename T>
void conv_typed(const Tensor& xin, const Tensor& win, const Tensor& bias, const ConvAttrs& p,
                const Tensor& out, const ConvGemm* kernels) {
  const int64_t groups = p.groups;
  Tensor x = dense(xin), w = dense(win);
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0);
  const ConvGeom g = geom(C / groups, x.size(2), x.size(3), w.size(2), w.size(3), out.size(2),
                          out.size(3), p);
  const int64_t Og = O / groups, L = g.L(), parts = parts_of(N);
  const T* px = static_cast<const T*>(x.raw_data_ptr());
  const T* pw = static_cast<const T*>(w.raw_data_ptr());
  T* po = static_cast<T*>(out.raw_data_ptr());
  over_images(N, parts, [&](int64_t i0, int64_t i1, int64_t) {
    if (is_direct(g)) {
      for (int64_t n = i0; n < i1; ++n)
        for (int64_t gi = 0; gi < groups; ++gi)
          gemm<T>(false, false, Og, L, g.K(), pw + gi * Og * g.K(), px + (n * C + gi * g.C) * L,
                  T(0), po + (n * O + gi * Og) * L);
      return;
    }
    const int64_t nb = part_chunk(g, i1 - i0, sizeof(T)), cap = nb * L + kColumnSlack;
    Scratch<T> cols = scratch<T>(g.K() * cap), prod = scratch<T>(Og * cap);
    each_chunk(i0, i1, nb, groups, [&](int64_t n0, int64_t m, int64_t gi) {
      const int64_t kc = kernel_columns<T>(kernels, m * L, cap, false, [&](int64_t c) {
        return std::array<int64_t, 3>{Og, c, g.K()};
      });
      const int64_t ld = kc ? kc : m * L;
      im2col_chunk(px, C, gi, n0, m, g, cols.get(), ld);
      const T* wg = pw + gi * Og * g.K();
      if (kc) {
        zero_tail(cols.get(), g.K(), m * L, ld);
        kernel_gemm<T>(kernels, Og, kc, g.K(), false, wg, cols.get(), prod.get());
      } else {
        gemm<T>(false, false, Og, m * L, g.K(), wg, cols.get(), T(0), prod.get());
      }
      regroup(po, O, gi, Og, n0, m, L, prod.get(), ld, false);
    });
  });
  if (bias.defined()) {
    Tensor b = dense(bias);
    const T* pb = static_cast<const T*>(b.raw_data_ptr());
    parallel_for(N * O, 64, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) {
        T v = pb[i % O];
        T* row = po + i * L;
        for (int64_t j = 0; j < L; ++j) row[j] += v;
      }
    });
  }
}

// dx = conv2d's adjoint in x: cols = w_g^T @ g, scattered back with col2im.
template <typename T>
void conv_grad_input_typed(const Tensor& gin, const Tensor& win, const ConvAttrs& p,
                           const Tensor& out, const ConvGemm* kernels) {
  const int64_t groups = p.groups;
  Tensor go = dense(gin), w = dense(win);
  const int64_t N = out.size(0), C = out.size(1), O = w.size(0);
  const ConvGeom g = geom(C / groups, out.size(2), out.size(3), w.size(2), w.size(3), go.size(2),
                          go.size(3), p);
  const int64_t Og = O / groups, L = g.L(), parts = parts_of(N);
  T* pg = static_cast<T*>(go.raw_data_ptr());
  const T* pw = static_cast<const T*>(w.raw_data_ptr());
  T* px = static_cast<T*>(out.raw_data_ptr());
  // The kernels take A row-major: w_g^T [K, od] per group, copied once (float32 only), od the
  // kernels' depth for Og: zero columns past Og where Og is under theirs (24 channels).
  Tensor wt;
  const int64_t od = kernels ? kernels->depth(Og) : Og;
  if (std::is_same_v<T, float> && kernels && !is_direct(g)) {
    wt = make_eager({groups, g.K(), od}, w.dtype());
    if (od > Og) fill_kernel(wt, 0, 0);
    copy_into(make_view(wt, {groups, g.K(), Og}, {g.K() * od, od, 1}, 0),
              permute_view(reshape_view(w, {groups, Og, g.K()}), {0, 2, 1}));
  }
  over_images(N, parts, [&](int64_t i0, int64_t i1, int64_t) {
    if (is_direct(g)) {
      for (int64_t n = i0; n < i1; ++n)
        for (int64_t gi = 0; gi < groups; ++gi)
          gemm<T>(true, false, g.K(), L, Og, pw + gi * Og * g.K(), pg + (n * O + gi * Og) * L, T(0),
                  px + (n * C + gi * g.C) * L);
      return;
    }
    const int64_t image = C * g.H * g.W;
    std::fill(px + i0 * image, px + i1 * image, T(0));
    const int64_t nb = part_chunk(g, i1 - i0, sizeof(T)), cap = nb * L + kColumnSlack;
    Scratch<T> cols = scratch<T>(g.K() * cap), gm = scratch<T>(od * cap);
    each_chunk(i0, i1, nb, groups, [&](int64_t n0, int64_t m, int64_t gi) {
      const int64_t kc =
          !wt.defined() ? 0 : kernel_columns<T>(kernels, m * L, cap, false, [&](int64_t c) {
            return std::array<int64_t, 3>{g.K(), c, od};
          });
      const int64_t ld = kc ? kc : m * L;
      regroup(pg, O, gi, Og, n0, m, L, gm.get(), ld, true);
      if (kc) {
        zero_tail(gm.get(), Og, m * L, ld);
        std::fill(gm.get() + Og * ld, gm.get() + od * ld, T(0));  // the depth's zero rows
        kernel_gemm<T>(kernels, g.K(), kc, od, false,
                       static_cast<const T*>(wt.raw_data_ptr()) + gi * g.K() * od, gm.get(),
                       cols.get());
      } else {
        gemm<T>(true, false, g.K(), m * L, Og, pw + gi * Og * g.K(), gm.get(), T(0), cols.get());
      }
      col2im_chunk(cols.get(), ld, C, gi, n0, m, g, px);
    });
  });
}

// g's chunk (group gi's Og channels of images n0 .., n columns) transposed: gt[j, oc] for column
// j (image j / L, pixel j % L), rows `ogp` long; the columns past Og and the rows past n, up to
// `rows`, are zeros (a weight-gradient kernel's padding).
template <typename T>
void regroup_transposed(const T* y, int64_t o, int64_t gi, int64_t og, int64_t n0, int64_t l,
                        int64_t n, int64_t rows, int64_t ogp, T* gt) {
  for (int64_t j0 = 0; j0 < n; j0 += l) {
    const int64_t img = j0 / l;
    for (int64_t oc = 0; oc < og; ++oc) {
      const T* src = y + ((n0 + img) * o + gi * og + oc) * l;
      T* dst = gt + j0 * ogp + oc;
      for (int64_t p = 0; p < l; ++p) dst[p * ogp] = src[p];
    }
  }
  if (ogp > og)
    for (int64_t j = 0; j < n; ++j) std::fill(gt + j * ogp + og, gt + (j + 1) * ogp, T(0));
  std::fill(gt + n * ogp, gt + rows * ogp, T(0));
}

// dw_g += g @ cols(x)^T over the batch: each part of the images sums into a buffer of its own
// (the first part into dw), added up at the end. On a ConvGemm kernel a chunk adds
// cols(x) [K, n] @ g^T [n, Og] into dw_g^T, with Og padded to the kernel's row length (K rows
// of cols against Og of g: the kernel's tiles want the long side as rows), transposed into dw
// after the part's last chunk.
template <typename T>
void conv_grad_weight_typed(const Tensor& gin, const Tensor& xin, const ConvAttrs& p,
                            const Tensor& out, const ConvGemm* kernels) {
  const int64_t groups = p.groups;
  Tensor go = dense(gin), x = dense(xin);
  const int64_t N = x.size(0), C = x.size(1), O = out.size(0);
  const ConvGeom g = geom(C / groups, x.size(2), x.size(3), out.size(2), out.size(3), go.size(2),
                          go.size(3), p);
  const int64_t Og = O / groups, L = g.L(), parts = parts_of(N);
  T* pg = static_cast<T*>(go.raw_data_ptr());
  const T* px = static_cast<const T*>(x.raw_data_ptr());
  T* pw = static_cast<T*>(out.raw_data_ptr());
  const int64_t size = out.numel();
  const int64_t ogp =
      std::is_same_v<T, float> && kernels && !is_direct(g) ? kernels->padded(Og) : 0;
  std::vector<T> partial(static_cast<size_t>(size * std::max<int64_t>(parts - 1, 0)));
  over_images(N, parts, [&](int64_t i0, int64_t i1, int64_t t) {
    T* dw = t == 0 ? pw : partial.data() + (t - 1) * size;
    std::fill(dw, dw + size, T(0));
    if (is_direct(g)) {
      for (int64_t n = i0; n < i1; ++n)
        for (int64_t gi = 0; gi < groups; ++gi)
          gemm<T>(false, true, Og, g.K(), L, pg + (n * O + gi * Og) * L,
                  px + (n * C + gi * g.C) * L, T(1), dw + gi * Og * g.K());
      return;
    }
    const int64_t nb = part_chunk(g, i1 - i0, sizeof(T)), cap = nb * L + kColumnSlack;
    Scratch<T> cols = scratch<T>(g.K() * cap), gm = scratch<T>(std::max(Og, ogp) * cap);
    std::vector<T> dwt;  // dw_g^T [K, ogp] per group, from the kernel's chunks
    each_chunk(i0, i1, nb, groups, [&](int64_t n0, int64_t m, int64_t gi) {
      const int64_t kc =
          ogp == 0 ? 0 : kernel_columns<T>(kernels, m * L, cap, true, [&](int64_t c) {
            return std::array<int64_t, 3>{g.K(), ogp, c};
          });
      if (kc) {
        if (dwt.empty()) dwt.assign(static_cast<size_t>(groups * g.K() * ogp), T(0));
        im2col_chunk(px, C, gi, n0, m, g, cols.get(), kc);
        zero_tail(cols.get(), g.K(), m * L, kc);
        regroup_transposed(pg, O, gi, Og, n0, L, m * L, kc, ogp, gm.get());
        kernel_gemm<T>(kernels, g.K(), ogp, kc, true, cols.get(), gm.get(),
                       dwt.data() + gi * g.K() * ogp);
        return;
      }
      regroup(pg, O, gi, Og, n0, m, L, gm.get(), m * L, true);
      im2col_chunk(px, C, gi, n0, m, g, cols.get(), m * L);
      gemm<T>(false, true, Og, g.K(), m * L, gm.get(), cols.get(), T(1), dw + gi * Og * g.K());
    });
    if (!dwt.empty())
      for (int64_t gi = 0; gi < groups; ++gi)
        for (int64_t oc = 0; oc < Og; ++oc)
          for (int64_t r = 0; r < g.K(); ++r)
            dw[(gi * Og + oc) * g.K() + r] += dwt[static_cast<size_t>((gi * g.K() + r) * ogp + oc)];
  });
  for (int64_t t = 1; t < parts; ++t) {
    const T* d = partial.data() + (t - 1) * size;
    parallel_for(size, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) pw[i] += d[i];
    });
  }
}

// One pooling window along one axis: the first input position, the step between positions and
// their count (the positions inside the input), and for avg pooling PyTorch's padded extent
// (the window clipped to the right padding, which count_include_pad divides by).
struct Window {
  int64_t first, step, count, padded;
};
inline Window window_at(int64_t o, int64_t k, int64_t s, int64_t pad, int64_t dil, int64_t n) {
  const int64_t start = o * s - pad;
  if (dil == 1) {
    const int64_t padded = std::min(start + k, n + pad) - start;
    const int64_t lo = std::max<int64_t>(start, 0), hi = std::min(start + k, n);
    return {lo, 1, std::max<int64_t>(hi - lo, 0), padded};
  }
  // max pooling only: positions start + a * dil, a in [0, k), inside [0, n)
  int64_t a0 = start < 0 ? (-start + dil - 1) / dil : 0;
  int64_t a1 = std::min(k, start < n ? (n - 1 - start) / dil + 1 : 0);
  return {start + a0 * dil, dil, std::max<int64_t>(a1 - a0, 0), k};
}

template <typename T>
T avg_divisor(const PoolAttrs& p, const Window& wh, const Window& ww) {
  if (p.divisor != 0) return static_cast<T>(p.divisor);
  return static_cast<T>(p.count_include_pad ? wh.padded * ww.padded : wh.count * ww.count);
}

template <typename T>
void pool_grad_typed(bool is_max, const Tensor& gin, const Tensor& xin, const PoolAttrs& p,
                     const Tensor& out) {
  Tensor go = dense(gin);
  Tensor x = is_max ? dense(xin) : Tensor();
  const int64_t NC = out.size(0) * out.size(1), H = out.size(2), W = out.size(3);
  const int64_t OH = go.size(2), OW = go.size(3);
  const T* pg = static_cast<const T*>(go.raw_data_ptr());
  const T* px = is_max ? static_cast<const T*>(x.raw_data_ptr()) : nullptr;
  T* po = static_cast<T*>(out.raw_data_ptr());
  std::fill(po, po + out.numel(), T(0));
  parallel_for(NC, 8, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      T* dplane = po + c * H * W;
      const T* plane = is_max ? px + c * H * W : nullptr;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Window wh = window_at(oh, p.kernel_h, p.stride_h, p.pad_h, p.dil_h, H);
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Window ww = window_at(ow, p.kernel_w, p.stride_w, p.pad_w, p.dil_w, W);
          const T gv = pg[(c * OH + oh) * OW + ow];
          if (is_max) {  // the first maximum of the window takes the gradient (as the forward)
            int64_t best = -1;
            T bv = -std::numeric_limits<T>::infinity();
            for (int64_t a = 0, i = wh.first; a < wh.count; ++a, i += wh.step)
              for (int64_t q = 0, j = ww.first; q < ww.count; ++q, j += ww.step) {
                T v = plane[i * W + j];
                if (best < 0 || v > bv || (std::isnan(v) && !std::isnan(bv))) best = i * W + j, bv = v;
              }
            if (best >= 0) dplane[best] += gv;
          } else if (wh.count > 0 && ww.count > 0) {
            const T share = gv / avg_divisor<T>(p, wh, ww);
            for (int64_t a = 0, i = wh.first; a < wh.count; ++a, ++i)
              for (int64_t q = 0, j = ww.first; q < ww.count; ++q, ++j) dplane[i * W + j] += share;
          }
        }
      }
    }
  });
}

template <typename T>
void pool_typed(bool is_max, const Tensor& xin, const PoolAttrs& p, const Tensor& out) {
  Tensor x = dense(xin);
  const int64_t NC = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  const T* px = static_cast<const T*>(x.raw_data_ptr());
  T* po = static_cast<T*>(out.raw_data_ptr());
  parallel_for(NC, 8, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const T* plane = px + c * H * W;
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Window wh = window_at(oh, p.kernel_h, p.stride_h, p.pad_h, p.dil_h, H);
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Window ww = window_at(ow, p.kernel_w, p.stride_w, p.pad_w, p.dil_w, W);
          T acc = is_max ? -std::numeric_limits<T>::infinity() : T(0);
          for (int64_t a = 0, i = wh.first; a < wh.count; ++a, i += wh.step)
            for (int64_t q = 0, j = ww.first; q < ww.count; ++q, j += ww.step) {
              T v = plane[i * W + j];
              if (is_max)
                acc = (v > acc || std::isnan(v)) ? v : acc;
              else
                acc += v;
            }
          // An avg window wholly in the padding (possible only with ceil_mode) gives 0.
          po[(c * OH + oh) * OW + ow] =
              is_max ? acc
                     : (wh.count > 0 && ww.count > 0 ? acc / avg_divisor<T>(p, wh, ww) : T(0));
        }
      }
    }
  });
}

}  // namespace

std::vector<int64_t> conv2d_chunk_columns(IntList x_sizes, IntList w_sizes, IntList out_sizes,
                                          const ConvAttrs& c, int64_t threads) {
  std::vector<int64_t> columns;
  if (x_sizes.size() != 4 || w_sizes.size() != 4 || out_sizes.size() != 4) return columns;
  const int64_t N = x_sizes[0];
  const ConvGeom g = geom(x_sizes[1] / std::max<int64_t>(c.groups, 1), x_sizes[2], x_sizes[3],
                          w_sizes[2], w_sizes[3], out_sizes[2], out_sizes[3], c);
  if (N == 0 || is_direct(g)) return columns;
  auto add = [&](int64_t images) {
    if (images > 0) columns.push_back(images * g.L());
  };
  // As over_images splits the images and each part takes its chunks (float32).
  for (int64_t parts = 1; parts <= std::min(threads, N); ++parts)
    for (int64_t t = 0; t < parts; ++t) {
      const int64_t size = part_begin(N, t + 1, parts) - part_begin(N, t, parts);
      const int64_t nb = part_chunk(g, size, sizeof(float));
      add(size >= nb ? nb : 0);
      add(size % nb);
    }
  std::sort(columns.begin(), columns.end());
  columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
  return columns;
}

void conv2d_kernel(const Tensor& x, const Tensor& w, const Tensor& b, const ConvAttrs& c,
                   const Tensor& out, const ConvGemm* gemm) {
  if (out.numel() == 0) return;
  if (x.size(1) == 0) {
    fill_kernel(out, 0, 0);
    if (b.defined()) copy_into(out, reshape_view(b, {b.numel(), 1, 1}));  // broadcast over N, H, W
    return;
  }
  LT_DISPATCH_FLOAT(x.dtype(), T, conv_typed<T>(x, w, b, c, out, gemm));
}

void pool2d_kernel(OpKind op, const Tensor& x, const PoolAttrs& p, const Tensor& out) {
  if (out.numel() == 0) return;
  LT_DISPATCH_FLOAT(x.dtype(), T, pool_typed<T>(op == OpKind::MaxPool2d, x, p, out));
}

void conv2d_grad_input_kernel(const Tensor& g, const Tensor& w, const ConvAttrs& c,
                              const Tensor& out, const ConvGemm* gemm) {
  if (out.numel() == 0) return;
  LT_DISPATCH_FLOAT(g.dtype(), T, conv_grad_input_typed<T>(g, w, c, out, gemm));
}

void conv2d_grad_weight_kernel(const Tensor& g, const Tensor& x, const ConvAttrs& c,
                               const Tensor& out, const ConvGemm* gemm) {
  if (out.numel() == 0) return;
  LT_DISPATCH_FLOAT(g.dtype(), T, conv_grad_weight_typed<T>(g, x, c, out, gemm));
}

void pool2d_grad_kernel(OpKind op, const Tensor& g, const Tensor& x, const PoolAttrs& p,
                        const Tensor& out) {
  if (out.numel() == 0) return;
  LT_DISPATCH_FLOAT(g.dtype(), T, pool_grad_typed<T>(op == OpKind::MaxPool2dGrad, g, x, p, out));
}

}  // namespace lt
