// Instantiates the trsm / potrs kernels for float (split by type so the two compile in parallel).
#include "cuda/trsm_kernels.cuh"

namespace batchla {
namespace trsm_detail {
template cudaError_t LaunchTriSolve<float>(cudaStream_t, const float*, const float*, float*, int64_t, int,
                                          int, SolvePlan);
}  // namespace trsm_detail
}  // namespace batchla
