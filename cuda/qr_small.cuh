// Batched Householder QR, SMALL class: m <= kQrSmallMaxM (64) rows, ncols <= kQrSmallMaxCols (64)
// columns (ncols = n, or n + k for least squares), every output kind of cuda/qr_dispatch.h.
//
// Storage: ROW-MAJOR (launch.h): element (i, j) of matrix b of an m x n array at b*m*n + i*n + j,
// int64_t offsets. The kernel thinks in COLUMNS: a lane owns one column of one matrix.
//
// Layout on chip: lane groups of G = next pow2 >= ncols lanes, one matrix per group, inside a
// UNIT of U lanes that share reflector slots and synchronise once per step: U = 32 (a warp,
// __syncwarp, 32 / G matrices) for ncols <= 32; U = 64 (a pair of warps, named barrier, G = 64,
// one matrix) for ncols in 33..64. Lane c of a group holds column c (of a, or of b for c >= n in
// lstsq) in registers, rows padded with zeros to the compile-time M in {4, 8, 16, 32, 64}
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
struct QrSmallScalar<float> {
  using Vec = float4;
  static constexpr int kV = 4;
  __device__ static void Split(const float4& q, float* v) { v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w; }
  // A 16-byte shared-memory load the compiler may not merge with an earlier one (see QrSmallApply).
  __device__ static void LoadAgain(const float* p, float* v) {
    asm volatile("ld.volatile.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                 : "r"(unsigned(__cvta_generic_to_shared(p))));
  }
  // Squared norms in [kLo, kHi] lose nothing to underflow / overflow (kLo = FLT_MIN / eps).
  static constexpr float kLo = 9.8607613e-32f;
  static constexpr float kHi = 1.0e37f;
};
template <>
struct QrSmallScalar<double> {
  using Vec = double2;
  static constexpr int kV = 2;
  __device__ static void Split(const double2& q, double* v) { v[0] = q.x; v[1] = q.y; }
  __device__ static void LoadAgain(const double* p, double* v) {
    asm volatile("ld.volatile.shared.v2.f64 {%0, %1}, [%2];"
                 : "=d"(v[0]), "=d"(v[1])
                 : "r"(unsigned(__cvta_generic_to_shared(p))));
  }
  static constexpr double kLo = 1.0020841800044864e-292;  // DBL_MIN / eps
  static constexpr double kHi = 1.0e307;
};

// Reflector slots per matrix: all n for kQr / kLstsq (read again after the factorization), else
// a ring of 2. Per unit at most U * M values (slots * matrices <= U since n <= G).
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

// Reload u for the update pass (tuning.h, kQrSmallReloadU).
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

// LAPACK dlarfg on a column held in registers: rows < J are R, row J is alpha, rows > J are x,
// xn2 = ||x||^2 (computed by the previous step's update, off the critical path). On return col(J) = beta (alpha when tau = 0) and col(i > J) = u(i); *tau = LAPACK's tau (kept
// only by kGeqrf). SCALED: always LAPACK's form (v stored, as geqrf returns it).
template <typename T, int M, bool SCALED>
__device__ __forceinline__ QrSmallRefl<T> QrSmallReflect(T (&col)[M], const int J, const T xn2,
                                                         T* tau_out) {
  using S = QrSmallScalar<T>;
  const T alpha = col[J];
  const T s2 = fma(alpha, alpha, xn2);
  T beta;
  if (xn2 >= S::kLo && s2 <= S::kHi) {  // usual case: no rescaling needed
    beta = -copysign(Scalar<T>::Sqrt(s2), alpha);
    if constexpr (!SCALED) {
      // beta^2 and beta (beta - alpha) <= 2 s2 stay finite and normal here.
      *tau_out = T(0);
      col[J] = beta;
      return {T(1) / (beta * (beta - alpha)), alpha - beta};
    }
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
    if (amax != amax || xn2 != xn2 || isinf(amax)) {
      beta = -copysign(Scalar<T>::Sqrt(s2), alpha);  // NaN / Inf propagate into this matrix only
    } else {
      const T big = fmax(amax, fabs(alpha));
      const T r = T(1) / big;
      T t = (alpha * r) * (alpha * r);
#pragma unroll
      for (int i = 0; i < M; ++i)
        if (i > J) t = fma(col[i] * r, col[i] * r, t);
      beta = -copysign(big * Scalar<T>::Sqrt(t), alpha);
    }
  }
  // LAPACK's form (also the fallback of the unscaled outputs: kappa = 1 / beta^2 could overflow).
  const T tau = (beta - alpha) / beta;
  const T inv = T(1) / (alpha - beta);
  col[J] = beta;
#pragma unroll
  for (int i = 0; i < M; ++i)
    if (i > J) col[i] *= inv;
  *tau_out = tau;
  return {tau, T(1)};
}

// col -= kappa u (u^T col), u(J) = uj, u(i > J) read from the slot u (16-byte loads, a broadcast
// within the group). NORM: also returns ||col(J+2:)||^2 after the update (the next step's dlarfg
// input when this lane owns column J + 1), fused into the update pass.
template <typename T, int M, bool NORM>
__device__ __forceinline__ T QrSmallApply(T (&col)[M], const T* __restrict__ u, QrSmallRefl<T> h,
                                          const int J) {
  using S = QrSmallScalar<T>;
  constexpr int kV = S::kV;
  T uu[M];
#pragma unroll
  for (int q = 0; q < M / kV; ++q)
    if ((q + 1) * kV > J + 1)  // vectors holding a row > J (J is a constant once unrolled)
      S::Split(reinterpret_cast<const typename S::Vec*>(u)[q], uu + q * kV);
  T acc[kQrSmallChains] = {h.uj * col[J]};
#pragma unroll
  for (int i = 0; i < M; ++i)
    if (i > J) acc[(i - J) % kQrSmallChains] = fma(uu[i], col[i], acc[(i - J) % kQrSmallChains]);
  const T w = h.kappa * ((acc[0] + acc[1]) + (acc[2] + acc[3]));
  col[J] = fma(-w, h.uj, col[J]);
  T nrm[kQrSmallChains] = {};
  auto update = [&](int i, T ui) {
    col[i] = fma(-w, ui, col[i]);
    if (NORM && i > J + 1) nrm[i % kQrSmallChains] = fma(col[i], col[i], nrm[i % kQrSmallChains]);
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

// Most reflectors a unit's matrix can have: n <= m <= M and n <= ncols <= G <= U.
template <int M, int U>
__host__ __device__ constexpr int QrSmallMaxSteps() { return M < U ? M : U; }

// Factorization of the group's matrix (steps j < n). slot(j) = this matrix's reflector slot
// (M values, 16-byte aligned); hslots(j) its kappa and uj. mytau: LAPACK's tau of this lane's
// column (SCALED only). Every lane of the unit calls it (it synchronises the unit).
template <typename T, int M, int U, int NV, bool SCALED>
__device__ __forceinline__ void QrSmallFactor(T (&col)[M], T& mytau, int c, bool active, int n,
                                              int ncols, T* vslots, QrSmallRefl<T>* hslots,
                                              int unit) {
  T xn2 = 0;  // ||col(j+1:)||^2 of this lane's column, from the update of step j - 1
#pragma unroll
  for (int j = 0; j < QrSmallMaxSteps<M, U>(); ++j) {
    if (j >= n) break;  // uniform: n is the launch's
    T* v = vslots + (j % NV) * M;
    if (active && c == j) {
      const QrSmallRefl<T> h =
          QrSmallReflect<T, M, SCALED>(col, j, j == 0 ? QrSmallTailNorm2(col, 0) : xn2, &mytau);
      // Rows <= j: R(0:j, j) (lstsq back substitution); rows > j: u_j.
      using S = QrSmallScalar<T>;
#pragma unroll
      for (int q = 0; q < M / S::kV; ++q) {
        typename S::Vec p;
        T* pe = reinterpret_cast<T*>(&p);
#pragma unroll
        for (int e = 0; e < S::kV; ++e) pe[e] = col[q * S::kV + e];
        reinterpret_cast<typename S::Vec*>(v)[q] = p;
      }
      hslots[j % NV] = h;
    }
    QrSmallSync<U>(unit);
    if (active && c > j && c < ncols) xn2 = QrSmallApply<T, M, true>(col, v, hslots[j % NV], j);
  }
}

// This lane's input column of matrix b (zeros past row m, or when b / c is out of range):
// a(:, c), or b(:, c - n) for lstsq. All M loads are independent (in flight together).
template <typename T, int M>
__device__ __forceinline__ void QrSmallLoadColumn(const QrArgs<T>& args, int64_t b, int c, int ncols,
                                                  T (&col)[M]) {
  const bool active = b < args.batch && c < ncols;
  const int m = args.m, n = args.n, k = args.k;
  const T* src = nullptr;
  int stride = n;
  if (active) {
    if (c < n) src = args.a + b * m * n + c;
    else { src = args.b + b * m * k + (c - n); stride = k; }
  }
#pragma unroll
  for (int i = 0; i < M; ++i) col[i] = (active && i < m) ? src[int64_t(i) * stride] : T(0);
}

// Shared memory of a block: U * M reflector values and U (kappa, uj) per unit (slots * NV <= U
// per unit, see QrSmallKeepsAll). Dynamic for M = 64 (f64 needs more than 48 KB); static for
// M <= 32, whose kernels are thereby the same PTX as before M = 64 existed.
template <typename T, int M>
constexpr size_t QrSmallDynamicSmem() {
  return M == 64 ? size_t(kQrSmallThreads) * (M * sizeof(T) + sizeof(QrSmallRefl<T>)) : 0;
}

// M <= 32: no minimum blocks per SM (0 = ptxas' own register choice, as before M = 64 existed).
template <typename T, int M, int U, QrOutput OUT>
__global__ void __launch_bounds__(kQrSmallThreads, M == 64 ? tuning::kQrSmallM64MinBlocks : 0)
    QrSmallKernel(QrArgs<T> args, int ncols, int glog2) {
  constexpr int kUnits = kQrSmallThreads / U;
  static_assert(kUnits * U == kQrSmallThreads && kUnits < 16, "whole units, named barriers 1..15");
  const int ulane = threadIdx.x % U, unit = threadIdx.x / U;
  const int G = 1 << glog2, per_unit = U >> glog2;
  const int g = ulane >> glog2, c = ulane & (G - 1);
  const int m = args.m, n = args.n, k = args.k;
  constexpr bool kAll = QrSmallKeepsAll<OUT>();
  constexpr int kSteps = QrSmallMaxSteps<M, U>();
  const int NVr = kAll ? n : (n < 2 ? n : 2);  // slots per matrix (runtime; NV template = max)
  T* vslots;  // this matrix's reflector slots
  QrSmallRefl<T>* hslots;
  if constexpr (QrSmallDynamicSmem<T, M>() > 0) {
    extern __shared__ __align__(16) unsigned char qr_small_smem[];
    T* vbuf = reinterpret_cast<T*>(qr_small_smem);
    QrSmallRefl<T>* hbuf = reinterpret_cast<QrSmallRefl<T>*>(vbuf + kQrSmallThreads * M);
    vslots = vbuf + (unit * U + g * NVr) * M;
    hslots = hbuf + unit * U + g * NVr;
  } else {
    __shared__ __align__(16) T vbuf[kUnits][U * M];
    __shared__ QrSmallRefl<T> hbuf[kUnits][U];
    vslots = &vbuf[unit][g * NVr * M];
    hslots = &hbuf[unit][g * NVr];
  }
  const int64_t units_total = CeilDiv(args.batch, per_unit);
  for (int64_t wg = int64_t(blockIdx.x) * kUnits + unit; wg < units_total;
       wg += int64_t(gridDim.x) * kUnits) {
    const int64_t b = wg * per_unit + g;
    const bool active = b < args.batch && c < ncols;
    T col[M];
    QrSmallLoadColumn(args, b, c, ncols, col);
    QrSmallSync<U>(unit);  // the previous matrices' readers are done with the slots
    T mytau = 0;
    constexpr bool kScaled = OUT == QrOutput::kGeqrf;  // only geqrf returns the v's
    if constexpr (kAll)
      QrSmallFactor<T, M, U, kSteps, kScaled>(col, mytau, c, active, n, ncols, vslots, hslots,
                                              unit);
    else
      QrSmallFactor<T, M, U, 2, kScaled>(col, mytau, c, active, n, ncols, vslots, hslots, unit);
    if (!active) continue;

    if constexpr (OUT == QrOutput::kGeqrf) {
      T* dst = args.qr + b * m * n + c;
#pragma unroll
      for (int i = 0; i < M; ++i)
        if (i < m) dst[int64_t(i) * n] = col[i];
      args.taus[b * n + c] = mytau;
    } else if constexpr (OUT == QrOutput::kR || OUT == QrOutput::kQr) {
      T* dst = args.r + b * n * n + c;
#pragma unroll
      for (int i = 0; i < M; ++i)
        if (i < n) dst[int64_t(i) * n] = i <= c ? col[i] : T(0);
      if constexpr (OUT == QrOutput::kQr) {
        // Q e_c = H_0 ... H_{n-1} e_c, applied right to left; H_j e_c = e_c for j > c.
#pragma unroll
        for (int i = 0; i < M; ++i) col[i] = i == c ? T(1) : T(0);
#pragma unroll
        for (int j = kSteps - 1; j >= 0; --j)
          if (j < n && j <= c) QrSmallApply<T, M, false>(col, vslots + j * M, hslots[j], j);
        T* q = args.q + b * m * n + c;
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i < m) q[int64_t(i) * n] = col[i];
      }
    } else {  // kLstsq
      if (c < n) {
        T d = 0;  // col[c] through static indices (a runtime index would move col to local memory)
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i == c) d = col[i];
        args.rdiag[b * n + c] = d;
      } else {
        const int rhs = c - n;
        T res = 0;
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i >= n && i < m) res = fma(col[i], col[i], res);
        args.resid[b * k + rhs] = res;
        // R x = c(0:n): column j of R sits in rows <= j of slot j.
#pragma unroll
        for (int j = kSteps - 1; j >= 0; --j) {
          if (j < n) {
            const T* rj = vslots + j * M;
            const T xj = col[j] / rj[j];
            col[j] = xj;
#pragma unroll
            for (int i = 0; i < j; ++i) col[i] = fma(-rj[i], xj, col[i]);
          }
        }
        T* x = args.x + b * n * k + rhs;
#pragma unroll
        for (int i = 0; i < M; ++i)
          if (i < n) x[int64_t(i) * k] = col[i];
      }
    }
  }
}

template <typename T, int M, int U, QrOutput OUT>
struct QrSmallTag {};  // PersistentGrid's occupancy cache key

// Launch for one M (padded rows), unit width U and output kind.
template <typename T, int M, int U, QrOutput OUT>
cudaError_t QrSmallLaunch(cudaStream_t stream, const QrArgs<T>& args, int ncols) {
  int glog2 = 0;
  while ((1 << glog2) < ncols) ++glog2;
  const int per_unit = U >> glog2;
  constexpr int kUnits = kQrSmallThreads / U;
  const int64_t blocks = CeilDiv(CeilDiv(args.batch, per_unit), kUnits);
  auto kernel = QrSmallKernel<T, M, U, OUT>;
  constexpr size_t kSmem = QrSmallDynamicSmem<T, M>();
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
  if (m <= 32) return QrSmallForM<T, 32, 32>(stream, args, out, ncols);
  return QrSmallForM<T, 64, 32>(stream, args, out, ncols);
}

}  // namespace detail
}  // namespace batchla
