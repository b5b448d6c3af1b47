// Host entry points LaunchPotrf / LaunchPosv / PotrfMaxN / PosvMaxFusedN (launch.h): pick the size class
// (thresholds in cuda/tuning.h) and call the kernels instantiated in cuda/potrf_*.cu.
#include "cuda/launch.h"
#include "cuda/common.cuh"
#include "cuda/potrf_dispatch.h"
#include "cuda/tuning.h"

namespace batchla {
namespace {

template <typename T>
constexpr int SmemMaxN() {
  return sizeof(T) == 8 ? tuning::kSmemMaxNF64 : tuning::kSmemMaxNF32;
}
template <typename T>
constexpr int PotrfMediumMaxN() {
  return sizeof(T) == 8 ? tuning::kPotrfMediumMaxNF64 : tuning::kPotrfMediumMaxNF32;
}
template <typename T>
constexpr int PotrfLeftMinN() {
  return sizeof(T) == 8 ? tuning::kPotrfLeftMinNF64 : tuning::kPotrfLeftMinNF32;
}
template <typename T>
constexpr int PotrfGridMaxN() {
  return sizeof(T) == 8 ? tuning::kPotrfGridMaxNF64 : tuning::kPotrfGridMaxNF32;
}
// The large class keeps a 32 x n panel in shared memory: n <= 1024 (float32), 768 (float64).
template <typename T>
constexpr int LargeMaxN() {
  return sizeof(T) == 8 ? 768 : 1024;
}

template <typename T>
cudaError_t Dispatch(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                     int n, int k, int mode, bool posv) {
  using namespace detail;
  if (n < 0 || batch < 0 || k < 0) return cudaErrorInvalidValue;
  if (posv && n > SmemMaxN<T>()) return cudaErrorInvalidValue;
  if (!posv && n > LargeMaxN<T>()) return cudaErrorInvalidValue;
  if (batch == 0) return cudaGetLastError();
  if (n == 0) {  // nothing to factor: info = 0
    cudaMemsetAsync(info, 0, sizeof(int32_t) * batch, s);
    return cudaGetLastError();
  }
  if (n <= tuning::kPotrfTinyMaxN) return TinyRange<T, 1, 8>(s, a, b, out, info, batch, n, k, mode, posv);
  if (n <= 20) return SmallRange<T, 9, 20>(s, a, b, out, info, batch, n, k, mode, posv);
  if (n <= tuning::kPotrfSmallMaxN)
    return SmallRange<T, 21, 32>(s, a, b, out, info, batch, n, k, mode, posv);
  if (n <= tuning::kPotrfWideMaxN) return WideLaunch<T>(s, a, b, out, info, batch, n, k, mode, posv);
  if (!posv && n >= PotrfLeftMinN<T>() && n <= kPotrfLeftMaxN)
    return LeftLaunch<T>(s, a, out, info, batch, n, mode);
  if (!posv && n >= tuning::kPotrfGridMinN && n <= PotrfGridMaxN<T>())
    return GridLaunch<T>(s, a, out, info, batch, n, mode);
  const bool medium = posv || n <= PotrfMediumMaxN<T>();
  return BlockedLaunch<T>(s, a, b, out, info, batch, n, k, mode, posv, medium);
}

}  // namespace

template <typename T>
cudaError_t LaunchPotrf(cudaStream_t stream, const T* a, T* l, int32_t* info, int64_t batch, int n,
                        bool symmetrize) {
  // symmetrize: every size class forms (a_ij + a_ji) / 2 on its load (no pre-pass).
  return Dispatch<T>(stream, a, nullptr, l, info, batch, n, 0,
                     symmetrize ? detail::kLoadSym : detail::kLoadLower, false);
}
template <typename T>
cudaError_t LaunchPosv(cudaStream_t stream, const T* a, const T* b, T* x, int32_t* info,
                       int64_t batch, int n, int k, bool lower) {
  return Dispatch<T>(stream, a, b, x, info, batch, n, k, lower ? detail::kLoadLower : detail::kLoadUpper, true);
}
template <typename T>
int PosvMaxFusedN() {
  return SmemMaxN<T>();
}

template cudaError_t LaunchPotrf<float>(cudaStream_t, const float*, float*, int32_t*, int64_t, int, bool);
template cudaError_t LaunchPotrf<double>(cudaStream_t, const double*, double*, int32_t*, int64_t, int, bool);
template cudaError_t LaunchPosv<float>(cudaStream_t, const float*, const float*, float*, int32_t*,
                                       int64_t, int, int, bool);
template cudaError_t LaunchPosv<double>(cudaStream_t, const double*, const double*, double*,
                                        int32_t*, int64_t, int, int, bool);
template <typename T>
int PotrfMaxN() {
  return LargeMaxN<T>();
}
template int PotrfMaxN<float>();
template int PotrfMaxN<double>();
template int PosvMaxFusedN<float>();
template int PosvMaxFusedN<double>();

}  // namespace batchla
