// LU warp class (n <= 64, matrix in registers), float, LU (kFactor, kSlogdet).
#include "cuda/lu_blocked_warp.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuWarpRun<float, 64, false>(cudaStream_t, const LuArgs<float>&, LuOutput);
}  // namespace detail
}  // namespace batchla
