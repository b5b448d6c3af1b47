// dlarfg's usual case in the QR classes (cuda/qr_tile.cuh, cuda/qr_panel.cuh): 1 / sqrt(s2) and the
// reciprocal of the reflector's scale, where DlarfgRange (cuda/qr_dispatch.h) holds s2 and those
// results normal. tuning.h kQrDlarfgFtz picks the .ftz float forms (common.cuh ApproxRcp).
#pragma once

#include "cuda/common.cuh"
#include "cuda/qr_dispatch.h"
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

// dlarfg from alpha and ss = x^T x (the sum of squares below the diagonal), its usual case: beta
// = -sign(alpha) |(alpha, x)|, tau = (beta - alpha) / beta = 1 + |alpha| / |beta| and the scale of
// v = x / (alpha - beta) = sign(alpha) x / (|alpha| + |beta|), by DlarfgRsqrt / DlarfgRcp instead of
// hypot, IEEE sqrt and two divides (~1 ulp; ss = 0 leaves the column: tau = 0). Returns whether
// ss and alpha^2 + ss lie in DlarfgRange; where not, the caller takes LAPACK's form from IEEE
// operations on a rescaled ||x|| instead.
template <typename T>
__device__ __forceinline__ bool DlarfgUsual(T alpha, T ss, T& beta, T& tau, T& scale) {
  const T s2 = fma(alpha, alpha, ss);
  const T rnorm = DlarfgRsqrt(s2);
  const T norm = s2 * rnorm;
  const bool zero = ss == T(0);
  tau = zero ? T(0) : fma(fabs(alpha), rnorm, T(1));
  scale = zero ? T(0) : copysign(DlarfgRcp(fabs(alpha) + norm), alpha);
  beta = zero ? alpha : -copysign(norm, alpha);
  return ss >= DlarfgRange<T>::kLo && s2 <= DlarfgRange<T>::kHi;
}

}  // namespace detail
}  // namespace batchla
