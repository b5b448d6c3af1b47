// x = Q^T c or Q c with Q = H_0 ... H_{k-1} (m x m) from geqrf's reflectors (LAPACK ormqr, left
// side), of ONE system, CPU, in place: `x` (m x p) holds c on entry. Storage: ROW-MAJOR; the
// reflectors are below the diagonal of the first k columns of `a` (m x n, row stride n).
//
// Q^T c = H_{k-1} ... H_0 c applies H_0 first; Q c = H_0 ... H_{k-1} c applies H_{k-1} first
// (every H_j is symmetric). Reflectors go in panels of kBlockReflectors, each applied as one
// block where BlockPays, else one by one; H_j touches rows j..m of x only.
#pragma once

#include <algorithm>
#include <cstdint>

#include "bindings/cpu/block_reflector.h"
#include "bindings/cpu/geqrf.h"
#include "bindings/cpu/reflector.h"

namespace batchla::cpu {

// taus: k (0 <= k <= n <= m); s: HouseholderScratchLen(m, p).
template <typename T>
void OrmqrInPlace(const T* a, const T* taus, T* x, int64_t m, int64_t n, int64_t k, int64_t p,
                  bool trans, const HouseholderScratch<T>& s) {
  const int64_t panels = (k + kBlockReflectors - 1) / kBlockReflectors;
  for (int64_t b = 0; b < panels; ++b) {
    const int64_t j0 = (trans ? b : panels - 1 - b) * kBlockReflectors;
    const int64_t j1 = std::min(k, j0 + kBlockReflectors);
    if (BlockPays(m - j0, p)) {
      BuildBlock(a + j0 * n + j0, n, m - j0, j1 - j0, taus + j0, s.block);
      ApplyBlock(s.block, m - j0, j1 - j0, trans, x + j0 * p, p, p);
      continue;
    }
    for (int64_t t = 0; t < j1 - j0; ++t) {
      const int64_t j = trans ? j0 + t : j1 - 1 - t;
      ApplyReflector(a + j * n + j, n, taus[j], x + j * p, p, m - j, p, s.w);
    }
  }
}

}  // namespace batchla::cpu
