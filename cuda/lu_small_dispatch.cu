// detail::LuSmall (cuda/lu_dispatch.h): picks the instantiated size range of the small LU class;
// the kernels and the per-size switch are in cuda/lu_small.cuh, instantiated in lu_small_f{32,64}*.cu.
#include "cuda/lu_dispatch.h"
#include "cuda/lu_small.cuh"

namespace batchla {
namespace detail {

#define BATCHLA_LU_SMALL_RANGES(T)                                                      \
  extern template BATCHLA_LU_SMALL_RANGE(T, 1, kLuSmallRangeA);                         \
  extern template BATCHLA_LU_SMALL_RANGE(T, kLuSmallRangeA + 1, kLuSmallRangeB);        \
  extern template BATCHLA_LU_SMALL_RANGE(T, kLuSmallRangeB + 1, tuning::kLuSmallMaxN);
BATCHLA_LU_SMALL_RANGES(float)
BATCHLA_LU_SMALL_RANGES(double)
#undef BATCHLA_LU_SMALL_RANGES

template <typename T>
cudaError_t LuSmall(cudaStream_t stream, const LuArgs<T>& args, LuOutput out) {
  const int n = args.n;
  if (n < 1 || n > tuning::kLuSmallMaxN || args.batch < 0) return cudaErrorInvalidValue;
  if (args.batch == 0) return cudaGetLastError();  // cuda/lu.cu never calls with batch 0; nothing to do
  if (n <= kLuSmallRangeA) return LuSmallRange<T, 1, kLuSmallRangeA>(stream, args, out);
  if (n <= kLuSmallRangeB) return LuSmallRange<T, kLuSmallRangeA + 1, kLuSmallRangeB>(stream, args, out);
  return LuSmallRange<T, kLuSmallRangeB + 1, tuning::kLuSmallMaxN>(stream, args, out);
}

template cudaError_t LuSmall<float>(cudaStream_t, const LuArgs<float>&, LuOutput);
template cudaError_t LuSmall<double>(cudaStream_t, const LuArgs<double>&, LuOutput);

}  // namespace detail
}  // namespace batchla
