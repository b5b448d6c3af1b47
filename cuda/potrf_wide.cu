// potrf / posv, wide class (two warps per matrix, lane per row), n = 33 .. tuning::kPotrfWideMaxN.
#include "cuda/potrf_wide.cuh"

namespace batchla {
namespace detail {
template cudaError_t WideLaunch<float>(cudaStream_t, const float*, const float*, float*, int32_t*,
                                       int64_t, int, int, int, bool);
template cudaError_t WideLaunch<double>(cudaStream_t, const double*, const double*, double*,
                                        int32_t*, int64_t, int, int, int, bool);
}  // namespace detail
}  // namespace batchla
