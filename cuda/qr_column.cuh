// Column class of the batched Householder QR (cuda/qr_dispatch.h): kR and kGeqrf for
// tuning::kQrColumnMinM < m <= kQrColumnMaxM (<= 128). One block per matrix, the whole matrix in
// registers: eight lanes own a column (lane g holds rows g + 8 t, t < kRS), so a warp holds four
// consecutive columns and a block of 32 ceil(n / 4) threads holds them all. Unblocked right-looking
// Householder, one reflector a step; every reduction is over the eight lanes of a column (three
// shuffle levels), and a step's only block-wide waits are two named barriers that the column's
// owner arrives at without waiting:
//   X_j  the owner has written x = column j below the diagonal, raw, to shared memory. Every
//        column c > j then takes u_c = x^T a_c from its registers (the owner's own u is ||x||^2),
//        side by side with the owner's dlarfg: d_c = v^T a_c = a_c(j) + scale u_c needs no
//        reflector.
//   P_j  the owner has written tau and scale; every column updates a_c -= tau d_c v.
// The chain a column is: update of column j + 1, its x out, its ||x||^2 (local sum + three
// levels), dlarfg, the parameters out, the next barrier (bench/NOTES.md "Column class").
// A warp leaves the loop once its four columns are done (the barriers' thread counts shrink with
// it) and stores its columns at once.
#pragma once

