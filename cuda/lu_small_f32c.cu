// LU small class (cuda/lu_small.cuh): float, n in [kLuSmallRangeB+1, tuning::kLuSmallMaxN].
#include "cuda/lu_small.cuh"

namespace batchla {
namespace detail {
template BATCHLA_LU_SMALL_RANGE(float, kLuSmallRangeB+1, tuning::kLuSmallMaxN);
}  // namespace detail
}  // namespace batchla
