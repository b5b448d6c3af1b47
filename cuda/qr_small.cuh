// Batched Householder QR, SMALL class: m <= kQrSmallMaxM (64) rows, ncols <= kQrSmallMaxCols (64)
// columns (ncols = n, or n + k for least squares), every output kind of cuda/qr_dispatch.h.
//
// Storage: ROW-MAJOR (launch.h): element (i, j) of matrix b of an m x n array at b*m*n + i*n + j,
// int64_t offsets. The kernel thinks in COLUMNS: a lane owns one column of one matrix.
//
// Layout on chip: lane groups of G = next pow2 >= ceil(ncols / C) lanes, one matrix per group,
// lane c owning the C adjacent columns c*C .. c*C + C - 1 (C = columns per lane, 1 or 2, from
// tuning.h's QrSmallColumnsPerLane: two columns halve the per-step overhead per matrix and give
// each lane two independent FMA chains; the text below says "column" for each of them), inside a
// UNIT of U lanes that share reflector slots and synchronise once per step: U = 32 (a warp,
// __syncwarp, 32 / G matrices) for ncols <= 32; U = 64 (a pair of warps, named barrier, G = 64,
// one matrix) for ncols in 33..64. Lane c of a group holds column c (of a, or of b for c >= n in
// lstsq) in registers, rows padded with zeros to the compile-time M in {4, 8, 16, 24, 32, 64}
// (M >= m; M = 64 whenever U = 64), so every
// row index is static (no local memory) and the padding rows need no predicates: they stay 0.
// Step j (unrolled, rows i < j skipped at compile time): lane j builds its reflector (LAPACK
// dlarfg, see launch.h) from its own column, writes u_j (rows > j), R(0:j, j) (rows <= j) and
// (kappa_j, u_j(j)) to its unit's shared-memory slot, H_j = I - kappa u u^T (geqrf: LAPACK's
// u = v, kappa = tau; the other outputs skip the scaling of v, see QrSmallRefl); after one
// unit sync every lane c > j reads u_j with vector loads (a broadcast within the group) and
// updates its column locally: w = kappa u^T col, col -= w u, accumulating ||col(j+2:)||^2 on
// the way (the next step's dlarfg input, off the critical path). No reductions across lanes: a
// column's dot product is the lane's own FMAs.
// kR / kGeqrf keep 2 reflector slots (a ring: the unit sync of step j+1 orders step j's reads
// before step j+2's write); kQr / kLstsq keep all n (Q is formed afterwards by backward
// accumulation, org2r-style, each lane its own column of Q starting from e_c; lstsq back-
// substitutes R x = Q^T b with lanes owning right-hand sides and R read from the same slots).
// Global I/O: each lane loads its column straight from global memory (all M loads in flight;
// per row a group reads G consecutive elements), and stores its outputs the same way (no
// shared-memory staging; not yet compared with it). Grid: persistent blocks of units walking
// unit-sized batches of matrices with an int64 stride. M = 64 f64 holds 128 registers of column
// (kernels built for 1 block per SM: ~230 registers, no spills, tuning::kQrSmallM64MinBlocks).
// Failure: the only data-dependent branch is the reflector's norm rescue (tiny / huge norms);
// NaN/Inf only reach the lanes of their own matrix.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/qr_dispatch.h"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {

using tuning::kQrSmallMaxCols;
using tuning::kQrSmallMaxM;
using tuning::kQrSmallThreads;

template <typename T>
struct QrSmallScalar;
template <>
struct QrSmallScalar<float> : Vec16<float> {
  // A 16-byte shared-memory load the compiler may not merge with an earlier one (see QrSmallApply).
  __device__ static void LoadAgain(const float* p, float* v) {
    asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                 : "r"(unsigned(__cvta_generic_to_shared(p))));
  }
};
template <>
struct QrSmallScalar<double> : Vec16<double> {
  __device__ static void LoadAgain(const double* p, double* v) {
    asm volatile("ld.volatile.shared.v2.f64 {%0, %1}, [%2];"
                 : "=d"(v[0]), "=d"(v[1])
                 : "r"(unsigned(__cvta_generic_to_shared(p))));
  }
};

