// LU tile class (one warp per matrix from shared memory; getrf, slogdet), float.
#include "cuda/lu_blocked_tile.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuTileRun<float>(cudaStream_t, const LuArgs<float>&, LuOutput);
}  // namespace detail
}  // namespace batchla
