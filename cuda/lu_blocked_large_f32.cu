// LU large class (matrix in global memory, panel in shared memory), float.
#include "cuda/lu_blocked_large.cuh"

namespace batchla {
namespace detail {
static_assert(LuLargeSmemBytes<float>(kLuLargeMaxN) <= kLuSmemLimit, "large LU exceeds 227 KB");
template cudaError_t LuLargeLaunch<float>(cudaStream_t, const LuArgs<float>&);
}  // namespace detail
}  // namespace batchla