// Reflector slots per matrix: all n for kQr / kLstsq (read again after the factorization), else
// a ring of min(n, 2). Per unit at most C * U * M values: U / G matrices of at most n <= C * G
// slots each.
template <QrOutput OUT>
__host__ __device__ constexpr bool QrSmallKeepsAll() { return OUT == QrOutput::kQr || OUT == QrOutput::kLstsq; }

// A reflector as the other lanes apply it: H = I - kappa u u^T with u(j) = uj, u(i > j) in the
// slot. LAPACK's form is u = v, uj = 1, kappa = tau. Outputs that never show v (kR, kQr, kLstsq)
// keep x unscaled instead: u = [alpha - beta; x], kappa = tau / (alpha - beta)^2 =
// 1 / (beta (beta - alpha)): one division and no scaling pass on the critical path.
template <typename T>
struct QrSmallRefl {
  T kappa, uj;
};

// Reload u for the update pass (tuning.h, kQrSmallReloadMinM).
template <typename T, int M>
__host__ __device__ constexpr bool QrSmallReloadU() { return M >= tuning::kQrSmallReloadMinM; }

// Independent FMA chains of the norm and dot products (latency: 4 cycles f32, ~8 f64).
constexpr int kQrSmallChains = 4;

// ||col(J+1:)||^2, the dlarfg input of step J when no earlier step computed it (J = 0).
template <typename T, int M>
__device__ __forceinline__ T QrSmallTailNorm2(const T (&col)[M], const int J) {
  T acc[kQrSmallChains] = {};
#pragma unroll
  for (int i = 0; i < M; ++i)
    if (i > J) acc[(i - J) % kQrSmallChains] = fma(col[i], col[i], acc[(i - J) % kQrSmallChains]);
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// dlarfg's beta where ||x||^2 = xn2 left DlarfgRange and x != 0: from x / max(|x|, |alpha|)
// (add_sum_sq(r, t) = t + the sum of (x_i r)^2), or, for NaN / Inf, from s2 = alpha^2 + xn2 as it
// is (they propagate into this matrix only). amax = max |x_i|.
template <typename T, typename SumSq>
__device__ __forceinline__ T QrSmallRescaledBeta(T alpha, T amax, T xn2, T s2, SumSq add_sum_sq) {
  if (amax != amax || xn2 != xn2 || isinf(amax)) return -copysign(Scalar<T>::Sqrt(s2), alpha);
  const T big = fmax(amax, fabs(alpha));
  const T r = T(1) / big;
  const T t = add_sum_sq(r, (alpha * r) * (alpha * r));
  return -copysign(big * Scalar<T>::Sqrt(t), alpha);
}

// LAPACK dlarfg on a column held in registers, in LAPACK's form (geqrf: v is written out): rows
// < J are R, row J is alpha, rows > J are x, xn2 = ||x||^2 (computed by the previous step's
// update, off the critical path). On return col(J) = beta (alpha when tau = 0), col(i > J) = v(i)
// and *tau_out = tau.
template <typename T, int M>
__device__ __forceinline__ QrSmallRefl<T> QrSmallReflect(T (&col)[M], const int J, const T xn2,
                                                         T* tau_out) {
  const T alpha = col[J];
  const T s2 = fma(alpha, alpha, xn2);
  T beta;
  if (xn2 >= DlarfgRange<T>::kLo && s2 <= DlarfgRange<T>::kHi) {  // usual case: no rescaling
    beta = -copysign(Scalar<T>::Sqrt(s2), alpha);
  } else {
    // xnorm tiny (or 0), huge, or NaN: ||x|| and hypot(alpha, ||x||) from scaled values.
    T amax = 0;
#pragma unroll
    for (int i = 0; i < M; ++i)
      if (i > J) amax = fmax(amax, fabs(col[i]));
    if (amax == T(0) && xn2 == xn2) {  // x == 0: H = I, R(j, j) = alpha
      *tau_out = T(0);
      return {T(0), T(1)};
    }
    beta = QrSmallRescaledBeta(alpha, amax, xn2, s2, [&](T r, T t) {
#pragma unroll
      for (int i = 0; i < M; ++i)
        if (i > J) t = fma(col[i] * r, col[i] * r, t);
      return t;
    });
  }
  const T tau = (beta - alpha) / beta;
  const T inv = T(1) / (alpha - beta);
  col[J] = beta;
#pragma unroll
  for (int i = 0; i < M; ++i)
    if (i > J) col[i] *= inv;
  *tau_out = tau;
  return {tau, T(1)};
}

// dlarfg's rare branch for the outputs that never show v: x tiny (or 0), huge, or non-finite.
// x is read from the reflector slot u (rows J + 1 .. M - 1; the owner stored its column there
// first), and LAPACK's form is taken (kappa = 1 / beta^2 could overflow): u(i > J) = x / (alpha -
// beta), written back to the slot, kappa = tau, uj = 1. Runtime loops over the slot, so that the
// out-of-line copy (QrSmallRescueCall) is one per kernel: inlined into every unrolled step of the
// M = 32 kernels, the branch was about a third of their code (161 KB f32, 256 KB f64), spread
// between the steps' hot paths (bench/NOTES.md, "QR small class: the rare dlarfg branch out of
// line"). Small M inline it (tuning.h, kQrSmallRescueCallMinM).
template <typename T>
struct QrSmallRescued {
  T kappa, uj, beta;
};
template <typename T>
__device__ __forceinline__ QrSmallRescued<T> QrSmallRescue(T* u, int J, int M, T alpha, T xn2,
                                                           T s2) {
  T amax = 0;
  for (int i = J + 1; i < M; ++i) amax = fmax(amax, fabs(u[i]));
  if (amax == T(0) && xn2 == xn2) return {T(0), T(1), alpha};  // x == 0: H = I, R(j, j) = alpha
  const T beta = QrSmallRescaledBeta(alpha, amax, xn2, s2, [&](T r, T t) {
    for (int i = J + 1; i < M; ++i) t = fma(u[i] * r, u[i] * r, t);
    return t;
  });
  const T inv = T(1) / (alpha - beta);
  for (int i = J + 1; i < M; ++i) u[i] *= inv;
  return {(beta - alpha) / beta, T(1), beta};
}
template <typename T>
__device__ __noinline__ QrSmallRescued<T> QrSmallRescueCall(T* u, int J, int M, T alpha, T xn2,
                                                            T s2) {
  return QrSmallRescue(u, J, M, alpha, xn2, s2);
}

// dlarfg for the outputs that never show v (kR, kQr, kLstsq), the column already stored in its
// slot u: u = [alpha - beta; x] unscaled, kappa = tau / (alpha - beta)^2 = 1 / (beta (beta -
// alpha)): one division and no scaling pass on the critical path. Sets col(J) = beta, and u(J) =
// beta where KEEP_R (lstsq's back substitution reads R(j, j) from the slot).
template <typename T, int M, bool KEEP_R>
__device__ __forceinline__ QrSmallRefl<T> QrSmallReflectUnscaled(T (&col)[M], const int J,
                                                                 const T xn2, T* u) {
  const T alpha = col[J];
  const T s2 = fma(alpha, alpha, xn2);
  // Usual case: beta^2 and beta (beta - alpha) <= 2 s2 stay finite and normal.
  if (xn2 >= DlarfgRange<T>::kLo && s2 <= DlarfgRange<T>::kHi) {
    const T beta = -copysign(Scalar<T>::Sqrt(s2), alpha);
    col[J] = beta;
    if (KEEP_R) u[J] = beta;
    return {T(1) / (beta * (beta - alpha)), alpha - beta};
  }
  const QrSmallRescued<T> r = M >= tuning::kQrSmallRescueCallMinM
                                  ? QrSmallRescueCall(u, J, M, alpha, xn2, s2)
                                  : QrSmallRescue(u, J, M, alpha, xn2, s2);
  col[J] = r.beta;
  if (KEEP_R) u[J] = r.beta;
  return {r.kappa, r.uj};
}

// Column J to its reflector slot v (16-byte stores): rows >= J, and rows < J (R) where KEEP_R;
// the other outputs never read them.
template <typename T, int M, bool KEEP_R>
__device__ __forceinline__ void QrSmallStoreSlot(const T (&cj)[M], const int J, T* v) {
  using S = QrSmallScalar<T>;
#pragma unroll
  for (int q = 0; q < M / S::kN; ++q) {
    if (!KEEP_R && (q + 1) * S::kN <= J) continue;  // J is a constant once unrolled
    typename S::type p;
    T* pe = reinterpret_cast<T*>(&p);
#pragma unroll
    for (int e = 0; e < S::kN; ++e) pe[e] = cj[q * S::kN + e];
    reinterpret_cast<typename S::type*>(v)[q] = p;
  }
}

// Each of the lane's C columns col[kk] with take[kk] -= kappa u (u^T col), u(J) = uj, u(i > J)
// read from the slot u (16-byte loads, a broadcast within the group). A column not taken (C = 2
// only: the other column of the lane that owns column J, or, forming Q, a column left of J)
// gets w = 0 by a select and row J by a select: its rows > J then compute x - 0 * u(i), exactly x
// while u is finite, and such rows are only read again where they are v itself (geqrf: u = x
// there, finite or NaN) or never written out (R's zeros, Q's rows of e_c past J). NORM: also
// returns ||col(J+2:)||^2 of the column that holds column J + 1 (kk = (J + 1) % C) after the
// update (the next step's dlarfg input when this lane owns column J + 1), fused into the update.
template <typename T, int M, int C, bool NORM>
__device__ __forceinline__ T QrSmallApply(T (&col)[C][M], const T* __restrict__ u,
                                          QrSmallRefl<T> h, const int J, const bool (&take)[C]) {
  using S = QrSmallScalar<T>;
  constexpr int kV = S::kN;
  T uu[M];
#pragma unroll
  for (int q = 0; q < M / kV; ++q)
    if ((q + 1) * kV > J + 1)  // vectors holding a row > J (J is a constant once unrolled)
      S::Split(reinterpret_cast<const typename S::type*>(u)[q], uu + q * kV);
  // One pass over u for the C dot products (independent chains, interleaved).
  T acc[C][kQrSmallChains];
#pragma unroll
  for (int kk = 0; kk < C; ++kk) {
    acc[kk][0] = h.uj * col[kk][J];
#pragma unroll
    for (int t = 1; t < kQrSmallChains; ++t) acc[kk][t] = T(0);
  }
#pragma unroll
  for (int i = 0; i < M; ++i)
    if (i > J) {
#pragma unroll
      for (int kk = 0; kk < C; ++kk)
        acc[kk][(i - J) % kQrSmallChains] = fma(uu[i], col[kk][i], acc[kk][(i - J) % kQrSmallChains]);
    }
  T w[C];
#pragma unroll
  for (int kk = 0; kk < C; ++kk) {
    w[kk] = h.kappa * ((acc[kk][0] + acc[kk][1]) + (acc[kk][2] + acc[kk][3]));
    if (C > 1 && !take[kk]) w[kk] = T(0);
    const T top = fma(-w[kk], h.uj, col[kk][J]);
    col[kk][J] = (C > 1 && !take[kk]) ? col[kk][J] : top;
  }
  const int knorm = (J + 1) % C;  // a constant once unrolled
  T nrm[kQrSmallChains] = {};
  auto update = [&](int i, T ui) {
#pragma unroll
    for (int kk = 0; kk < C; ++kk) {
      col[kk][i] = fma(-w[kk], ui, col[kk][i]);
      if (NORM && kk == knorm && i > J + 1)
        nrm[i % kQrSmallChains] = fma(col[kk][i], col[kk][i], nrm[i % kQrSmallChains]);
    }
  };
  if constexpr (QrSmallReloadU<T, M>()) {
    // Read u again instead of keeping all of it live across the dot product: fewer registers,
    // more resident warps (the loads are broadcasts, cheap next to the FMAs).
#pragma unroll
    for (int q = 0; q < M / kV; ++q) {
      if ((q + 1) * kV <= J + 1) continue;
      T x[kV];
      S::LoadAgain(u + q * kV, x);
#pragma unroll
      for (int e = 0; e < kV; ++e)
        if (q * kV + e > J) update(q * kV + e, x[e]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < M; ++i)
      if (i > J) update(i, uu[i]);
  }
  return (nrm[0] + nrm[1]) + (nrm[2] + nrm[3]);
}

// The lanes that share reflector slots and synchronise per step: a warp (U = 32, groups of
// G <= 32 lanes), or a pair of warps (U = 64, one group of 64 lanes) joined by named barrier
// `unit + 1` of the block (0 is __syncthreads). Both also order the slot writes before the reads.
template <int U>
__device__ __forceinline__ void QrSmallSync(int unit) {
  if constexpr (U == 32) {
    __syncwarp();
  } else {
    static_assert(U == 64, "a unit is one warp or a pair of warps");
    asm volatile("bar.sync %0, %1;" ::"r"(unit + 1), "r"(U) : "memory");
  }
}

// Most reflectors a unit's matrix can have: n <= m <= M and n <= ncols <= C * G <= C * U.
template <int M, int U, int C>
__host__ __device__ constexpr int QrSmallMaxSteps() { return M < C * U ? M : C * U; }

// Which of the lane's C columns take part in step J: those right of column J (and inside the
// matrix). FACTOR false (forming Q backwards): those at or right of J.
template <int C, bool FACTOR>
__device__ __forceinline__ void QrSmallTake(bool (&take)[C], int c, int J, int ncols) {
#pragma unroll
  for (int kk = 0; kk < C; ++kk)
    take[kk] = (FACTOR ? c * C + kk > J : c * C + kk >= J) && c * C + kk < ncols;
}

// Factorization of the group's matrix (steps j < n). slot(j) = this matrix's reflector slot
// (M values, 16-byte aligned); hslots(j) its kappa and uj. mytau[kk]: LAPACK's tau of the lane's
// column kk (SCALED only). KEEP_R: the slots also keep R(0:j, j) (lstsq). Every lane of the unit
// calls it (it synchronises the unit).
template <typename T, int M, int U, int C, int NV, bool SCALED, bool KEEP_R>
__device__ __forceinline__ void QrSmallFactor(T (&col)[C][M], T (&mytau)[C], int c, bool active,
                                              int n, int ncols, T* vslots,
                                              QrSmallRefl<T>* hslots, int unit) {
  T xn2 = 0;  // ||col(j+1:)||^2 of the lane's column j + 1, from the update of step j - 1
#pragma unroll
  for (int j = 0; j < QrSmallMaxSteps<M, U, C>(); ++j) {
    if (j >= n) break;  // uniform: n is the launch's
    T* v = vslots + (j % NV) * M;
    if (active && c == j / C) {  // the lane that owns column j, as its column j % C
      T(&cj)[M] = col[j % C];
      const T xn2j = j == 0 ? QrSmallTailNorm2(cj, 0) : xn2;
      // The slot: rows > j u_j (and rows <= j R(0:j, j) where KEEP_R).
      if constexpr (SCALED) {
        hslots[j % NV] = QrSmallReflect(cj, j, xn2j, &mytau[j % C]);
        QrSmallStoreSlot<T, M, KEEP_R>(cj, j, v);
      } else {
        QrSmallStoreSlot<T, M, KEEP_R>(cj, j, v);  // rows > j: x, which is u_j in this form
        hslots[j % NV] = QrSmallReflectUnscaled<T, M, KEEP_R>(cj, j, xn2j, v);
      }
    }
    QrSmallSync<U>(unit);
    if (active && c * C + C - 1 > j && c * C < ncols) {
      bool take[C];
      QrSmallTake<C, true>(take, c, j, ncols);
      xn2 = QrSmallApply<T, M, C, true>(col, v, hslots[j % NV], j, take);
    }
  }
}

// The lane's input columns c*C + kk of matrix b (zeros past row m, past ncols, or when b is out
// of range): a(:, cc), or b(:, cc - n) for lstsq. All C * M loads are independent (in flight
// together).
template <typename T, int M, int C>
__device__ __forceinline__ void QrSmallLoadColumns(const QrArgs<T>& args, int64_t b, int c,
                                                   int ncols, T (&col)[C][M]) {
  const int m = args.m, n = args.n, k = args.k;
#pragma unroll
  for (int kk = 0; kk < C; ++kk) {
    const int cc = c * C + kk;
    const bool active = b < args.batch && cc < ncols;
    const T* src = nullptr;
    int stride = n;
    if (active) {
      if (cc < n) src = args.a + b * m * n + cc;
      else { src = args.b + b * m * k + (cc - n); stride = k; }
    }
#pragma unroll
    for (int i = 0; i < M; ++i) col[kk][i] = (active && i < m) ? src[int64_t(i) * stride] : T(0);
  }
}

// Shared memory of a block: C * U * M reflector values and C * U (kappa, uj) per unit (slots *
// matrices <= C * U per unit, see QrSmallKeepsAll). Dynamic for M = 64 and wherever it exceeds
// 48 KB (f64 pairs); static otherwise, so the one-column kernels for M <= 32 are the same PTX as
// before M = 64 and pairs existed.
template <typename T, int M, int C>
constexpr size_t QrSmallSmemBytes() {
  return size_t(kQrSmallThreads) * C * (M * sizeof(T) + sizeof(QrSmallRefl<T>));
}
template <typename T, int M, int C>
constexpr size_t QrSmallDynamicSmem() {
  return M == 64 || QrSmallSmemBytes<T, M, C>() > 48 * 1024 ? QrSmallSmemBytes<T, M, C>() : 0;
}

// M <= 32: no minimum blocks per SM (0 = ptxas' own register choice, as before M = 64 existed).
template <typename T, int M, int U, int C, QrOutput OUT>
__global__ void __launch_bounds__(kQrSmallThreads, M == 64 ? tuning::kQrSmallM64MinBlocks : 0)
    QrSmallKernel(QrArgs<T> args, int ncols, int glog2) {
  static_assert(C == 1 || (OUT != QrOutput::kLstsq && U == 32), "pairs: warp units, no lstsq");
  constexpr int kUnits = kQrSmallThreads / U;
  static_assert(kUnits * U == kQrSmallThreads && kUnits < 16, "whole units, named barriers 1..15");
  const int ulane = threadIdx.x % U, unit = threadIdx.x / U;
  const int G = 1 << glog2, per_unit = U >> glog2;
  const int g = ulane >> glog2, c = ulane & (G - 1);
  const int m = args.m, n = args.n, k = args.k;
  constexpr bool kAll = QrSmallKeepsAll<OUT>();
  constexpr int kSteps = QrSmallMaxSteps<M, U, C>();
  const int NVr = kAll ? n : (n < 2 ? n : 2);  // slots per matrix (runtime; NV template = max)
  T* vslots;  // this matrix's reflector slots
  QrSmallRefl<T>* hslots;
  if constexpr (QrSmallDynamicSmem<T, M, C>() > 0) {
    extern __shared__ __align__(16) unsigned char qr_small_smem[];
    T* vbuf = reinterpret_cast<T*>(qr_small_smem);
    QrSmallRefl<T>* hbuf = reinterpret_cast<QrSmallRefl<T>*>(vbuf + C * kQrSmallThreads * M);
    vslots = vbuf + (C * unit * U + g * NVr) * M;
    hslots = hbuf + C * unit * U + g * NVr;
  } else {
    __shared__ __align__(16) T vbuf[kUnits][C * U * M];
    __shared__ QrSmallRefl<T> hbuf[kUnits][C * U];
    vslots = &vbuf[unit][g * NVr * M];
    hslots = &hbuf[unit][g * NVr];
  }
  const int64_t units_total = CeilDiv(args.batch, per_unit);
  for (int64_t wg = int64_t(blockIdx.x) * kUnits + unit; wg < units_total;
       wg += int64_t(gridDim.x) * kUnits) {
    const int64_t b = wg * per_unit + g;
    const bool active = b < args.batch && c * C < ncols;  // the lane holds a column
    T col[C][M];
    QrSmallLoadColumns(args, b, c, ncols, col);
    QrSmallSync<U>(unit);  // the previous matrices' readers are done with the slots
    T mytau[C] = {};
    constexpr bool kScaled = OUT == QrOutput::kGeqrf;  // only geqrf returns the v's
    if constexpr (kAll)
      QrSmallFactor<T, M, U, C, kSteps, kScaled, OUT == QrOutput::kLstsq>(
          col, mytau, c, active, n, ncols, vslots, hslots, unit);
    else
      QrSmallFactor<T, M, U, C, 2, kScaled, false>(col, mytau, c, active, n, ncols, vslots,
                                                   hslots, unit);
    if (!active) continue;

    if constexpr (OUT == QrOutput::kGeqrf) {
#pragma unroll
      for (int kk = 0; kk < C; ++kk) {
        const int cc = c * C + kk;
        if (cc >= n) break;
        T* dst = args.qr + b * m * n + cc;
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i < m) dst[int64_t(i) * n] = col[kk][i];
        args.taus[b * n + cc] = mytau[kk];
      }
    } else if constexpr (OUT == QrOutput::kR || OUT == QrOutput::kQr) {
#pragma unroll
      for (int kk = 0; kk < C; ++kk) {
        const int cc = c * C + kk;
        if (cc >= n) break;
        T* dst = args.r + b * n * n + cc;
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i < n) dst[int64_t(i) * n] = i <= cc ? col[kk][i] : T(0);
      }
      if constexpr (OUT == QrOutput::kQr) {
        // Q e_cc = H_0 ... H_{n-1} e_cc, applied right to left; H_j e_cc = e_cc for j > cc.
#pragma unroll
        for (int kk = 0; kk < C; ++kk)
#pragma unroll
          for (int i = 0; i < M; ++i) col[kk][i] = i == c * C + kk ? T(1) : T(0);
#pragma unroll
        for (int j = kSteps - 1; j >= 0; --j)
          if (j < n && j <= c * C + C - 1) {
            bool take[C];
            QrSmallTake<C, false>(take, c, j, ncols);
            QrSmallApply<T, M, C, false>(col, vslots + j * M, hslots[j], j, take);
          }
#pragma unroll
        for (int kk = 0; kk < C; ++kk) {
          const int cc = c * C + kk;
          if (cc >= n) break;
          T* q = args.q + b * m * n + cc;
#pragma unroll
          for (int i = 0; i < M; ++i)
            if (i < m) q[int64_t(i) * n] = col[kk][i];
        }
      }
    } else {  // kLstsq (C == 1)
      T(&cl)[M] = col[0];
      if (c < n) {
        T d = 0;  // cl[c] through static indices (a runtime index would move col to local memory)
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i == c) d = cl[i];
        args.rdiag[b * n + c] = d;
      } else {
        const int rhs = c - n;
        T res = 0;
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i >= n && i < m) res = fma(cl[i], cl[i], res);
        args.resid[b * k + rhs] = res;
        // R x = c(0:n): column j of R sits in rows <= j of slot j.
#pragma unroll
        for (int j = kSteps - 1; j >= 0; --j) {
          if (j < n) {
            const T* rj = vslots + j * M;
            const T xj = cl[j] / rj[j];
            cl[j] = xj;
#pragma unroll
            for (int i = 0; i < j; ++i) cl[i] = fma(-rj[i], xj, cl[i]);
          }
        }
        T* x = args.x + b * n * k + rhs;
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i < n) x[int64_t(i) * k] = cl[i];
      }
    }
  }
}

