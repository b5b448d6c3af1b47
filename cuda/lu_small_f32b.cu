// LU small class (cuda/lu_small.cuh): float, n in [kLuSmallRangeA+1, kLuSmallRangeB].
#include "cuda/lu_small.cuh"

namespace batchla {
namespace detail {
template BATCHLA_LU_SMALL_RANGE(float, kLuSmallRangeA+1, kLuSmallRangeB);
}  // namespace detail
}  // namespace batchla
