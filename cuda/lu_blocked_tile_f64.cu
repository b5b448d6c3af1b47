// LU tile class (one warp per matrix from shared memory; getrf, slogdet), double.
#include "cuda/lu_blocked_tile.cuh"

namespace batchla {
namespace detail {
template cudaError_t LuTileRun<double>(cudaStream_t, const LuArgs<double>&, LuOutput);
}  // namespace detail
}  // namespace batchla
