// The thin SVD through LAPACK's dgesdd, which OpenBLAS's library exports (Debian's libopenblas0
// ships LAPACK): the host computation behind torch::linalg's singular-value norms and svdvals.
#include <algorithm>
#include <vector>

#include "core/check.h"
#include "eager/kernels.h"

// Fortran's calling convention: arguments by address, and a hidden length for each character
// argument, appended last.
extern "C" void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda,
                        double* s, double* u, const int* ldu, double* vt, const int* ldvt,
                        double* work, const int* lwork, int* iwork, int* info, size_t jobz_len);

namespace lt {

void svd_rowmajor(const double* a, int64_t m, int64_t n, double* u, double* s, double* vh) {
  LT_CHECK(m >= 1 && n >= 1 && m <= (1 << 20) && n <= (1 << 20), "svd: a matrix of shape [", m,
           ", ", n, "] (each side in [1, 2^20])");
  // LAPACK is column-major: it sees the row-major a as a^T [n, m] = U' S V'^T, so a = V' S U'^T.
  // Its vt (V'^T, [k, m] column-major) is then our u ([m, k] row-major), and its u (U', [n, k]
  // column-major) our vh ([k, n] row-major), in the very same memory order.
  const int rows = static_cast<int>(n), cols = static_cast<int>(m);
  const int k = std::min(rows, cols);
  std::vector<double> at(a, a + m * n);  // dgesdd overwrites its input
  std::vector<int> iwork(static_cast<size_t>(8 * k));
  int info = 0, lwork = -1;
  double query = 0;
  dgesdd_("S", &rows, &cols, at.data(), &rows, s, vh, &rows, u, &k, &query, &lwork, iwork.data(),
          &info, 1);
  LT_CHECK(info == 0, "svd: LAPACK dgesdd's workspace query failed (info ", info, ")");
  lwork = static_cast<int>(query) + 1;
  std::vector<double> work(static_cast<size_t>(lwork));
  dgesdd_("S", &rows, &cols, at.data(), &rows, s, vh, &rows, u, &k, work.data(), &lwork,
          iwork.data(), &info, 1);
  LT_CHECK(info == 0, "svd: LAPACK dgesdd did not converge on a [", m, ", ", n, "] matrix (info ",
           info, ")");
}

}  // namespace lt
