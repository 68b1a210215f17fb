// Eager CPU kernels. Each writes into a preallocated output (which may be a strided view, so
// in-place ops write straight into their destination). Inputs arrive already in the op's
// compute dtype unless a kernel says otherwise.
#pragma once
#include "lt/tensor.h"
#include "ops/attrs.h"
#include "ops/registry.h"

namespace lt {

// dst <- src, broadcasting src to dst's shape and converting dtype; any strides.
void copy_into(const Tensor& dst, const Tensor& src);
// t itself when contiguous, else a contiguous copy (for kernels that read row-major buffers).
Tensor dense(const Tensor& t);
void unary_kernel(OpKind op, const Tensor& x, const Tensor& out);
void binary_kernel(OpKind op, const Tensor& a, const Tensor& b, const Tensor& out);
void where_kernel(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);
void fill_kernel(const Tensor& out, double value, int64_t ivalue);

void reduce_kernel(OpKind op, const Tensor& x, IntList dims, const Tensor& out);
void arg_reduce_kernel(OpKind op, const Tensor& x, int64_t dim, const Tensor& out);

void cat_kernel(ArrayRef<Tensor> in, int64_t dim, const Tensor& out);
void pad_kernel(const Tensor& x, IntList pads, double value, const Tensor& out);

void matmul_kernel(const Tensor& a, const Tensor& b, const Tensor& out);

// A GEMM that float32 convolutions run in place of OpenBLAS where it has a kernel for the shape
// (the MLIR backend's generated kernels, chosen per shape by timing on the host): C[m, n] =
// A[m, k] B[k, n] (accumulate: C +=), row-major, contiguous. A convolution calls it from its
// threads at once, each on its own images, so a kernel runs on the calling thread.
class ConvGemm {
 public:
  virtual ~ConvGemm() = default;
  // The row length it takes for a matrix dim of n (n or more, the same for every shape): the
  // caller pads its chunks' columns, and a weight gradient's channels, to it. A padded column of
  // B is zeros and one of C is dropped; padded k (both A's columns and B's rows) is zeros.
  virtual int64_t padded(int64_t n) const = 0;
  // The depth (k) it takes for a product of depth k (k or more): a shallower one runs with k
  // padded by zero columns of A and zero rows of B.
  virtual int64_t depth(int64_t k) const = 0;
  // Whether it has a kernel for the shape.
  virtual bool has(int64_t m, int64_t n, int64_t k, bool accumulate) const = 0;
  virtual void run(int64_t m, int64_t n, int64_t k, bool accumulate, const float* a, const float* b,
                   float* c) const = 0;
};
// The column counts (images x output pixels) of the GEMMs that the convolution with these
// operands runs per chunk of images (conv2d; its gradients have the same chunks) on 1 to
// `threads` threads: what a ConvGemm needs kernels for. Per chunk of n columns, with
// p = ConvGemm::padded: conv2d runs (Og, p(n), K), its input gradient (K, p(n), depth(Og)) and its
// weight gradient, accumulating, (K, p(Og), p(n)), Og the output channels per group and K the
// column rows (input channels per group x kernel taps).
std::vector<int64_t> conv2d_chunk_columns(IntList x_sizes, IntList w_sizes, IntList out_sizes,
                                          const ConvAttrs& c, int64_t threads);

// `gemm` (optional): conv2d and its gradients run their float32 GEMMs on it where it has a
// kernel (ConvGemm above).
void conv2d_kernel(const Tensor& x, const Tensor& w, const Tensor& b, const ConvAttrs& c,
                   const Tensor& out, const ConvGemm* gemm = nullptr);
void pool2d_kernel(OpKind op, const Tensor& x, const PoolAttrs& p, const Tensor& out);
void conv2d_grad_input_kernel(const Tensor& g, const Tensor& w, const ConvAttrs& c,
                              const Tensor& out, const ConvGemm* gemm = nullptr);
void conv2d_grad_weight_kernel(const Tensor& g, const Tensor& x, const ConvAttrs& c,
                               const Tensor& out, const ConvGemm* gemm = nullptr);
// MaxPool2dGrad reads x to find each window's maximum; AvgPool2dGrad passes x undefined.
void pool2d_grad_kernel(OpKind op, const Tensor& g, const Tensor& x, const PoolAttrs& p,
                        const Tensor& out);

// Throws the kernel's out-of-range error if an index of gather/scatter_add/index_select (op)
// on x along dim is outside [0, x.size(dim)): the lazy device checks known indices at the call.
void check_index_values(OpKind op, const Tensor& x, int64_t dim, const Tensor& index);
void gather_kernel(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out);
// out (int64, x's shape): the stable sorting permutation of each slice of x along dim.
void argsort_kernel(const Tensor& x, int64_t dim, bool descending, const Tensor& out);
// x with src written at index along dim (accumulate: added). Of two plain writes to one element,
// the later in index's row-major order wins (libtorch leaves that unspecified; its CPU kernel
// does the same).
void scatter_kernel(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                    bool accumulate, const Tensor& out);
void index_select_kernel(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out);

void iota_kernel(const Tensor& out);
void random_kernel(OpKind op, uint64_t seed, uint64_t offset, int64_t low, int64_t high,
                   const Tensor& out);

// C[m, n] = op(A) op(B) + beta C through OpenBLAS, which runs single-threaded (row-major; ta/tb: A
// or B transposed, with leading dims lda, ldb, ldc), on our threads: a product is split into
// parts of at least 2^20 flops, up to one per thread of lt::run_threads() (rows of C, or columns
// when it has few rows), each a single-threaded OpenBLAS call; inside a parallel region, or under
// 2^21 flops, it runs whole here.
template <typename T>
void blas_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
               const T* b, int64_t ldb, T beta, T* c, int64_t ldc);
// C[m, n] = A[m, k] B[k, n], row-major and contiguous: blas_gemm.
void blas_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c);

// The thin SVD a = u diag(s) vh of a row-major [m, n] float64 matrix by LAPACK's dgesdd (in
// OpenBLAS): u [m, k], s [k] descending, vh [k, n], all row-major, k = min(m, n) >= 1. Throws
// if LAPACK reports no convergence.
void svd_rowmajor(const double* a, int64_t m, int64_t n, double* u, double* s, double* vh);

}  // namespace lt
