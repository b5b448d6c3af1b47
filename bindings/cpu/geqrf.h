// Householder QR of ONE m x n matrix (m >= n), CPU, in place: LAPACK geqrf (reflectors of
// reflector.h, blocks of block_reflector.h) with the loops turned to rows.
// Storage: ROW-MAJOR with a row stride `ld` >= ncols, element (i, j) at i * ld + j. On exit R is
// on and above the diagonal and v_j below it (v_j(j) = 1 implied).
//
// Columns are factored in panels of kBlockReflectors: each reflector updates the rest of its
// panel at once; the panel then updates the trailing columns as one block (when BlockPays), else
// each reflector updates all remaining columns itself (small matrices, the last narrow columns).
#pragma once

#include <algorithm>
#include <cstdint>

#include "bindings/cpu/block_reflector.h"
#include "bindings/cpu/reflector.h"

namespace batchla::cpu {

// Scratch of the QR kernels: `w` (ncols, for one reflector's C^T v) and the block buffers.
template <typename T>
struct HouseholderScratch {
  T* w;
  BlockScratch<T> block;
};
inline int64_t HouseholderScratchLen(int64_t m, int64_t ncols) {
  return ncols + BlockScratchLen(m);
}
template <typename T>
HouseholderScratch<T> CarveHouseholderScratch(T* base, int64_t m, int64_t ncols) {
  return {base, CarveBlockScratch(base + ncols, m)};
}

// Householder QR of the first `nref` columns of the m x ncols matrix `a` (row stride ld), the
// reflectors also applied to the columns nref..ncols (lstsq factors [A | B] this way); geqrf is
// nref == ncols == n. taus: nref. Requires m >= nref.
template <typename T>
void HouseholderInPlace(T* a, int64_t ld, int64_t m, int64_t nref, int64_t ncols, T* taus,
                        const HouseholderScratch<T>& s) {
  for (int64_t j0 = 0; j0 < nref; j0 += kBlockReflectors) {
    const int64_t j1 = std::min(nref, j0 + kBlockReflectors);
    const bool blocked = BlockPays(m - j0, ncols - j1);
    const int64_t reach = blocked ? j1 : ncols;  // columns each single reflector updates
    for (int64_t j = j0; j < j1; ++j) {
      taus[j] = MakeReflector(a, ld, m, j);
      ApplyReflector(a + j * ld + j, ld, taus[j], a + j * ld + j + 1, ld, m - j, reach - j - 1, s.w);
    }
    if (blocked) {
      T* panel = a + j0 * ld + j0;
      BuildBlock(panel, ld, m - j0, j1 - j0, taus + j0, s.block);
      ApplyBlock(s.block, m - j0, j1 - j0, /*trans=*/true, panel + (j1 - j0), ld, ncols - j1);
    }
  }
}

}  // namespace batchla::cpu
