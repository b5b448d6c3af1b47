// LU medium class (matrix in shared memory), float, fused outputs (kSolve, kInverse, kSlogdet).
#include "cuda/lu_blocked_medium.cuh"

namespace batchla {
namespace detail {
static_assert(LuMediumSmemBytes<float>(LuMediumMaxN<float>(), 1) <= kLuSmemLimit, "medium LU exceeds 227 KB");
template cudaError_t LuMediumRun<float, true>(cudaStream_t, const LuArgs<float>&, LuOutput);
}  // namespace detail
}  // namespace batchla
