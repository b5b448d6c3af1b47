// One Householder reflector, CPU: LAPACK dlarfg's construction and dlarf's left application, for
// ROW-MAJOR storage. geqrf.h, orgqr.h and ormqr.h (directly and through block_reflector.h) build
// every QR op of the CPU module from these, so all of them share one convention:
//   alpha = A(j, j), x = A(j+1:m, j); xnorm == 0 -> tau = 0, R(j, j) = alpha; else
//   beta = -copysign(hypot(alpha, xnorm), alpha), tau = (beta - alpha) / beta,
//   v = x / (alpha - beta), R(j, j) = beta   (cuda/launch.h states the same contract).
// A reflector is read where geqrf leaves it: column j below the diagonal (v(j) = 1 implied), so
// reading v costs one strided load per row while every update is a contiguous row axpy.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "bindings/cpu/blas1.h"

namespace batchla::cpu {

// ||x||_2 of x[0], x[stride], ... (len of them) without spurious overflow or underflow: the plain
// sum of squares when it is safely in range (the common case, one pass), else a pass scaled by
// max|x|. NaN gives NaN, an inf entry gives inf.
template <typename T>
T StridedNorm2(const T* x, int64_t stride, int64_t len) {
  T ssq = 0;
  for (int64_t i = 0; i < len; ++i) ssq += x[i * stride] * x[i * stride];
  // Below this the squares of the entries may have lost bits to underflow.
  constexpr T kTiny = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
  if (std::isnan(ssq)) return ssq;
  if (ssq >= kTiny && ssq <= std::numeric_limits<T>::max()) return std::sqrt(ssq);
  T amax = 0;
  for (int64_t i = 0; i < len; ++i) amax = std::max(amax, std::abs(x[i * stride]));
  if (amax == T(0) || std::isinf(amax)) return amax;
  T scaled = 0;
  for (int64_t i = 0; i < len; ++i) {
    const T r = x[i * stride] / amax;
    scaled += r * r;
  }
  return amax * std::sqrt(scaled);
}

// Turns column j of `a` (m rows, row stride ld; rows j..m) into reflector j as dlarfg does and
// returns tau_j. Afterwards a(j, j) = R(j, j) and a(j+1:m, j) = v(j+1:m).
template <typename T>
T MakeReflector(T* a, int64_t ld, int64_t m, int64_t j) {
  T* col = a + j * ld + j;
  const T alpha = col[0];
  const T xnorm = StridedNorm2(col + ld, ld, m - j - 1);
  if (xnorm == T(0)) return T(0);  // H = I (also j == m - 1); a NaN xnorm goes on, spreading NaN
  const T beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
  const T scale = alpha - beta;
  for (int64_t i = 1; i < m - j; ++i) col[i * ld] /= scale;
  col[0] = beta;
  return (beta - alpha) / beta;
}

// C = (I - tau v v^T) C for C = rows x cols (row stride ldc), v = (1, v[vs], v[2 vs], ...) with
// v[0] not read. `w` is cols scratch. tau == 0 is H = I and leaves C untouched (as LAPACK does).
// Two passes over C's rows: w = tau C^T v accumulated by row axpys, then C(i, :) -= v(i) w.
template <typename T>
void ApplyReflector(const T* v, int64_t vs, T tau, T* c, int64_t ldc, int64_t rows, int64_t cols,
                    T* w) {
  if (tau == T(0) || rows == 0 || cols == 0) return;
  std::copy_n(c, cols, w);
  for (int64_t i = 1; i < rows; ++i) SubScaled(w, -v[i * vs], c + i * ldc, cols);
  for (int64_t p = 0; p < cols; ++p) w[p] *= tau;
  SubScaled(c, T(1), w, cols);
  for (int64_t i = 1; i < rows; ++i) SubScaled(c + i * ldc, v[i * vs], w, cols);
}

}  // namespace batchla::cpu
