// LU large class (matrix in global memory, panel in shared memory), double.
#include "cuda/lu_blocked_large.cuh"

namespace batchla {
namespace detail {
static_assert(LuLargeSmemBytes<double>(kLuLargeMaxN) <= kLuSmemLimit, "large LU exceeds 227 KB");
template cudaError_t LuLargeLaunch<double>(cudaStream_t, const LuArgs<double>&);
}  // namespace detail
}  // namespace batchla
