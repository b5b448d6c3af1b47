// Instantiates the getrs kernels for double (split by type so the two compile in parallel).
#include "cuda/getrs.cuh"

namespace batchla {
namespace getrs_detail {
template cudaError_t LaunchGetrsAs<double>(cudaStream_t, const double*, const int32_t*, const double*, double*, int64_t,
                                       int, int, bool, GetrsClass);
}  // namespace getrs_detail
}  // namespace batchla
