// Level-1 building blocks of the CPU kernels: contiguous dot product and axpy.
// Everything accumulates in the working precision T (float or double), as LAPACK does.
#pragma once

#include <cstdint>

namespace batchla::cpu {

// sum_{p < len} x[p] * y[p] over contiguous memory. Four independent partial sums keep the
// floating-point pipelines busy without -ffast-math (and have a smaller error bound than one).
template <typename T>
inline T Dot(const T* __restrict x, const T* __restrict y, int64_t len) {
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t p = 0;
  for (; p + 4 <= len; p += 4) {
    s0 += x[p] * y[p];
    s1 += x[p + 1] * y[p + 1];
    s2 += x[p + 2] * y[p + 2];
    s3 += x[p + 3] * y[p + 3];
  }
  for (; p < len; ++p) s0 += x[p] * y[p];
  return (s0 + s1) + (s2 + s3);
}

// y[p] -= alpha * x[p] for p < len, contiguous; x and y never overlap (distinct matrix rows).
template <typename T>
inline void SubScaled(T* __restrict y, T alpha, const T* __restrict x, int64_t len) {
  for (int64_t p = 0; p < len; ++p) y[p] -= alpha * x[p];
}

// Every element of a contiguous range set to `value`.
template <typename T>
inline void Fill(T* x, int64_t len, T value) {
  for (int64_t p = 0; p < len; ++p) x[p] = value;
}

}  // namespace batchla::cpu
