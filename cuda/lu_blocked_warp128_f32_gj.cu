// LU warp class, N = 128 (64 < n <= 128, one matrix row per thread), float, Gauss-Jordan (kInverse, kSolve k <= 1).
#include "cuda/lu_blocked_warp.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuWarpRun<float, 128, true>(cudaStream_t, const LuArgs<float>&, LuOutput);
}  // namespace detail
}  // namespace batchla
