// Internal declarations shared by cuda/potrf*.cu: each size-class range is instantiated in its
// own .cu file (parallel compilation) and called from cuda/potrf.cu. Not part of launch.h.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace batchla {
namespace detail {

// Which matrix every size class factors (one flag for potrf's symmetrize and posv's lower/upper):
//   kLoadLower: the lower triangle of a (the strict upper triangle is never read);
//   kLoadUpper: the upper triangle of a, transposed (posv lower == false);
//   kLoadSym:   (a + a^T) / 2, computed on chip after the whole matrix is staged as
//               (a_ij + a_ji) / T(2) (bitwise what jnp's symmetrize_input gives).
enum LoadMode : int { kLoadLower = 0, kLoadUpper = 1, kLoadSym = 2 };

// posv == false: potrf, out = L (b, k unused). posv == true: out = X.
template <typename T, int LO, int HI>
cudaError_t TinyRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                      int n, int k, int mode, bool posv);
template <typename T, int LO, int HI>
cudaError_t SmallRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                       int n, int k, int mode, bool posv);
// wide: 2 warps per matrix, lane per row, runtime n in (kPotrfSmallMaxN, kPotrfWideMaxN].
template <typename T>
cudaError_t WideLaunch(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                       int n, int k, int mode, bool posv);
// grid (potrf only): the padded matrix in registers of a thread grid, n = 65..128.
template <typename T>
cudaError_t GridLaunch(cudaStream_t s, const T* a, T* out, int32_t* info, int64_t batch, int n, int mode);
// left (potrf only): left-looking, panels from L read back through L2, 32 < n <= kPotrfLeftMaxN.
constexpr int kPotrfLeftMaxN = 512;
template <typename T>
cudaError_t LeftLaunch(cudaStream_t s, const T* a, T* out, int32_t* info, int64_t batch, int n, int mode);
// medium: matrix in shared memory (potrf or posv); else large (potrf only).
template <typename T>
cudaError_t BlockedLaunch(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                          int64_t batch, int n, int k, int mode, bool posv, bool medium);

}  // namespace detail
}  // namespace batchla
