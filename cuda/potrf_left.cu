// potrf, left-looking class (block per matrix, panels from L read back through L2): n <= 512.
#include "cuda/potrf_left.cuh"

namespace batchla {
namespace detail {

// Size bands (bench/NOTES.md, "Left-looking class"): up to n = 128 128-thread blocks (4 row passes
// of 32), so that more matrices are in flight per SM while each block's warp 0 factors a diagonal
// block; above, 256 threads with 4 (n <= 256) or 8 row passes of 64. Chunks of 128-byte rows.
// MINB: the blocks per SM the register budget is sized for (shared memory allows as many). PF
// (L2 prefetch of the panel's input before its product) where it measured faster: f32 n > 128
// (symmetrize, n = 256 / 512: 566 -> 551, 883 -> 856 us), f64 n <= 128 (372 -> 363 us); it cost
// 2 % at f32 n = 128 and 5 % at f64 n = 512.
template <typename T>
using LeftSmall = LeftCfg<T, 128, sizeof(T) == 8 ? 16 : 32>;
template <typename T>
using LeftBig = LeftCfg<T, 256, sizeof(T) == 8 ? 16 : 32>;
static_assert(LeftSmemBytes<double, LeftBig<double>>(kPotrfLeftMaxN) <= 232448, "left class f64 exceeds 227 KB");
static_assert(LeftSmemBytes<float, LeftBig<float>>(kPotrfLeftMaxN) <= 232448, "left class f32 exceeds 227 KB");

template <typename T>
cudaError_t LeftLaunch(cudaStream_t s, const T* a, T* out, int32_t* info, int64_t batch, int n, int mode) {
  if (n <= kNB || n > kPotrfLeftMaxN) return cudaErrorInvalidValue;
  constexpr bool kF64 = sizeof(T) == 8;
  if (n <= 128) return LeftLaunchCfg<T, LeftSmall<T>, 4, kF64 ? 4 : 5, kF64>(s, a, out, info, batch, n, mode);
  if (n <= 256) return LeftLaunchCfg<T, LeftBig<T>, 4, 2, !kF64>(s, a, out, info, batch, n, mode);
  return LeftLaunchCfg<T, LeftBig<T>, 8, 1, !kF64>(s, a, out, info, batch, n, mode);
}

template cudaError_t LeftLaunch<float>(cudaStream_t, const float*, float*, int32_t*, int64_t, int, int);
template cudaError_t LeftLaunch<double>(cudaStream_t, const double*, double*, int32_t*, int64_t, int, int);

}  // namespace detail
}  // namespace batchla
