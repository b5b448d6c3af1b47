// getri (inverse from the LU factors), n = 65..128: cuda/lu_blocked_getri.cuh.
#include "cuda/lu_blocked_getri.cuh"

namespace batchla {
namespace detail {

template cudaError_t LuGetriLaunch<float>(cudaStream_t, float*, const int32_t*, int64_t, int);
template cudaError_t LuGetriLaunch<double>(cudaStream_t, double*, const int32_t*, int64_t, int);

}  // namespace detail
}  // namespace batchla
