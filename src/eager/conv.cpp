// conv2d as im2col + GEMM per image and group (1x1/stride-1 convs skip im2col); pooling loops.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/check.h"
#include "core/parallel.h"
#include "eager/kernels.h"
#include "eager/tensor_util.h"
#include "lt/ops.h"

namespace lt {
namespace {

template <typename T>
void gemm_nn(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
}

template <typename T>
void conv_typed(const Tensor& xin, const Tensor& win, const Tensor& bias, IntList p, int64_t g,
                const Tensor& out) {
  Tensor x = xin.contiguous(), w = win.contiguous();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), KH = w.size(2), KW = w.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  const int64_t sh = p[0], sw = p[1], ph = p[2], pw = p[3], dh = p[4], dw = p[5];
  const int64_t Cg = C / g, Og = O / g, K = Cg * KH * KW, L = OH * OW;
  const T* px = static_cast<const T*>(x.raw_data_ptr());
  const T* pw_ = static_cast<const T*>(w.raw_data_ptr());
  T* po = static_cast<T*>(out.raw_data_ptr());
  const bool direct = KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  std::vector<T> cols(direct ? 0 : static_cast<size_t>(K * L));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t gi = 0; gi < g; ++gi) {
      const T* xg = px + (n * C + gi * Cg) * H * W;
      const T* src = xg;
      if (!direct) {
        parallel_for(K, 16, [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            int64_t c = r / (KH * KW), kh = (r / KW) % KH, kw = r % KW;
            T* dst = cols.data() + r * L;
            for (int64_t oh = 0; oh < OH; ++oh) {
              int64_t ih = oh * sh - ph + kh * dh;
              for (int64_t ow = 0; ow < OW; ++ow) {
                int64_t iw = ow * sw - pw + kw * dw;
                dst[oh * OW + ow] = (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                        ? xg[(c * H + ih) * W + iw]
                                        : T(0);
              }
            }
          }
        });
        src = cols.data();
      }
      gemm_nn<T>(Og, L, K, pw_ + gi * Og * K, src, po + (n * O + gi * Og) * L);
    }
  }
  if (bias.defined()) {
    Tensor b = bias.contiguous();
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

template <typename T>
void pool_typed(bool is_max, const Tensor& xin, IntList p, const Tensor& out) {
  Tensor x = xin.contiguous();
  const int64_t NC = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  const int64_t kh = p[0], kw = p[1], sh = p[2], sw = p[3], ph = p[4], pw = p[5];
  const T* px = static_cast<const T*>(x.raw_data_ptr());
  T* po = static_cast<T*>(out.raw_data_ptr());
  parallel_for(NC, 8, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const T* plane = px + c * H * W;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          int64_t h0 = oh * sh - ph, w0 = ow * sw - pw;
          T acc = is_max ? -std::numeric_limits<T>::infinity() : T(0);
          for (int64_t i = std::max<int64_t>(h0, 0); i < std::min(h0 + kh, H); ++i)
            for (int64_t j = std::max<int64_t>(w0, 0); j < std::min(w0 + kw, W); ++j) {
              T v = plane[i * W + j];
              if (is_max)
                acc = (v > acc || std::isnan(v)) ? v : acc;
              else
                acc += v;
            }
          po[(c * OH + oh) * OW + ow] = is_max ? acc : acc / static_cast<T>(kh * kw);
        }
    }
  });
}

}  // namespace

void conv2d_kernel(const Tensor& x, const Tensor& w, const Tensor& b, IntList params,
                   int64_t groups, const Tensor& out) {
  if (out.numel() == 0) return;
  if (x.size(1) == 0) {
    fill_kernel(out, 0, 0);
    if (b.defined()) copy_into(out, out + b.reshape({1, -1, 1, 1}));
    return;
  }
  LT_DISPATCH_FLOAT(x.dtype(), T, conv_typed<T>(x, w, b, params, groups, out));
}

void pool2d_kernel(OpKind op, const Tensor& x, IntList params, const Tensor& out) {
  if (out.numel() == 0) return;
  LT_DISPATCH_FLOAT(x.dtype(), T, pool_typed<T>(op == OpKind::MaxPool2d, x, params, out));
}

}  // namespace lt
