// Instantiates the trsm / potrs kernels for double (split by type so the two compile in parallel).
#include "cuda/trsm_kernels.cuh"

namespace batchla {
namespace trsm_detail {
template cudaError_t LaunchTriSolve<double>(cudaStream_t, const double*, const double*, double*, int64_t, int,
                                          int, SolvePlan);
}  // namespace trsm_detail
}  // namespace batchla
