// dlarfg's usual case in the QR classes (cuda/qr_tile.cuh, cuda/qr_panel.cuh): 1 / sqrt(s2) and the
// reciprocal of the reflector's scale, where DlarfgRange (cuda/qr_dispatch.h) holds s2 and those
// results normal. tuning.h kQrDlarfgFtz picks the .ftz float forms (no denormal fix-up around
// each MUFU; common.cuh ApproxRcpNormal); doubles are .ftz either way.
#pragma once

#include "cuda/common.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {

template <typename T>
__device__ __forceinline__ T DlarfgRsqrt(T x) {
  if constexpr (tuning::kQrDlarfgFtz) return ApproxRsqrtNormal(x);
  else return ApproxRsqrt(x);
}
template <typename T>
__device__ __forceinline__ T DlarfgRcp(T x) {
  if constexpr (tuning::kQrDlarfgFtz) return ApproxRcpNormal(x);
  else return ApproxRcp(x);
}

}  // namespace detail
}  // namespace batchla
