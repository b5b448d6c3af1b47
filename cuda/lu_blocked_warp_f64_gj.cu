// LU warp class (n <= 64, matrix in registers), double, Gauss-Jordan (kInverse, kSolve k <= 1).
#include "cuda/lu_blocked_warp.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuWarpRun<double, 64, true>(cudaStream_t, const LuArgs<double>&, LuOutput);
}  // namespace detail
}  // namespace batchla
