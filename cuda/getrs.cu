// LaunchGetrs (launch.h): op(A) X = B from getrf's packed lu and perm. Row-major; the kernels and
// their size classes are in cuda/getrs.cuh, instantiated in cuda/getrs_f32.cu / cuda/getrs_f64.cu.
#include "cuda/launch.h"
#include "cuda/getrs.cuh"

namespace batchla {

template <typename T>
cudaError_t LaunchGetrs(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                        int64_t batch, int n, int k, bool trans) {
  return getrs_detail::LaunchGetrsAs<T>(stream, lu, perm, b, x, batch, n, k, trans,
                                        getrs_detail::GetrsClass::kAuto);
}

template cudaError_t LaunchGetrs<float>(cudaStream_t, const float*, const int32_t*, const float*, float*,
                                        int64_t, int, int, bool);
template cudaError_t LaunchGetrs<double>(cudaStream_t, const double*, const int32_t*, const double*,
                                         double*, int64_t, int, int, bool);

}  // namespace batchla
