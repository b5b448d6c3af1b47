// LU warp class, N = 128 (64 < n <= 128, two threads per row), double, LU (kFactor, kSlogdet).
#include "cuda/lu_blocked_warp.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuWarpRun<double, 128, false>(cudaStream_t, const LuArgs<double>&, LuOutput);
template size_t LuWarpSmemBytes<double, 128>();
}  // namespace detail
}  // namespace batchla
