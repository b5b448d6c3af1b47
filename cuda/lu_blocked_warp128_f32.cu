// LU warp class, N = 128 (64 < n <= 128, one matrix row per thread), float, LU (kFactor, kSlogdet).
#include "cuda/lu_blocked_warp.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuWarpRun<float, 128, false>(cudaStream_t, const LuArgs<float>&, LuOutput);
template size_t LuWarpSmemBytes<float, 128>();
}  // namespace detail
}  // namespace batchla
