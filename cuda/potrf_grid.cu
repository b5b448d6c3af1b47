// potrf, grid class (matrix in registers of a thread grid): padded sizes 96 and 128.
#include "cuda/potrf_grid.cuh"

namespace batchla {
namespace detail {

template <typename T>
cudaError_t GridLaunch(cudaStream_t s, const T* a, T* out, int32_t* info, int64_t batch, int n, int mode) {
  if (n <= 64 || n > 128) return cudaErrorInvalidValue;
  if (n <= 96) return GridLaunchNP<T, 96>(s, a, out, info, batch, n, mode);
  return GridLaunchNP<T, 128>(s, a, out, info, batch, n, mode);
}

template cudaError_t GridLaunch<float>(cudaStream_t, const float*, float*, int32_t*, int64_t, int, int);
template cudaError_t GridLaunch<double>(cudaStream_t, const double*, double*, int32_t*, int64_t, int, int);

}  // namespace detail
}  // namespace batchla
