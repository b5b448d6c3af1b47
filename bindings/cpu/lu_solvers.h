// The LU-based ops of ONE n x n matrix, CPU: gesv (A X = B), inverse and slogdet. Each factors a
// scratch copy of A exactly as getrf does (getrf.h), so info, pivots and hence the results agree
// with getrf + getrs. Storage: ROW-MAJOR, (i, j) at i * n + j; B and X are n x k with their k
// columns contiguous in each row.
//
// Scratch: `lu` is n * n of T, `pivots` n of int32_t (the caller keeps them thread_local).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "bindings/cpu/blas1.h"
#include "bindings/cpu/getrf.h"
#include "bindings/cpu/getrs.h"
#include "bindings/cpu/trsm.h"

namespace batchla::cpu {

// A X = B, in place: `x` holds B on entry. Returns info as GetrfInPlace; a singular A gives the
// inf/NaN of the triangular solves. The pivots are applied to B as the same sequence of row
// swaps (LAPACK laswp), which needs no scratch for B.
template <typename T>
int32_t GesvInPlace(const T* a, T* x, T* lu, int32_t* pivots, int64_t n, int64_t k) {
  std::copy_n(a, n * n, lu);
  const int32_t info = GetrfInPlace(lu, pivots, n);
  for (int64_t j = 0; j < n; ++j) {
    if (pivots[j] != j) std::swap_ranges(x + j * k, x + (j + 1) * k, x + pivots[j] * k);
  }
  LuSolveInPlace(lu, x, n, k);
  return info;
}

// inv = A^-1 = U^-1 L^-1 P. Returns info as GetrfInPlace (singular: inf/NaN in inv).
//   1. inv = L^-1 by forward substitution from I; L^-1 is unit lower triangular, so row j of it
//      is nonzero only in columns 0..j and each row update is that short.
//   2. inv = U^-1 inv by back substitution (trsm.h).
//   3. Right-multiply by P: P = P_{n-1} ... P_0 (P_j swaps rows j and pivots[j]), so the column
//      swaps are undone from the last pivot to the first, row by row to stay contiguous.
template <typename T>
int32_t InverseOf(const T* a, T* inv, T* lu, int32_t* pivots, int64_t n) {
  std::copy_n(a, n * n, lu);
  const int32_t info = GetrfInPlace(lu, pivots, n);
  for (int64_t i = 0; i < n; ++i) {
    T* y_i = inv + i * n;
    Fill(y_i, n, T(0));
    y_i[i] = T(1);
    const T* l_i = lu + i * n;
    for (int64_t j = 0; j < i; ++j) SubScaled(y_i, l_i[j], inv + j * n, j + 1);
  }
  TrsmInPlace(lu, inv, n, n, /*lower=*/false, /*trans=*/false, /*unit_diag=*/false);
  for (int64_t i = 0; i < n; ++i) {
    T* r = inv + i * n;
    for (int64_t j = n - 1; j >= 0; --j) std::swap(r[j], r[pivots[j]]);
  }
  return info;
}

// sign, log|det| of A as jnp.linalg.slogdet computes them from the LU:
// sign = (-1)^(#j: pivots[j] != j) * prod_j sign(U(j, j)), logabsdet = sum_j log|U(j, j)|. Any
// U(j, j) == 0 gives (0, -inf). A NaN on U's diagonal gives logabsdet NaN and the sign of the
// formula (NaN is neither negative nor zero), exactly as jnp. n == 0 gives (1, 0).
template <typename T>
void SlogdetOf(const T* a, T* sign, T* logabsdet, T* lu, int32_t* pivots, int64_t n) {
  std::copy_n(a, n * n, lu);
  const int32_t info = GetrfInPlace(lu, pivots, n);
  if (info != 0) {
    *sign = T(0);
    *logabsdet = -std::numeric_limits<T>::infinity();
    return;
  }
  bool negative = false;
  T log_sum = T(0);
  for (int64_t j = 0; j < n; ++j) {
    const T d = lu[j * n + j];
    negative ^= (pivots[j] != j) ^ (d < T(0));
    log_sum += std::log(std::abs(d));
  }
  *sign = negative ? T(-1) : T(1);
  *logabsdet = log_sum;
}

// det of a 2 x 2 or 3 x 3 A by jnp's closed forms (jax.numpy.linalg's _det_2x2 / _det_3x3): the
// same products and sums in the same order (the CPU module is built with -ffp-contract=off, so
// none of them becomes an FMA).
template <typename T>
T DetClosed(const T* m, int64_t n) {
  if (n == 2) return m[0] * m[3] - m[1] * m[2];
  return m[0] * m[4] * m[8] + m[1] * m[5] * m[6] + m[2] * m[3] * m[7] - m[2] * m[4] * m[6] -
         m[0] * m[5] * m[7] - m[1] * m[3] * m[8];
}

}  // namespace batchla::cpu
