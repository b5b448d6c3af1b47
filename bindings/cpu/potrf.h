// Cholesky factorization A = L L^T of ONE n x n matrix, CPU.
//
// Storage: ROW-MAJOR, element (i, j) at i * n + j. The loops think in rows of L: this is the
// row-oriented, left-looking Cholesky-Banachiewicz variant. Row i of L needs only rows 0..i-1
// of L, and every inner loop is a dot product of two contiguous row prefixes:
//   L[i][j] = (A[i][j] - <L[i][0:j], L[j][0:j]>) / L[j][j]    (j < i)
//   L[i][i] = sqrt(A[i][i] - <L[i][0:i], L[i][0:i]>)
// Only the lower triangle of `a` is read, and element (i, j) of `a` is read before (i, j) of
// `l` is written, so `a` and `l` may be the same buffer.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "bindings/cpu/blas1.h"

namespace batchla::cpu {

// Writes L in the lower triangle of `l` and zeros strictly above. Returns 0 on success, else
// the 1-based index of the first pivot that is not > 0 (NaN included), as LAPACK potrf; then
// the lower triangle of `l` (diagonal included) is NaN and its strict upper triangle 0.
template <typename T>
int32_t PotrfLower(const T* a, T* l, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T* a_i = a + i * n;
    T* l_i = l + i * n;
    for (int64_t j = 0; j < i; ++j) {
      const T* l_j = l + j * n;
      l_i[j] = (a_i[j] - Dot(l_i, l_j, j)) / l_j[j];
    }
    const T d = a_i[i] - Dot(l_i, l_i, i);
    if (!(d > T(0))) {  // also catches NaN
      for (int64_t r = 0; r < n; ++r) {
        Fill(l + r * n, r + 1, std::numeric_limits<T>::quiet_NaN());
        Fill(l + r * n + r + 1, n - r - 1, T(0));
      }
      return static_cast<int32_t>(i + 1);
    }
    l_i[i] = std::sqrt(d);
    Fill(l_i + i + 1, n - i - 1, T(0));
  }
  return 0;
}

}  // namespace batchla::cpu
