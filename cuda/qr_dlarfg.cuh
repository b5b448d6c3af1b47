// dlarfg's usual case in the QR classes (cuda/qr_tile.cuh, cuda/qr_panel.cuh): 1 / sqrt(s2) and the
// reciprocal of the reflector's scale, where DlarfgRange (cuda/qr_dispatch.h) holds s2 and those
// results normal. tuning.h kQrDlarfgFtz picks the .ftz float forms (common.cuh ApproxRcp).
#pragma once

#include "cuda/common.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {

template <typename T>
__device__ __forceinline__ T DlarfgRsqrt(T x) {
  return ApproxRsqrt<tuning::kQrDlarfgFtz>(x);
}
template <typename T>
__device__ __forceinline__ T DlarfgRcp(T x) {
  return ApproxRcp<tuning::kQrDlarfgFtz>(x);
}

}  // namespace detail
}  // namespace batchla
