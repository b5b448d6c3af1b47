// Triangular solve op(A) X = B, left side, of ONE system, CPU. In place: `x` holds B on entry
// and X on exit.
//
// Storage: ROW-MAJOR. A is n x n, element (i, j) at i * n + j; X is n x k, row r at r * k.
// The loop order is chosen per (lower, trans) so that A is always walked along its rows and the
// innermost loop is an update of a whole contiguous row of X:
//   op(A) = A   ("row" form)    X[i,:] = (B[i,:] - sum_j A[i][j] X[j,:]) / A[i][i]
//   op(A) = A^T ("column" form) X[j,:] /= A[j][j];  X[i,:] -= A[j][i] X[j,:] for the rows i
//                               that column j of A^T (= row j of A) still touches.
// Only the `lower` (or upper) triangle of A is read; with `unit_diag` its diagonal is not read
// either. A zero pivot gives inf/NaN in X (IEEE), as LAPACK trsm does.
#pragma once

#include <cstdint>

#include "bindings/cpu/blas1.h"

namespace batchla::cpu {

template <typename T>
void TrsmInPlace(const T* a, T* x, int64_t n, int64_t k, bool lower, bool trans, bool unit_diag) {
  auto row = [&](int64_t r) { return x + r * k; };
  auto divide_row = [&](int64_t r) {
    if (unit_diag) return;
    const T d = a[r * n + r];
    T* xr = row(r);
    for (int64_t c = 0; c < k; ++c) xr[c] /= d;
  };
  if (!trans) {
    if (lower) {  // forward substitution with L: row i uses rows j < i
      for (int64_t i = 0; i < n; ++i) {
        const T* a_i = a + i * n;
        for (int64_t j = 0; j < i; ++j) SubScaled(row(i), a_i[j], row(j), k);
        divide_row(i);
      }
    } else {  // back substitution with U: row i uses rows j > i
      for (int64_t i = n - 1; i >= 0; --i) {
        const T* a_i = a + i * n;
        for (int64_t j = i + 1; j < n; ++j) SubScaled(row(i), a_i[j], row(j), k);
        divide_row(i);
      }
    }
  } else {
    if (lower) {  // L^T is upper: finish rows from the bottom, push each into the rows above
      for (int64_t j = n - 1; j >= 0; --j) {
        divide_row(j);
        const T* a_j = a + j * n;
        for (int64_t i = 0; i < j; ++i) SubScaled(row(i), a_j[i], row(j), k);
      }
    } else {  // U^T is lower: finish rows from the top, push each into the rows below
      for (int64_t j = 0; j < n; ++j) {
        divide_row(j);
        const T* a_j = a + j * n;
        for (int64_t i = j + 1; i < n; ++i) SubScaled(row(i), a_j[i], row(j), k);
      }
    }
  }
}

}  // namespace batchla::cpu
