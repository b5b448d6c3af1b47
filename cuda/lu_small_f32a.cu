// LU small class (cuda/lu_small.cuh): float, n in [1, kLuSmallRangeA].
#include "cuda/lu_small.cuh"

namespace batchla {
namespace detail {
template BATCHLA_LU_SMALL_RANGE(float, 1, kLuSmallRangeA);
}  // namespace detail
}  // namespace batchla
