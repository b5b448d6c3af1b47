// LaunchPotrs (launch.h): A X = B from a Cholesky factor, both triangular sweeps in ONE kernel
// (y stays on-chip between them). Row-major; see cuda/trsm_kernels.cuh.
//   lower: A = L L^T:  L y = b   (forward, M = L,   dot form over rows of c)
//                      L^T x = y (backward, M = L^T, axpy form over rows of c)
//   upper: A = U^T U:  U^T y = b (forward, M = U^T, axpy form), U x = y (backward, dot form)
#include "cuda/launch.h"
#include "cuda/trsm.cuh"

namespace batchla {

template <typename T>
cudaError_t LaunchPotrs(cudaStream_t stream, const T* c, const T* b, T* x, int64_t batch, int n,
                        int k, bool lower) {
  trsm_detail::SolvePlan plan{};
  plan.npasses = 2;
  plan.pass[0] = {/*forward=*/true, /*transposed=*/!lower, /*unit_diag=*/false};
  plan.pass[1] = {/*forward=*/false, /*transposed=*/lower, /*unit_diag=*/false};
  return trsm_detail::LaunchTriSolve<T>(stream, c, b, x, batch, n, k, plan);
}

template cudaError_t LaunchPotrs<float>(cudaStream_t, const float*, const float*, float*, int64_t,
                                        int, int, bool);
template cudaError_t LaunchPotrs<double>(cudaStream_t, const double*, const double*, double*,
                                         int64_t, int, int, bool);

}  // namespace batchla
