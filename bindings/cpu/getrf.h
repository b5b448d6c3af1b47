// LU factorization with partial pivoting, PA = LU, of ONE n x n matrix, CPU, in place.
//
// Storage: ROW-MAJOR, element (i, j) at i * n + j. This is LAPACK getf2's right-looking
// elimination with the loops turned to rows: after the pivot swap at step j, every row i > j
// gets its multiplier l = a(i, j) / a(j, j) and then one contiguous update of its tail,
//   a(i, j+1:n) -= l * a(j, j+1:n),
// so the only strided access is the pivot search down column j.
//
// Pivoting is exactly getf2's (idamax): the pivot is the FIRST row r >= j, in the current
// (already swapped) row order, of largest |a(r, j)|. A NaN never beats the current maximum, so
// an all-NaN column keeps row j. An exactly zero pivot leaves that column unscaled (its entries
// below the diagonal are zero anyway), records info and the elimination goes on.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "bindings/cpu/blas1.h"

namespace batchla::cpu {

// On exit `a` holds L strictly below the diagonal (unit diagonal implied) and U on and above.
// pivots[j] = the 0-based row swapped with row j at step j (LAPACK ipiv - 1). Returns 0, or the
// 1-based index of the first exactly-zero pivot U(j, j) == 0.
template <typename T>
int32_t GetrfInPlace(T* a, int32_t* pivots, int64_t n) {
  int32_t info = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    T best = std::abs(a[j * n + j]);
    for (int64_t r = j + 1; r < n; ++r) {
      const T v = std::abs(a[r * n + j]);
      if (v > best) {
        best = v;
        p = r;
      }
    }
    pivots[j] = static_cast<int32_t>(p);
    if (p != j) std::swap_ranges(a + j * n, a + (j + 1) * n, a + p * n);

    const T* a_j = a + j * n;
    const T d = a_j[j];
    const bool zero_pivot = (d == T(0));
    if (zero_pivot && info == 0) info = static_cast<int32_t>(j + 1);
    const int64_t tail = n - j - 1;
    for (int64_t i = j + 1; i < n; ++i) {
      T* a_i = a + i * n;
      // Division, not a multiply by 1/d: correctly rounded and safe for tiny pivots.
      const T l = zero_pivot ? a_i[j] : a_i[j] / d;
      a_i[j] = l;
      // LAPACK's rank-1 update also runs after a zero pivot (it then only spreads NaN/inf).
      SubScaled(a_i + j + 1, l, a_j + j + 1, tail);
    }
  }
  return info;
}

// perm[i] = the original row that ends in row i after applying pivots[0..n) in order, so that
// (PA)(i, :) = A(perm[i], :).
inline void PermFromPivots(const int32_t* pivots, int32_t* perm, int64_t n) {
  for (int64_t i = 0; i < n; ++i) perm[i] = static_cast<int32_t>(i);
  for (int64_t j = 0; j < n; ++j) std::swap(perm[j], perm[pivots[j]]);
}

}  // namespace batchla::cpu
