// getrf, left-looking class (block per matrix, panels formed from L read back through L2):
// LuLeftMinN<T>() <= n <= kLuLeftMaxN.
#include "cuda/lu_blocked_layout.cuh"
#include "cuda/lu_blocked_left.cuh"

namespace batchla {
namespace detail {

// Size bands (bench/NOTES.md, "getrf left-looking class"), as the Cholesky left class's: up to
// n = 128 128-thread blocks (4 row passes of 32); above, 256 threads with 4 (n <= 256) or 8 row
// passes of 64. Chunks of 128-byte rows of L (f32 32, f64 16 columns). MINB: the blocks per SM
// the register budget is sized for (what shared memory allows at the band's top n).
template <typename T>
using LuLeftSmall = LuLeftCfg<T, 128, sizeof(T) == 8 ? 16 : 32>;
template <typename T>
using LuLeftBig = LuLeftCfg<T, 256, sizeof(T) == 8 ? 16 : 32>;
static_assert(LuLeftSmemBytes<double, LuLeftBig<double>>(tuning::kLuLeftMaxN) <= kLuSmemLimit, "f64 left class exceeds 227 KB");
static_assert(LuLeftSmemBytes<float, LuLeftBig<float>>(tuning::kLuLeftMaxN) <= kLuSmemLimit, "f32 left class exceeds 227 KB");

template <typename T>
size_t LuLeftSmem(int n) {
  return n <= 128 ? LuLeftSmemBytes<T, LuLeftSmall<T>>(n) : LuLeftSmemBytes<T, LuLeftBig<T>>(n);
}

// (-D overrides: benchmark variants only.)
#ifndef BATCHLA_LU_LEFT_MINB_SMALL
#define BATCHLA_LU_LEFT_MINB_SMALL 4
#endif
#ifndef BATCHLA_LU_LEFT_MINB_MID
#define BATCHLA_LU_LEFT_MINB_MID 2
#endif

template <typename T>
cudaError_t LuLeftLaunch(cudaStream_t s, const LuArgs<T>& args) {
  const int n = args.n;
  if (n <= kLuNB || n > tuning::kLuLeftMaxN) return cudaErrorInvalidValue;
  if (n <= 128) return LuLeftLaunchCfg<T, LuLeftSmall<T>, 4, 1, BATCHLA_LU_LEFT_MINB_SMALL>(s, args);
  if (n <= 256) return LuLeftLaunchCfg<T, LuLeftBig<T>, 4, 1, BATCHLA_LU_LEFT_MINB_MID>(s, args);
  return LuLeftLaunchCfg<T, LuLeftBig<T>, 8, 2, 1>(s, args);
}

template size_t LuLeftSmem<float>(int);
template size_t LuLeftSmem<double>(int);
template cudaError_t LuLeftLaunch<float>(cudaStream_t, const LuArgs<float>&);
template cudaError_t LuLeftLaunch<double>(cudaStream_t, const LuArgs<double>&);

}  // namespace detail
}  // namespace batchla
