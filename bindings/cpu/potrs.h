// Solve A X = B with a given Cholesky factor, ONE system, CPU. In place: `x` holds B on entry.
// Storage: ROW-MAJOR (see trsm.h). lower: A = L L^T, L the lower triangle of c;
// upper: A = U^T U, U the upper triangle of c. Two triangular solves, each walking c by rows.
#pragma once

#include <cstdint>

#include "bindings/cpu/trsm.h"

namespace batchla::cpu {

template <typename T>
void PotrsInPlace(const T* c, T* x, int64_t n, int64_t k, bool lower) {
  if (lower) {  // L Y = B, then L^T X = Y
    TrsmInPlace(c, x, n, k, /*lower=*/true, /*trans=*/false, /*unit_diag=*/false);
    TrsmInPlace(c, x, n, k, /*lower=*/true, /*trans=*/true, /*unit_diag=*/false);
  } else {  // U^T Y = B, then U X = Y
    TrsmInPlace(c, x, n, k, /*lower=*/false, /*trans=*/true, /*unit_diag=*/false);
    TrsmInPlace(c, x, n, k, /*lower=*/false, /*trans=*/false, /*unit_diag=*/false);
  }
}

}  // namespace batchla::cpu