template <typename T, int M, int U, QrOutput OUT>
struct QrSmallTag {};  // PersistentGrid's occupancy cache key

// Launch for one M (padded rows), unit width U and output kind; C columns per lane from
// tuning.h (one for lstsq and pairs of warps).
template <typename T, int M, int U, QrOutput OUT>
cudaError_t QrSmallLaunch(cudaStream_t stream, const QrArgs<T>& args, int ncols) {
  constexpr int C = (OUT == QrOutput::kLstsq || U != 32)
                        ? 1
                        : tuning::QrSmallColumnsPerLane(sizeof(T) == 8, M, OUT == QrOutput::kQr);
  int glog2 = 0;
  while ((1 << glog2) * C < ncols) ++glog2;
  const int per_unit = U >> glog2;
  constexpr int kUnits = kQrSmallThreads / U;
  const int64_t blocks = CeilDiv(CeilDiv(args.batch, per_unit), kUnits);
  auto kernel = QrSmallKernel<T, M, U, C, OUT>;
  constexpr size_t kSmem = QrSmallDynamicSmem<T, M, C>();
  cudaError_t e = cudaSuccess;
  if constexpr (kSmem > 48 * 1024)
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem));
  if (e != cudaSuccess) return e;
  unsigned grid = 0;
  e = PersistentGrid<QrSmallTag<T, M, U, OUT>>(kernel, kQrSmallThreads, kSmem, blocks, &grid);
  if (e != cudaSuccess) return e;
  kernel<<<grid, kQrSmallThreads, kSmem, stream>>>(args, ncols, glog2);
  return cudaGetLastError();
}

