// getrf, left-looking class (block per matrix, panels formed from L read back through L2):
// LuLeftMinN<T>() <= n <= kLuLeftMaxN.
#include "cuda/lu_blocked_layout.cuh"
#include "cuda/lu_blocked_left.cuh"

namespace batchla {
namespace detail {

// Size bands (bench/NOTES.md, "getrf left-looking class"), as the Cholesky left class's: up to
// n = 128 128-thread blocks (4 row passes of 32); above, 256 threads with 4 (n <= 256) or 8 row
// passes of 64. Chunks of 128-byte rows of L (f32 32, f64 16 columns), but 64-byte (16) for f32
// up to n = 128 with 5 blocks per SM instead of 4 (f32 n = 128 1.25 -> 1.09 ms, 112 1.47 -> 1.27;
// the same for f64, KC = 8: 0.99 -> 1.27 ms, spills). MINB: the blocks per SM the register
// budget is sized for (shared memory allows as many at the band's top n). Measured and not
// kept: 6 blocks (f32 1.12 ms), 1 block of 255 registers for n <= 256 (f32 2.38 vs 1.77 ms).
#ifndef BATCHLA_LU_LEFT_KC_SMALL_F32
#define BATCHLA_LU_LEFT_KC_SMALL_F32 16
#endif
#ifndef BATCHLA_LU_LEFT_KC_SMALL_F64
#define BATCHLA_LU_LEFT_KC_SMALL_F64 16
#endif
template <typename T>
using LuLeftSmall = LeftCfg<T, 128, sizeof(T) == 8 ? BATCHLA_LU_LEFT_KC_SMALL_F64 : BATCHLA_LU_LEFT_KC_SMALL_F32>;
template <typename T>
using LuLeftBig = LeftCfg<T, 256, sizeof(T) == 8 ? 16 : 32>;
static_assert(LuLeftSmemBytes<double, LuLeftBig<double>>(tuning::kLuLeftMaxN) <= kLuSmemLimit, "f64 left class exceeds 227 KB");
static_assert(LuLeftSmemBytes<float, LuLeftBig<float>>(tuning::kLuLeftMaxN) <= kLuSmemLimit, "f32 left class exceeds 227 KB");

template <typename T>
size_t LuLeftSmem(int n) {
  return n <= 128 ? LuLeftSmemBytes<T, LuLeftSmall<T>>(n) : LuLeftSmemBytes<T, LuLeftBig<T>>(n);
}

// (-D overrides: benchmark variants only.)
#ifndef BATCHLA_LU_LEFT_MINB_SMALL_F32
#define BATCHLA_LU_LEFT_MINB_SMALL_F32 5
#endif
#ifndef BATCHLA_LU_LEFT_MINB_SMALL_F64
#define BATCHLA_LU_LEFT_MINB_SMALL_F64 4
#endif
// f64 up to n = 96: three row passes (24 accumulators a thread instead of 32, the panel warp on 3
// rows a lane): getrf n = 72 1260 -> 1094 us, 96 950 -> 860 (bench/NOTES.md "Left class, n <= 96
// on three row passes"). Not f32: no gain measured (96: 1010 vs 1016 us), and its 3-row panel
// lost the instruction cache (1250 us at n = 96). -D BATCHLA_LU_LEFT_RQ3_MAXN=0: off (A/B).
#ifndef BATCHLA_LU_LEFT_RQ3_MAXN
#define BATCHLA_LU_LEFT_RQ3_MAXN 96
#endif
// Blocks per SM of the f64 three-pass band (A/B builds). Its shared memory allows 5 at n = 96, but at
// 5 (96 registers, 320 B of spill) slogdet n = 96 took 821 us against 744 at 4 (bench/NOTES.md).
#ifndef BATCHLA_LU_LEFT_MINB_RQ3_F64
#define BATCHLA_LU_LEFT_MINB_RQ3_F64 BATCHLA_LU_LEFT_MINB_SMALL_F64
#endif
#ifndef BATCHLA_LU_LEFT_MINB_MID
#define BATCHLA_LU_LEFT_MINB_MID 2
#endif

template <typename T>
cudaError_t LuLeftLaunch(cudaStream_t s, const LuArgs<T>& args) {
  const int n = args.n;
  if (n <= kLuNB || n > tuning::kLuLeftMaxN) return cudaErrorInvalidValue;
  constexpr int kMinbSmall = sizeof(T) == 8 ? BATCHLA_LU_LEFT_MINB_SMALL_F64 : BATCHLA_LU_LEFT_MINB_SMALL_F32;
  if constexpr (sizeof(T) == 8) {
    if (n <= BATCHLA_LU_LEFT_RQ3_MAXN) return LuLeftLaunchCfg<T, LuLeftSmall<T>, 3, 1, BATCHLA_LU_LEFT_MINB_RQ3_F64>(s, args);
  }
  if (n <= 128) return LuLeftLaunchCfg<T, LuLeftSmall<T>, 4, 1, kMinbSmall>(s, args);
  if (n <= 256) return LuLeftLaunchCfg<T, LuLeftBig<T>, 4, 1, BATCHLA_LU_LEFT_MINB_MID>(s, args);
  return LuLeftLaunchCfg<T, LuLeftBig<T>, 8, 2, 1>(s, args);
}

template size_t LuLeftSmem<float>(int);
template size_t LuLeftSmem<double>(int);
template cudaError_t LuLeftLaunch<float>(cudaStream_t, const LuArgs<float>&);
template cudaError_t LuLeftLaunch<double>(cudaStream_t, const LuArgs<double>&);

}  // namespace detail
}  // namespace batchla
