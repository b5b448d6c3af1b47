// Fused factor + solve A X = B of ONE symmetric positive definite system, CPU. In place: `x`
// holds B on entry. Storage: ROW-MAJOR (see potrf.h, trsm.h).
//
// With `lower` only the lower triangle of `a` is read. With upper, only the upper triangle is
// read: it is first transposed into the lower triangle of the scratch (row-major U is the
// transpose of L, and A = U^T U = L L^T with L = U^T), so both cases share the row-oriented
// factorization and solves, and info is the same index LAPACK's upper posv reports.
#pragma once

#include <cstdint>
#include <limits>

#include "bindings/cpu/blas1.h"
#include "bindings/cpu/potrf.h"
#include "bindings/cpu/potrs.h"

namespace batchla::cpu {

// `work` is n * n scratch. Returns info as PotrfLower; on failure X is NaN, all of it.
template <typename T>
int32_t PosvInPlace(const T* a, T* x, T* work, int64_t n, int64_t k, bool lower) {
  const T* src = a;
  if (!lower) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) work[i * n + j] = a[j * n + i];
    src = work;
  }
  const int32_t info = PotrfLower(src, work, n);
  if (info != 0) {
    Fill(x, n * k, std::numeric_limits<T>::quiet_NaN());
    return info;
  }
  PotrsInPlace(work, x, n, k, /*lower=*/true);
  return 0;
}

}  // namespace batchla::cpu
