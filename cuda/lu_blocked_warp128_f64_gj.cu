// LU warp class, N = 128 (64 < n <= 128, two threads per row), double, Gauss-Jordan (kInverse, kSolve k <= 1).
#include "cuda/lu_blocked_warp.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuWarpRun<double, 128, true>(cudaStream_t, const LuArgs<double>&, LuOutput);
}  // namespace detail
}  // namespace batchla
