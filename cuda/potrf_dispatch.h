// Internal declarations shared by cuda/potrf*.cu: each size-class range is instantiated in its
// own .cu file (parallel compilation) and called from cuda/potrf.cu. Not part of launch.h.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace batchla {
namespace detail {

// posv == false: potrf, out = L (b, k, lower unused). posv == true: out = X.
template <typename T, int LO, int HI>
cudaError_t TinyRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                      int n, int k, bool lower, bool posv);
template <typename T, int LO, int HI>
cudaError_t SmallRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                       int n, int k, bool lower, bool posv);
// medium: matrix in shared memory (potrf or posv); else large (potrf only).
template <typename T>
cudaError_t BlockedLaunch(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                          int64_t batch, int n, int k, bool lower, bool posv, bool medium);

}  // namespace detail
}  // namespace batchla
