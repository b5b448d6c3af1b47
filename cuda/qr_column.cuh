// Column class of the batched Householder QR (cuda/qr_dispatch.h): kR and kGeqrf for
// tuning::kQrColumnMinM < m <= kQrColumnMaxM (<= 128). One block per matrix, the whole matrix in
// registers: kLanes lanes own a column (lane g holds rows g + kLanes t, t < kRS; 8 lanes, or 4 for
// float, tuning::kQrColumnLanes), so a warp holds 32 / kLanes columns (Layout) and a block of
// 32 ceil(n kLanes / 32) threads holds them all. Unblocked right-looking
// Householder, one reflector a step; every reduction is over the lanes of a column (three
// shuffle levels at 8 lanes), and a step's waits are on the column's owner only (mbarriers):
//   full_x  the owner has written x = column j below the diagonal, raw, to shared memory. Every
//           column c > j then takes u_c = x^T a_c from its registers (the owner's own u is
//           ||x||^2), side by side with the owner's dlarfg: d_c = v^T a_c = a_c(j) + scale u_c
//           needs no reflector.
//   full_p  the owner has written tau and scale; every column updates a_c -= tau d_c v.
//   empty   every warp is done with the step's buffer (the owner of the step kBuffers later
//           waits for it before writing the buffer again; it arrives for the warps that left).
// No warp waits for another consumer: the chain a column is the update of column j + 1, its x
// out, its ||x||^2 (local sum + shuffle levels), dlarfg, the parameters out, the wake-up of the
// next owner (bench/NOTES.md "Column class"). A warp leaves the loop once its columns are done
// and stores them at once.
#pragma once

#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/mbarrier.cuh"
#include "cuda/qr_dispatch.h"
#include "cuda/qr_dlarfg.cuh"
#include "cuda/qr_engine.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {
namespace qr_column {

// kLanes lanes own a column (8; 4 for a second block a SM), so a warp holds 32 / kLanes columns:
// kSets sets of four consecutive columns, set k of warp w being columns 4 w + 4 W k .. + 3 (W warps).
// The owner of a step thus owns at most four consecutive steps.
constexpr int kRun = 4;  // consecutive columns (steps) a warp owns
template <int kLanes>
struct Layout {
  static constexpr int kSets = 32 / kLanes / kRun;
  static_assert(kSets >= 1 && 32 % (kLanes * kRun) == 0, "4 or 8 lanes a column");
  int warps, n;
  __device__ __forceinline__ int Column(int w, int q) const { return kRun * w + q % kRun + kRun * warps * (q / kRun); }
  // Step j's owner: the warp holding column j, and the lane group in it. The set is j / (kRun W),
  // which is < kSets as the warps hold every column: comparisons instead of an integer division
  // by a runtime value (~25 instructions and a MUFU at the head of every step, the owner's chain).
  __device__ __forceinline__ int Set(int j) const {
    int set = 0;
#pragma unroll
    for (int k = 1; k < kSets; ++k) set += j >= kRun * warps * k;
    return set;
  }
  __device__ __forceinline__ int OwnerWarp(int j) const { return unsigned(j - kRun * warps * Set(j)) / kRun; }
  __device__ __forceinline__ int OwnerGroup(int j) const { return kRun * Set(j) + unsigned(j) % kRun; }
  // The last column (< n) that warp w holds: it takes part in the steps up to it.
  __device__ __forceinline__ int LastColumn(int w) const {
    int last = -1;
#pragma unroll
    for (int k = 0; k < kSets; ++k) {
      const int c0 = kRun * (w + warps * k);
      if (c0 < n) last = min(c0 + kRun - 1, n - 1);
    }
    return last;
  }
  // Warps that take part in step j (hold a column >= j). Set k of warp w is real for w < R_k
  // (R_0 = W); warps whose highest real set is k (R_{k+1} <= w < R_k) take part while their
  // set k holds a column >= j, i.e. for w >= (j - 4 W k) / 4.
  __device__ __forceinline__ int TakingPart(int j) const {
    int count = 0, upper = 0;  // upper = R_{k+1}
#pragma unroll
    for (int k = kSets - 1; k >= 0; --k) {
      const int base = kRun * warps * k;
      const int real = k == 0 ? warps : min(warps, max(0, (n - base + kRun - 1) / kRun));
      const int from = j > base ? (j - base) / kRun : 0;
      count += max(0, real - max(upper, from));
      upper = real;
    }
    return count;
  }
};
// How a warp waits for a step's owner (BATCHLA_QR_COLUMN_WAIT, for the A/B of bench/NOTES.md
// "Column class v2: what the waiters cost"): 0 try_wait in a loop, 1 try_wait with a suspend-time
// hint, 2 test_wait with a short sleep between polls.
#ifndef BATCHLA_QR_COLUMN_WAIT
#define BATCHLA_QR_COLUMN_WAIT 0
#endif
__device__ __forceinline__ void WaitFor(uint64_t* bar, unsigned parity) {
#if BATCHLA_QR_COLUMN_WAIT == 1
  MbarTryWaitSuspended(bar, parity);
#elif BATCHLA_QR_COLUMN_WAIT == 2
  MbarWait(bar, parity);
#else
  MbarTryWait(bar, parity);
#endif
}

// Shared-memory buffers of x and of the parameters, used round robin: buffer j % kBuffers holds
// step j's, phase j / kBuffers of its three mbarriers.
constexpr int kBuffers = 8;

template <typename T, int kLanes, int kRS>
struct Smem {
  T x[kBuffers][kLanes * kRS];  // x_j: rows > j of column j, zeros at rows <= j
  T param[kBuffers][2];         // tau_j, scale_j
  int unusual[kBuffers];        // dlarfg left its usual range: take the dots again with v
  // Every lane arrives for itself (one warp instruction), so each lane's own accesses are
  // released by its own arrival: full_x / full_p the owner warp's 32 lanes, empty 32 a warp.
  uint64_t full_x[kBuffers], full_p[kBuffers];
  uint64_t empty[kBuffers];

