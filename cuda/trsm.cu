// LaunchTrsm (launch.h): op(A) X = B, left side, one sweep. Row-major; see cuda/trsm_kernels.cuh.
// op(A) = A^T is lower triangular iff A is upper, so the sweep runs forward iff lower != trans;
// op(A)(i, j) = A[j][i] when trans (the "axpy" form, which reads rows of A contiguously).
#include "cuda/launch.h"
#include "cuda/trsm.cuh"

namespace batchla {

template <typename T>
cudaError_t LaunchTrsm(cudaStream_t stream, const T* a, const T* b, T* x, int64_t batch, int n,
                       int k, bool lower, bool trans, bool unit_diag) {
  trsm_detail::SolvePlan plan{};
  plan.npasses = 1;
  plan.pass[0] = {lower != trans, trans, unit_diag};
  plan.pass[1] = plan.pass[0];
  return trsm_detail::LaunchTriSolve<T>(stream, a, b, x, batch, n, k, plan);
}

template cudaError_t LaunchTrsm<float>(cudaStream_t, const float*, const float*, float*, int64_t,
                                       int, int, bool, bool, bool);
template cudaError_t LaunchTrsm<double>(cudaStream_t, const double*, const double*, double*,
                                        int64_t, int, int, bool, bool, bool);

}  // namespace batchla
