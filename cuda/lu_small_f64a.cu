// LU small class (cuda/lu_small.cuh): double, n in [1, kLuSmallRangeA].
#include "cuda/lu_small.cuh"

namespace batchla {
namespace detail {
template BATCHLA_LU_SMALL_RANGE(double, 1, kLuSmallRangeA);
}  // namespace detail
}  // namespace batchla
