// potrf / posv, small class (lane per row), float, n = 9 .. 20.
#include "cuda/potrf_small.cuh"

namespace batchla {
namespace detail {
static_assert(tuning::kPotrfSmallMaxN == 32, "update the instantiated ranges");
template cudaError_t SmallRange<float, 9, 20>(cudaStream_t, const float*, const float*, float*, int32_t*,
                                             int64_t, int, int, int, bool);
}  // namespace detail
}  // namespace batchla