#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/qr_dispatch.h"
#include "cuda/qr_dlarfg.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {
namespace qr_column {

constexpr int kLanes = 8;                  // lanes a column
constexpr int kColsPerWarp = 32 / kLanes;  // columns a warp
// Shared-memory buffers of x and of the parameters, used round robin. A warp owns kColsPerWarp
// consecutive steps and arrives at their barriers without waiting; the buffer (and barrier id) of
// step j is reused at step j + kBuffers only after every thread passed a barrier of a later step
// owned by another warp, which needs kBuffers > kColsPerWarp.
constexpr int kBuffers = 8;
// Named barrier ids 1..15 (0 is __syncthreads) walked by instance: X_j is instance 2 j, P_j 2 j + 1.
// An owner arrives at 2 kColsPerWarp instances in a row without waiting; the same argument needs
// kBarrierIds > 2 kColsPerWarp.
constexpr int kBarrierIds = 15;
static_assert(kBuffers > kColsPerWarp && kBarrierIds > 2 * kColsPerWarp, "reuse distance");

template <typename T, int kRS>
struct Smem {
  T x[kBuffers][kLanes * kRS];  // x_j: rows > j of column j, zeros at rows <= j
  T param[kBuffers][2];         // tau_j, scale_j
  int unusual[kBuffers];        // dlarfg left its usual range: take the dots again with v
};

__device__ __forceinline__ void BarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void BarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ int BarrierId(int instance) { return 1 + instance % kBarrierIds; }

// Sum over the eight lanes of a column (every one of them gets it, bit-identical).
template <typename T>
__device__ __forceinline__ T ColumnSum(T v) {
  v += ShflXor(v, 1);
  v += ShflXor(v, 2);
  return v + ShflXor(v, 4);
}

// ||x|| by LAPACK dnrm2's scaling, for dlarfg outside its usual range: x = rows >= 8 s of the
// column in xb (zeros at rows <= j), summed over the eight lanes g. Every lane gets it.
template <int kRS, typename T>
__device__ __noinline__ T RescaledNorm(const T* xb, int s, int g, T ss) {
  T amax = 0;
  for (int t = s; t < kRS; ++t) amax = fmax(amax, fabs(xb[g + kLanes * t]));
  amax = fmax(amax, ShflXor(amax, 1));
  amax = fmax(amax, ShflXor(amax, 2));
  amax = fmax(amax, ShflXor(amax, 4));
  if (ss != ss || amax == T(0) || isinf(amax)) return ss != ss ? ss : amax;
  const T r = T(1) / amax;
  T sum = 0;
  for (int t = s; t < kRS; ++t) {
    const T x = xb[g + kLanes * t] * r;
    sum = fma(x, x, sum);
  }
  return amax * Scalar<T>::Sqrt(ColumnSum(sum));
}

// Step j = kLanes s + l of the factorization, by warp w (lanes g = lane % 8 of group q: column
// c = 4 w + q, rows g + 8 t in a[t]). Slots t < s hold rows < j only and take no part.
template <typename T, int kRS, int s>
__device__ __forceinline__ void Step(T (&a)[kRS], Smem<T, kRS>& sm, int j, int l, int warps, T* taus) {
  const int lane = threadIdx.x & 31, g = lane % kLanes, q = lane / kLanes;
  const int w = threadIdx.x / 32, c = kColsPerWarp * w + q;
  const int owner = j / kColsPerWarp, owner_q = j % kColsPerWarp;
  const bool own = w == owner;
  const int threads = 32 * (warps - owner);  // the warps that hold a column >= j
  T* const xb = sm.x[j % kBuffers];
  if (own) {
    if (q == owner_q) {
#pragma unroll
      for (int t = s; t < kRS; ++t) xb[g + kLanes * t] = g + kLanes * t > j ? a[t] : T(0);
    }
    __syncwarp();
    BarrierArrive(BarrierId(2 * j), threads);
  } else {
    BarrierSync(BarrierId(2 * j), threads);
  }
  // u = x^T a_c over this column's eight lanes (two chains: half the dependent FMAs).
  T u0 = 0, u1 = 0;
#pragma unroll
  for (int t = s; t < kRS; ++t) {
    const T x = xb[g + kLanes * t];
    if ((t - s) % 2 == 0) u0 = fma(x, a[t], u0);
    else u1 = fma(x, a[t], u1);
  }
  const T u = ColumnSum(u0 + u1);
  T tau, scale, beta = 0;
  bool unusual;
  if (own) {
    const int src = kLanes * owner_q;
    const T ss = ShflIdx(u, src), alpha = ShflIdx(a[s], src + l);
    unusual = !DlarfgUsual(alpha, ss, beta, tau, scale);
    if (unusual) {  // uniform over the warp; rare (tiny, huge or zero columns)
      const T xnorm = RescaledNorm<kRS>(xb, s, g, ss);  // every group takes column j's
      const bool zero = xnorm == T(0);
      beta = zero ? alpha : -copysign(hypot(alpha, xnorm), alpha);
      tau = zero ? T(0) : (beta - alpha) / beta;
      scale = zero ? T(0) : T(1) / (alpha - beta);
    }
    if (lane == 0) {
      sm.param[j % kBuffers][0] = tau, sm.param[j % kBuffers][1] = scale;
      sm.unusual[j % kBuffers] = unusual;
      if (taus) taus[j] = tau;
    }
    __syncwarp();
    BarrierArrive(BarrierId(2 * j + 1), threads);
  } else {
    BarrierSync(BarrierId(2 * j + 1), threads);
    tau = sm.param[j % kBuffers][0], scale = sm.param[j % kBuffers][1];
    unusual = sm.unusual[j % kBuffers];
  }
  // d = v^T a_c = a_c(j) + scale u (v = (1, scale x)); outside dlarfg's range x's raw products
  // may have overflowed or underflowed, so the dots are taken again with v itself.
  const T a_j = ShflIdx(a[s], kLanes * q + l);
  T d = fma(scale, u, a_j);
  if (unusual) {
    T v0 = 0;
#pragma unroll
    for (int t = s; t < kRS; ++t) v0 = fma(xb[g + kLanes * t] * scale, a[t], v0);
    d = a_j + ColumnSum(v0);
  }
  if (c > j) {  // a_c -= tau d v
    const T td = tau * d, tds = td * scale;
#pragma unroll
    for (int t = s; t < kRS; ++t) a[t] = fma(-tds, xb[g + kLanes * t], a[t]);
    if (g == l) a[s] -= td;
  } else if (c == j) {  // column j is done: beta on the diagonal, v below (x scaled)
    if (g == l) a[s] = beta;
#pragma unroll
    for (int t = s; t < kRS; ++t)
      if (g + kLanes * t > j) a[t] *= scale;
  }
}

// Every QrOutput the class takes (kR, kGeqrf); a block of 32 ceil(n / 4) threads per matrix.
template <typename T, int kRS>
__global__ void __launch_bounds__(1024, 1) FactorKernel(QrArgs<T> args, QrOutput out) {
  __shared__ Smem<T, kRS> sm;
  const int m = args.m, n = args.n, warps = (n + kColsPerWarp - 1) / kColsPerWarp;
  const int lane = threadIdx.x & 31, g = lane % kLanes;
  const int w = threadIdx.x / 32, c = kColsPerWarp * w + lane / kLanes;
  const int64_t mn = int64_t(m) * n;
  for (int64_t b = blockIdx.x; b < args.batch; b += gridDim.x) {
    T a[kRS];
    const T* src = args.a + b * mn + int64_t(g) * n + c;  // row g + 8 t at src + 8 t n
#pragma unroll
    for (int t = 0; t < kRS; ++t) a[t] = g + kLanes * t < m && c < n ? src[t * kLanes * n] : T(0);
    T* const taus = out == QrOutput::kGeqrf ? args.taus + b * n : nullptr;
    // Step j = kLanes s + l: s unrolled (the register slots it touches are static), l a loop.
    bool done = false;
    StaticFor<0, kRS>([&](auto S) {
      constexpr int s = decltype(S)::value;
#pragma unroll 1
      for (int l = 0; l < kLanes && !done; ++l) {
        const int j = kLanes * s + l;
        done = j >= n || kColsPerWarp * w + kColsPerWarp - 1 < j;  // this warp's columns are done
        if (!done) Step<T, kRS, s>(a, sm, j, l, warps, taus);
      }
    });
    if (c < n) {
      if (out == QrOutput::kR) {
        T* dst = args.r + b * int64_t(n) * n + int64_t(g) * n + c;
#pragma unroll
        for (int t = 0; t < kRS; ++t) {
          const int r = g + kLanes * t;
          if (r < n) dst[t * kLanes * n] = r <= c ? a[t] : T(0);
        }
      } else {
        T* dst = args.qr + b * mn + int64_t(g) * n + c;
#pragma unroll
        for (int t = 0; t < kRS; ++t)
          if (g + kLanes * t < m) dst[t * kLanes * n] = a[t];
      }
    }
    __syncthreads();  // the barriers and buffers are reused by the next matrix
  }
}

// Rows a lane, by height: the instances the class is built for (m padded up to 8 kRS rows).
template <typename T>
cudaError_t Launch(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  const int threads = 32 * ((args.n + kColsPerWarp - 1) / kColsPerWarp);
  if (args.m <= 96) return LaunchBlocks(FactorKernel<T, 12>, threads, 0, stream, args.batch, args, out);
  return LaunchBlocks(FactorKernel<T, 16>, threads, 0, stream, args.batch, args, out);
}

}  // namespace qr_column

template <typename T>
bool QrColumnTakes(int m, int ncols, QrOutput out) {
  return (out == QrOutput::kR || out == QrOutput::kGeqrf) && m > tuning::kQrColumnMinM.Of(sizeof(T) == 8) &&
         m <= tuning::kQrColumnMaxM && ncols <= m;
}

template <typename T>
cudaError_t QrColumn(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  return qr_column::Launch(stream, args, out);
}

}  // namespace detail
}  // namespace batchla