  __device__ void Init(int warps) {
    if (threadIdx.x == 0)
      for (int k = 0; k < kBuffers; ++k) MbarInit(&full_x[k], 32), MbarInit(&full_p[k], 32), MbarInit(&empty[k], 32 * warps);
    __syncthreads();
  }
};

// ||x|| by LAPACK dnrm2's scaling (qr_engine::WarpRescaledNorm over a column's lanes), for dlarfg
// outside its usual range: x = rows >= kLanes s of the column in xb (zeros at rows <= j). Out of
// line, so that its copy of x costs the step no registers.
template <int kLanes, int kRS, typename T>
__device__ __noinline__ T RescaledNorm(const T* xb, int s, int g, T ss) {
  T x[kRS];
#pragma unroll
  for (int t = 0; t < kRS; ++t) x[t] = t >= s ? xb[g + kLanes * t] : T(0);
  return qr_engine::WarpRescaledNorm<T, kRS, kLanes>(x, ss);
}

// Step j = kLanes s + l of the factorization, by warp w (lanes g = lane % kLanes of group q: column
// c, rows g + kLanes t in a[t]). Slots t < s hold rows < j only and take no part.
template <typename T, int kLanes, int kRS, int s>
__device__ __forceinline__ void Step(T (&a)[kRS], Smem<T, kLanes, kRS>& sm, const Layout<kLanes>& lay, int c,
                                     int j, int l, T* taus) {
  const int lane = threadIdx.x & 31, g = lane % kLanes, q = lane / kLanes, w = threadIdx.x / 32;
  const int owner_q = lay.OwnerGroup(j);
  const bool own = w == lay.OwnerWarp(j);
  const int buf = j % kBuffers;
  const unsigned parity = (j / kBuffers) & 1;
  T* const xb = sm.x[buf];
  if (own) {
    if (j >= kBuffers) WaitFor(&sm.empty[buf], parity ^ 1);  // step j - kBuffers is read
    if (q == owner_q) {
#pragma unroll
      for (int t = s; t < kRS; ++t) xb[g + kLanes * t] = g + kLanes * t > j ? a[t] : T(0);
    }
    __syncwarp();  // the owner's other lanes read x too
    MbarArrive(&sm.full_x[buf]);
    if (lane == 0) {
      const int left = lay.warps - lay.TakingPart(j);  // warps past their columns: no arrival
      if (left > 0) MbarArriveCount(&sm.empty[buf], 32 * left);
    }
  } else {
    WaitFor(&sm.full_x[buf], parity);
  }
  // u = x^T a_c over this column's lanes (two chains: half the dependent FMAs).
  T u0 = 0, u1 = 0;
#pragma unroll
  for (int t = s; t < kRS; ++t) {
    const T x = xb[g + kLanes * t];
    if ((t - s) % 2 == 0) u0 = fma(x, a[t], u0);
    else u1 = fma(x, a[t], u1);
  }
  const T u = LanesSum<kLanes>(u0 + u1);
  T tau, scale, beta = 0;
  bool unusual;
  if (own) {
    const int src = kLanes * owner_q;
    const T ss = ShflIdx(u, src), alpha = ShflIdx(a[s], src + l);
    unusual = !DlarfgUsual(alpha, ss, beta, tau, scale);
    if (unusual) {  // uniform over the warp; rare (tiny, huge or zero columns)
      const T xnorm = RescaledNorm<kLanes, kRS>(xb, s, g, ss);  // every group takes column j's
      const bool zero = xnorm == T(0);
      beta = zero ? alpha : -copysign(hypot(alpha, xnorm), alpha);
      tau = zero ? T(0) : (beta - alpha) / beta;
      scale = zero ? T(0) : T(1) / (alpha - beta);
    }
    if (lane == 0) {
      sm.param[buf][0] = tau, sm.param[buf][1] = scale;
      sm.unusual[buf] = unusual;
      if (taus) taus[j] = tau;
    }
    MbarArrive(&sm.full_p[buf]);
  } else {
    WaitFor(&sm.full_p[buf], parity);
    tau = sm.param[buf][0], scale = sm.param[buf][1];
    unusual = sm.unusual[buf];
  }
  // d = v^T a_c = a_c(j) + scale u (v = (1, scale x)); outside dlarfg's range x's raw products
  // may have overflowed or underflowed, so the dots are taken again with v itself.
  const T a_j = ShflIdx(a[s], kLanes * q + l);
  T d = fma(scale, u, a_j);
  if (unusual) {
    T v0 = 0;
#pragma unroll
    for (int t = s; t < kRS; ++t) v0 = fma(xb[g + kLanes * t] * scale, a[t], v0);
    d = a_j + LanesSum<kLanes>(v0);
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
  MbarArrive(&sm.empty[buf]);  // this lane is done with the buffer
}

// Block size of the class: W warps of 32 / kLanes columns each hold every column.
template <int kLanes>
__host__ __device__ constexpr int Warps(int n) {
  return (n + 32 / kLanes - 1) / (32 / kLanes);
}

// Every QrOutput the class takes (kR, kGeqrf); a block of 32 W threads per matrix.
template <typename T, int kLanes, int kRS>
__global__ void __launch_bounds__(32 * kRS * kLanes / (32 / kLanes), 32 / kLanes / kRun)
    FactorKernel(QrArgs<T> args, QrOutput out) {
  __shared__ Smem<T, kLanes, kRS> sm;
  const int m = args.m, n = args.n;
  const Layout<kLanes> lay{Warps<kLanes>(n), n};
  const int lane = threadIdx.x & 31, g = lane % kLanes, w = threadIdx.x / 32;
  const int c = lay.Column(w, lane / kLanes), last = lay.LastColumn(w);
  const int64_t mn = int64_t(m) * n;
  for (int64_t b = blockIdx.x; b < args.batch; b += gridDim.x) {
    sm.Init(lay.warps);
    T a[kRS];
    const T* src = args.a + b * mn + int64_t(g) * n + c;  // row g + kLanes t at src + kLanes t n
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
        done = j >= n || j > last;  // this warp's columns are done
        if (!done) Step<T, kLanes, kRS, s>(a, sm, lay, c, j, l, taus);
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
    __syncthreads();  // the mbarriers and buffers are reset for the next matrix
  }
}

// Rows a lane, by height: the instances the class is built for (m padded up to kLanes kRS rows);
// lanes a column per scalar type (tuning::kQrColumnLanes).
template <typename T, int kLanes>
cudaError_t LaunchLanes(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  constexpr int kRows96 = 96 / kLanes, kRows128 = 128 / kLanes;
  const int threads = 32 * Warps<kLanes>(args.n);
  if (args.m <= 96) return LaunchBlocks(FactorKernel<T, kLanes, kRows96>, threads, 0, stream, args.batch, args, out);
  return LaunchBlocks(FactorKernel<T, kLanes, kRows128>, threads, 0, stream, args.batch, args, out);
}

template <typename T>
cudaError_t Launch(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  return LaunchLanes<T, tuning::kQrColumnLanes.Of(sizeof(T) == 8)>(stream, args, out);
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
