// LU medium class (matrix in shared memory), double, fused outputs (kSolve, kInverse, kSlogdet).
#include "cuda/lu_blocked_medium.cuh"

namespace batchla {
namespace detail {
static_assert(LuMediumSmemBytes<double>(LuMediumMaxN<double>(), 1) <= kLuSmemLimit, "medium LU exceeds 227 KB");
template cudaError_t LuMediumRun<double, true>(cudaStream_t, const LuArgs<double>&, LuOutput);
}  // namespace detail
}  // namespace batchla
