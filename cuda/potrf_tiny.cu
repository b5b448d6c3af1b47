// potrf / posv, tiny class (thread per matrix), n = 1 .. tuning::kPotrfTinyMaxN.
#include "cuda/potrf_small.cuh"

namespace batchla {
namespace detail {
static_assert(tuning::kPotrfTinyMaxN == 8, "update the instantiated range");
#define INST(T)                                                                                    \
  template cudaError_t TinyRange<T, 1, 8>(cudaStream_t, const T*, const T*, T*, int32_t*, int64_t, \
                                          int, int, int, bool);
INST(float)
INST(double)
#undef INST
}  // namespace detail
}  // namespace batchla