template <typename T, int M, int U>
cudaError_t QrSmallForM(cudaStream_t stream, const QrArgs<T>& args, QrOutput out, int ncols) {
  switch (out) {
    case QrOutput::kGeqrf: return QrSmallLaunch<T, M, U, QrOutput::kGeqrf>(stream, args, ncols);
    case QrOutput::kR: return QrSmallLaunch<T, M, U, QrOutput::kR>(stream, args, ncols);
    case QrOutput::kQr: return QrSmallLaunch<T, M, U, QrOutput::kQr>(stream, args, ncols);
    case QrOutput::kLstsq: return QrSmallLaunch<T, M, U, QrOutput::kLstsq>(stream, args, ncols);
  }
  return cudaErrorInvalidValue;
}

// The M = 64 kernels compile slowly (fully unrolled 64-row columns), so they live in their own
// translation units, under 60 s each: cuda/qr_small_{f32,f64}_tall.cu (m > 32, ncols <= 32, a
// warp per unit), cuda/qr_small_{f32,f64}_wide.cu (ncols > 32, a pair of warps; kGeqrf, kR) and
// cuda/qr_small_{f32,f64}_wide_q.cu (kQr, kLstsq).
#define BATCHLA_QR_SMALL_M64(T, U, OUT) \
  template cudaError_t QrSmallLaunch<T, 64, U, OUT>(cudaStream_t, const QrArgs<T>&, int);
