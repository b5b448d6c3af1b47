// potrf, left-looking class (block per matrix, panels from L read back through L2): n <= 512.
#include <type_traits>

#include "cuda/potrf_left.cuh"

#ifndef BATCHLA_LEFT_M_KC_SMALL
#define BATCHLA_LEFT_M_KC_SMALL 0
#endif

namespace batchla {
namespace detail {

// bands: n <= 128 (128 threads, 4 row passes of 32, half-width chunks), <= 256 and <= 512 (256 threads)
template <typename T>
using LeftSmall = LeftCfg<T, 128, sizeof(T) == 8 ? 8 : 16>;
template <typename T>
using LeftBig = LeftCfg<T, 256, sizeof(T) == 8 ? 16 : 32>;
#ifndef BATCHLA_LEFT_S_MINB_F32
#define BATCHLA_LEFT_S_MINB_F32 5
#endif
#ifndef BATCHLA_LEFT_S_MINB_F64
#define BATCHLA_LEFT_S_MINB_F64 4
#endif
#ifndef BATCHLA_LEFT_M_MINB
#define BATCHLA_LEFT_M_MINB 2
#endif
template <typename T>
using LeftMid = std::conditional_t<BATCHLA_LEFT_M_KC_SMALL + 0 != 0, LeftCfg<T, 256, sizeof(T) == 8 ? 8 : 16>, LeftBig<T>>;
static_assert(LeftSmemBytes<double, LeftBig<double>>(512) <= 232448, "left-looking f64 n = 512 exceeds 227 KB");
static_assert(LeftSmemBytes<float, LeftBig<float>>(512) <= 232448, "left-looking f32 n = 512 exceeds 227 KB");

template <typename T>
cudaError_t LeftLaunch(cudaStream_t s, const T* a, T* out, int32_t* info, int64_t batch, int n, int mode) {
  if (n <= kNB || n > kPotrfLeftMaxN) return cudaErrorInvalidValue;
#ifdef BATCHLA_LEFT_SMALL_V1
  if (n <= 128) return LeftLaunchCfg<T, LeftBig<T>, 2, sizeof(T) == 8 ? 2 : 3>(s, a, out, info, batch, n, mode);
#endif
  if (n <= 128)
    return LeftLaunchCfg<T, LeftSmall<T>, 4, sizeof(T) == 8 ? BATCHLA_LEFT_S_MINB_F64 : BATCHLA_LEFT_S_MINB_F32>(
        s, a, out, info, batch, n, mode);
#ifdef BATCHLA_LEFT_M512
  if (n <= 256) return LeftLaunchCfg<T, LeftCfg<T, 512, sizeof(T) == 8 ? 16 : 32>, 2, BATCHLA_LEFT_M512>(s, a, out, info, batch, n, mode);
#endif
  if (n <= 256) return LeftLaunchCfg<T, LeftMid<T>, 4, BATCHLA_LEFT_M_MINB>(s, a, out, info, batch, n, mode);
#ifdef BATCHLA_LEFT_L512
  return LeftLaunchCfg<T, LeftCfg<T, 512, sizeof(T) == 8 ? 16 : 32>, 4, 1>(s, a, out, info, batch, n, mode);
#endif
  return LeftLaunchCfg<T, LeftBig<T>, 8, 1>(s, a, out, info, batch, n, mode);
}

template cudaError_t LeftLaunch<float>(cudaStream_t, const float*, float*, int32_t*, int64_t, int, int);
template cudaError_t LeftLaunch<double>(cudaStream_t, const double*, double*, int32_t*, int64_t, int, int);

}  // namespace detail
}  // namespace batchla
