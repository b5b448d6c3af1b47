// Q = the first n columns of H_0 ... H_{k-1} (LAPACK orgqr), of ONE m x n matrix, CPU, in place.
// Storage: ROW-MAJOR, (i, j) at i * n + j.
//
// On entry `q` holds geqrf's reflectors below the diagonal of its first k columns (the rest is
// not read). The product is accumulated backwards, as orgqr does, one panel of kBlockReflectors
// at a time from the last: the panel's block first updates the columns right of it (already
// final), then each of its reflectors updates the panel columns right of it and its own column is
// rebuilt as H_i e_i. H_i touches rows i..m only, so every reflector is read from `q` before it
// is overwritten.
#pragma once

#include <algorithm>
#include <cstdint>

#include "bindings/cpu/blas1.h"
#include "bindings/cpu/block_reflector.h"
#include "bindings/cpu/geqrf.h"
#include "bindings/cpu/reflector.h"

namespace batchla::cpu {

// taus: k (0 <= k <= n <= m); s: HouseholderScratchLen(m, n).
template <typename T>
void OrgqrInPlace(T* q, const T* taus, int64_t m, int64_t n, int64_t k, const HouseholderScratch<T>& s) {
  // Columns k..n start as those of the identity.
  for (int64_t i = 0; i < m; ++i) {
    T* row = q + i * n;
    Fill(row + k, n - k, T(0));
    if (i >= k && i < n) row[i] = T(1);
  }
  for (int64_t j0 = (k - 1) / kBlockReflectors * kBlockReflectors; k > 0 && j0 >= 0; j0 -= kBlockReflectors) {
    const int64_t j1 = std::min(k, j0 + kBlockReflectors);
    const bool blocked = BlockPays(m - j0, n - j1);
    if (blocked) {
      T* panel = q + j0 * n + j0;
      BuildBlock(panel, n, m - j0, j1 - j0, taus + j0, s.block);
      ApplyBlock(s.block, m - j0, j1 - j0, /*trans=*/false, panel + (j1 - j0), n, n - j1);
    }
    const int64_t reach = blocked ? j1 : n;
    for (int64_t i = j1 - 1; i >= j0; --i) {
      T* col = q + i * n + i;
      ApplyReflector(col, n, taus[i], col + 1, n, m - i, reach - i - 1, s.w);
      // Column i of Q is H_i e_i = e_i - tau_i v_i; zeros above the diagonal.
      for (int64_t r = 0; r < i; ++r) q[r * n + i] = T(0);
      col[0] = T(1) - taus[i];
      for (int64_t r = 1; r < m - i; ++r) col[r * n] *= -taus[i];
    }
  }
}

}  // namespace batchla::cpu
