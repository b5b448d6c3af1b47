// LU warp class (n <= 64, matrix in registers), double, LU (kFactor, kSlogdet).
#include "cuda/lu_blocked_warp.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuWarpRun<double, 64, false>(cudaStream_t, const LuArgs<double>&, LuOutput);
}  // namespace detail
}  // namespace batchla
