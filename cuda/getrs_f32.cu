// Instantiates the getrs kernels for float (split by type so the two compile in parallel).
#include "cuda/getrs.cuh"

namespace batchla {
namespace getrs_detail {
template cudaError_t LaunchGetrsAs<float>(cudaStream_t, const float*, const int32_t*, const float*, float*, int64_t,
                                       int, int, bool, GetrsClass);
}  // namespace getrs_detail
}  // namespace batchla