#define BATCHLA_QR_SMALL_M64_ALL(PREFIX, T)               \
  PREFIX BATCHLA_QR_SMALL_M64(T, 32, QrOutput::kGeqrf)    \
  PREFIX BATCHLA_QR_SMALL_M64(T, 32, QrOutput::kR)        \
  PREFIX BATCHLA_QR_SMALL_M64(T, 32, QrOutput::kQr)       \
  PREFIX BATCHLA_QR_SMALL_M64(T, 32, QrOutput::kLstsq)    \
  PREFIX BATCHLA_QR_SMALL_M64(T, 64, QrOutput::kGeqrf)    \
  PREFIX BATCHLA_QR_SMALL_M64(T, 64, QrOutput::kR)        \
  PREFIX BATCHLA_QR_SMALL_M64(T, 64, QrOutput::kQr)       \
  PREFIX BATCHLA_QR_SMALL_M64(T, 64, QrOutput::kLstsq)
BATCHLA_QR_SMALL_M64_ALL(extern, float)
BATCHLA_QR_SMALL_M64_ALL(extern, double)

// The small class's contract (cuda/qr_dispatch.h): 1 <= m <= 64 and 1 <= ncols <= 64; ncols <= 32
// runs in warp units, more in pairs of warps (both tuning.h's limits).
template <typename T>
bool QrSmallFits(int m, int ncols) {
  return m >= 1 && m <= kQrSmallMaxM && ncols >= 1 && ncols <= kQrSmallMaxCols;
}

template <typename T>
cudaError_t QrSmall(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  const int ncols = QrColumns(args, out);
  if (!QrSmallFits<T>(args.m, ncols) || args.n < 1 || args.n > args.m || args.k < 0 || args.batch < 0)
    return cudaErrorInvalidValue;
  if (args.batch == 0) return cudaGetLastError();
  const int m = args.m;
  // More than 32 columns: a pair of warps per matrix, and M = 64 (lstsq may have m <= 32 here).
  if (ncols > 32) return QrSmallForM<T, 64, 64>(stream, args, out, ncols);
  if (m <= 4) return QrSmallForM<T, 4, 32>(stream, args, out, ncols);
  if (m <= 8) return QrSmallForM<T, 8, 32>(stream, args, out, ncols);
  if (m <= 16) return QrSmallForM<T, 16, 32>(stream, args, out, ncols);
  if (m <= 24) return QrSmallForM<T, 24, 32>(stream, args, out, ncols);
  if (m <= 32) return QrSmallForM<T, 32, 32>(stream, args, out, ncols);
  return QrSmallForM<T, 64, 32>(stream, args, out, ncols);
}

}  // namespace detail
}  // namespace batchla
