// Solve op(A) X = B of ONE system from an LU factorization A = P^T L U (getrf.h), CPU. In place:
// `x` holds B on entry and X on exit.
//
// Storage: ROW-MAJOR. lu is n x n as GetrfInPlace leaves it (L strictly below the diagonal with
// a unit diagonal implied, U on and above); X is n x k, row r at r * k, so every permutation
// moves whole contiguous rows and both triangular solves stream rows (trsm.h).
//   op(A) = A:   L U X = P B,            i.e. X(i, :) starts as B(perm[i], :)
//   op(A) = A^T: U^T L^T (P X) = B,      i.e. X(perm[i], :) = the solution's row i
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "bindings/cpu/blas1.h"
#include "bindings/cpu/trsm.h"

namespace batchla::cpu {

// L U X = Y in place (`x` holds Y): forward substitution with the unit lower L, then back
// substitution with U. For one right-hand side each row is a contiguous dot product with the
// solution so far, which beats trsm's row updates of length k = 1.
template <typename T>
void LuSolveInPlace(const T* lu, T* x, int64_t n, int64_t k) {
  if (k == 1) {
    for (int64_t i = 0; i < n; ++i) x[i] -= Dot(lu + i * n, x, i);
    for (int64_t i = n - 1; i >= 0; --i) {
      const T* u_i = lu + i * n;
      x[i] = (x[i] - Dot(u_i + i + 1, x + i + 1, n - i - 1)) / u_i[i];
    }
    return;
  }
  TrsmInPlace(lu, x, n, k, /*lower=*/true, /*trans=*/false, /*unit_diag=*/true);
  TrsmInPlace(lu, x, n, k, /*lower=*/false, /*trans=*/false, /*unit_diag=*/false);
}

// `work` is n * k scratch for the row permutation (which cannot be done in place by rows).
// perm[i] = original row that ends in row i (getrf's perm). A perm entry outside [0, n) (only
// possible through the raw FFI target) makes X all NaN rather than reading out of bounds.
template <typename T>
void GetrsInPlace(const T* lu, const int32_t* perm, T* x, T* work, int64_t n, int64_t k, bool trans) {
  for (int64_t i = 0; i < n; ++i) {
    if (perm[i] < 0 || perm[i] >= n) {
      Fill(x, n * k, std::numeric_limits<T>::quiet_NaN());
      return;
    }
  }
  std::copy_n(x, n * k, work);
  if (!trans) {
    for (int64_t i = 0; i < n; ++i) std::copy_n(work + perm[i] * k, k, x + i * k);
    LuSolveInPlace(lu, x, n, k);
  } else {
    TrsmInPlace(lu, work, n, k, /*lower=*/false, /*trans=*/true, /*unit_diag=*/false);
    TrsmInPlace(lu, work, n, k, /*lower=*/true, /*trans=*/true, /*unit_diag=*/true);
    for (int64_t i = 0; i < n; ++i) std::copy_n(work + i * k, k, x + perm[i] * k);
  }
}

}  // namespace batchla::cpu
