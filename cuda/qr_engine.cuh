// Engine class of the batched Householder QR (cuda/qr_dispatch.h): one block of kThreads per
// matrix, right-looking blocked Householder with compact-WY panels of kNB reflectors:
//   panel     unblocked Householder (LAPACK geqr2) on <= kNB columns, a reflector at a time;
//   T         the panel's block reflector H_j0 ... H_j0+jb-1 = I - V T V^T (LAPACK larft,
//             forward columnwise) from the Gram matrix V^T V;
//   trailing  C <- (I - V op(T) V^T) C in two passes over C: Y = V^T C, C -= V (op(T) Y).
// Q is formed in place as LAPACK orgqr does (panels backwards: block apply to the columns right of
// the panel, then org2r inside it); ormqr applies the same block reflectors to another matrix.
//
// The working matrix W lives in shared memory when it fits (kInSmem; rows padded to an odd
// stride so row-slice reads are free of bank conflicts), otherwise the kernel works in place in
// the output buffer in global memory (L2-resident per block) with only the scratch in shared
// memory. Both use the same device code through the Mat view.
#pragma once

#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/qr_dispatch.h"
#include "cuda/qr_dlarfg.cuh"
#include "cuda/tuning.h"

// 1: the panels' dlarfg by DlarfgUsual (approximate rsqrt / rcp) where its range test allows;
// 0: hypot, IEEE sqrt and divides on every column, as before 2026-11-28 i (for A/Bs).
#ifndef BATCHLA_QR_ENGINE_FAST_DLARFG
#define BATCHLA_QR_ENGINE_FAST_DLARFG 1
#endif

namespace batchla {
namespace detail {
namespace qr_engine {

// A kernel's shape: kThreads per block, kNB reflectors per panel (cuda/qr_engine.cu picks one per
// size; every device function below is templated on both).

// A row-major matrix view (shared or global memory). Index I = int wherever m * ld <= 4096 * 513;
// I = int64_t only for ormqr's C in global memory, whose row stride p is unbounded (vmap folds a
// batch of right-hand sides into p).
template <typename T, typename I = int>
struct Mat {
  T* p;
  I ld;
  __device__ T& operator()(int i, int j) const { return p[i * ld + j]; }
  __device__ Mat At(int i, int j) const { return {p + i * ld + j, ld}; }
};

// Shared memory besides the matrix.
template <typename T, int kThreads, int kNB>
struct Scratch {
  static_assert(kThreads % 32 == 0 && kThreads % kNB == 0 && kNB <= 32, "engine shape");
  T tau[tuning::kQrMaxN];
  T t[kNB][kNB + 1];        // the panel's T (upper triangular)
  T g[kNB][kNB + 1];        // the panel's Gram matrix V^T V (strict upper part used)
  T part[kThreads * kNB];   // per-slice partial sums (panel dots, Gram, Y = V^T C)
  T red[kThreads / 32];
};

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};
struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const { return fmax(a, b); }
};

// op over the block; every thread gets it. One barrier: the caller must pass another barrier
// before the next reduction (red is reused).
template <int kWarps, typename T, typename Op>
__device__ __forceinline__ T BlockReduce(T v, T* red, Op op) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, ShflXor(v, o));
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  T s = red[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w) s = op(s, red[w]);
  return s;
}
template <int kWarps, typename T>
__device__ __forceinline__ T BlockSum(T v, T* red) {
  return BlockReduce<kWarps>(v, red, SumOp());
}

// ||x|| from x / max|x| (LAPACK dnrm2's scaling) where the plain sum of squares ss left
// DlarfgRange: 0 for x == 0, NaN / Inf where x has them. x is kR values a lane of each aligned
// group of kWidth lanes (a warp by default; zeros where not part of x); the result is the group's.
template <typename T, int kR, int kWidth = 32>
__device__ __forceinline__ T WarpRescaledNorm(const T (&x)[kR], T ss) {
  T amax = 0;
#pragma unroll
  for (int q = 0; q < kR; ++q) amax = fmax(amax, fabs(x[q]));
#pragma unroll
  for (int o = kWidth / 2; o > 0; o >>= 1) amax = fmax(amax, ShflXor(amax, o));
  if (ss != ss || amax == T(0) || isinf(amax)) return ss != ss ? ss : amax;
  const T r = T(1) / amax;
  T t = 0;
#pragma unroll
  for (int q = 0; q < kR; ++q) t = fma(x[q] * r, x[q] * r, t);
  return amax * Scalar<T>::Sqrt(LanesSum<kWidth>(t));
}

// The same for x = W(j+1:m, j) spread over the block (FactorPanel's layout), after a BlockSum of
// ss whose `red` the block may still be reading. Every thread gets it; ends with a barrier.
template <int kWarps, typename T>
__device__ T BlockRescaledNorm(const Mat<T>& w, int m, int j, T ss, T* red) {
  constexpr int kThreads = kWarps * 32;
  T amax = 0;
  for (int i = j + 1 + threadIdx.x; i < m; i += kThreads) amax = fmax(amax, fabs(w(i, j)));
  __syncthreads();
  amax = BlockReduce<kWarps>(amax, red, MaxOp());
  __syncthreads();
  if (ss != ss || amax == T(0) || isinf(amax)) return ss != ss ? ss : amax;
  const T r = T(1) / amax;
  T t = 0;
  for (int i = j + 1 + threadIdx.x; i < m; i += kThreads) t = fma(w(i, j) * r, w(i, j) * r, t);
  t = BlockSum<kWarps>(t, red);
  __syncthreads();
  return amax * Scalar<T>::Sqrt(t);
}

// First row r >= from with r % slices == slice.
__device__ __forceinline__ int FirstRow(int from, int slice, int slices) {
  return from + ((slice - from % slices) % slices + slices) % slices;
}

// V(r, t) of a panel whose reflectors start at row 0, column 0 of `v`: unit diagonal, zeros above.
template <typename T>
__device__ __forceinline__ T VAt(const Mat<T>& v, int r, int t) {
  return r > t ? v(r, t) : (r == t ? T(1) : T(0));
}

// Applies H = I - tau v v^T (v(j) = 1, v(i > j) = s * W(i, j)) to columns (j, end) of W, rows
// j..m-1. Lane = column, warp = row slice. Ends with a barrier; W(:, j) is only read.
template <int kWarps, typename T>
__device__ void ApplyReflectorInPanel(const Mat<T>& w, int m, int j, int end, T tau, T s, T* part) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int k = j + 1 + lane;
  const bool active = k < end;
  T acc = 0, wjk = 0;
  const int stride = kWarps * w.ld;
  if (active) {
    wjk = w(j, k);
    const T* p = &w(j + 1 + warp, j);
    for (int i = j + 1 + warp; i < m; i += kWarps, p += stride) acc += p[0] * p[k - j];
  }
  part[warp * 32 + lane] = acc;
  __syncthreads();
  if (active && tau != T(0)) {
    T sum = 0;
#pragma unroll
    for (int q = 0; q < kWarps; ++q) sum += part[q * 32 + lane];
    const T tw = tau * (wjk + s * sum);
    if (warp == 0) w(j, k) = wjk - tw;
    const T tws = tw * s;
    T* p = &w(j + 1 + warp, j);
    for (int i = j + 1 + warp; i < m; i += kWarps, p += stride) p[k - j] -= tws * p[0];
  }
  __syncthreads();
}

// Unblocked Householder (geqr2) of columns [j0, j0 + jb) of W, rows j0..m-1; the reflectors are
// applied to the panel's columns only. taus go to tau[j]. Every v is scaled and every R(j, j)
// written when this returns (after the trailing barrier).
template <typename T, int kThreads, int kNB>
__device__ void FactorPanel(const Mat<T>& w, int m, int j0, int jb, T* tau, Scratch<T, kThreads, kNB>& s) {
  const int end = j0 + jb;
  for (int j = j0; j < end; ++j) {
    T ss = 0;
    for (int i = j + 1 + threadIdx.x; i < m; i += kThreads) ss += w(i, j) * w(i, j);
    ss = BlockSum<kThreads / 32>(ss, s.red);
    const T alpha = w(j, j);
    // LAPACK dlarfg (see launch.h); every thread computes the same values. Outside dlarfg's safe
    // range (a uniform branch) ||x|| is rescaled and x scaled to v before the update, whose dots
    // would otherwise take x's raw (huge or tiny) products.
    T beta = alpha, t = 0, scale = 0;
    const bool usual = BATCHLA_QR_ENGINE_FAST_DLARFG && DlarfgUsual(alpha, ss, beta, t, scale);
    const bool rescale = !(ss >= DlarfgRange<T>::kLo && ss <= DlarfgRange<T>::kHi);
    if (!usual) {
      const T xnorm =
          rescale ? BlockRescaledNorm<kThreads / 32>(w, m, j, ss, s.red) : Scalar<T>::Sqrt(ss);
      beta = alpha, t = 0, scale = 0;
      if (xnorm != T(0)) {
        beta = -copysign(hypot(alpha, xnorm), alpha);
        t = (beta - alpha) / beta;
        scale = T(1) / (alpha - beta);
      }
    }
    if (rescale && t != T(0)) {
      for (int i = j + 1 + threadIdx.x; i < m; i += kThreads) w(i, j) *= scale;
      __syncthreads();
    }
    ApplyReflectorInPanel<kThreads / 32>(w, m, j, end, t, rescale ? T(1) : scale, s.part);
    // Column j is not read again in this panel; the next reads are after a barrier.
    if (!rescale && t != T(0))
      for (int i = j + 1 + threadIdx.x; i < m; i += kThreads) w(i, j) *= scale;
    if (threadIdx.x == 0) {
      w(j, j) = beta;
      tau[j] = t;
    }
  }
  __syncthreads();
}

// A short panel (columns [j0, j0 + jb), rows j0..m-1 of W) in one warp's registers: lane l holds
// rows j0 + l + 32 q, q < kRowsPerLane. Used by WarpPanel and WarpOrg2r (warp 0 only).
template <typename T, int kNB, int kRowsPerLane>
struct WarpPanelRegs {
  T p[kRowsPerLane][kNB];

  __device__ __forceinline__ void Load(const Mat<T>& w, int m, int j0, int jb) {
#pragma unroll
    for (int q = 0; q < kRowsPerLane; ++q) {
      const int row = j0 + threadIdx.x + 32 * q;
#pragma unroll
      for (int c = 0; c < kNB; ++c) p[q][c] = row < m && c < jb ? w(row, j0 + c) : T(0);
    }
  }
  __device__ __forceinline__ void Store(const Mat<T>& w, int m, int j0, int jb) const {
#pragma unroll
    for (int q = 0; q < kRowsPerLane; ++q) {
      const int row = j0 + threadIdx.x + 32 * q;
#pragma unroll
      for (int c = 0; c < kNB; ++c)
        if (row < m && c < jb) w(row, j0 + c) = p[q][c];
    }
  }
  // Columns right of c: p(:, cc) -= t (v^T p(:, cc)) v (warp-wide dot products).
  __device__ __forceinline__ void ApplyRight(int c, const T (&v)[kRowsPerLane], T t) {
#pragma unroll
    for (int cc = 0; cc < kNB; ++cc) {
      if (cc <= c) continue;
      T d = 0;
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q) d += v[q] * p[q][cc];
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) d += ShflXor(d, o);
      const T td = t * d;
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q) p[q][cc] -= td * v[q];
    }
  }
};

// The panel in one warp's registers, for short panels (rows - j0 <= 32 * kRowsPerLane): lane l
// holds rows j0 + l + 32 q of the panel's columns; every reduction is a warp shuffle, so the
// panel costs no block barrier (the other warps wait at the one barrier at the end). Same
// reflectors as FactorPanel (LAPACK dlarfg, launch.h).
template <typename T, int kThreads, int kNB, int kRowsPerLane>
__device__ void WarpPanel(const Mat<T>& w, int m, int j0, int jb, T* tau) {
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    WarpPanelRegs<T, kNB, kRowsPerLane> r;
    T (&p)[kRowsPerLane][kNB] = r.p;
    r.Load(w, m, j0, jb);
#pragma unroll
    for (int c = 0; c < kNB; ++c) {
      if (c >= jb) break;
      // Row j0 + c is lane c's q = 0; rows below it are lanes > c of q = 0 and every q > 0.
      T x[kRowsPerLane], ss = 0;
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q) {
        x[q] = q > 0 || lane > c ? p[q][c] : T(0);
        ss += x[q] * x[q];
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) ss += ShflXor(ss, o);
      const T alpha = ShflIdx(p[0][c], c);
      // v is scaled before ApplyRight's dots, so only ||x|| needs the rescaling (a uniform branch).
      T beta = alpha, t = 0, scale = 0;
      if (!(BATCHLA_QR_ENGINE_FAST_DLARFG && DlarfgUsual(alpha, ss, beta, t, scale))) {  // uniform
        const bool in_range = ss >= DlarfgRange<T>::kLo && ss <= DlarfgRange<T>::kHi;
        const T xnorm = in_range ? Scalar<T>::Sqrt(ss) : WarpRescaledNorm(x, ss);
        beta = alpha, t = 0, scale = 0;
        if (xnorm != T(0)) {
          beta = -copysign(hypot(alpha, xnorm), alpha);
          t = (beta - alpha) / beta;
          scale = T(1) / (alpha - beta);
        }
      }
      T v[kRowsPerLane];
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q)
        v[q] = q > 0 || lane > c ? p[q][c] * scale : T(q == 0 && lane == c);
      r.ApplyRight(c, v, t);  // H = I - t v v^T on the columns right of c
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q) {
        if (t != T(0) && (q > 0 || lane > c)) p[q][c] = v[q];
        if (q == 0 && lane == c) p[q][c] = beta;
      }
      if (lane == 0) tau[j0 + c] = t;
    }
    r.Store(w, m, j0, jb);
  }
  __syncthreads();
}

// T of the block reflector of the jb reflectors in `v` (rows 0..rows-1, unit lower trapezoidal),
// with taus `tau`: T(i, i) = tau_i, T(0:i, i) = -tau_i T(0:i, 0:i) V(:, 0:i)^T v_i. Ends with a
// barrier.
template <typename T, int kThreads, int kNB>
__device__ void BuildT(const Mat<T>& v, int rows, int jb, const T* tau, Scratch<T, kThreads, kNB>& s) {
  // Gram G(a, b) = V(:, a)^T V(:, b): lane group of kNB lanes = b, slices of rows.
  constexpr int kSlices = kThreads / kNB;
  const int b = threadIdx.x % kNB, slice = threadIdx.x / kNB;
  T acc[kNB];
#pragma unroll
  for (int a = 0; a < kNB; ++a) acc[a] = 0;
  if (b < jb) {
    const T* vp = v.p + (b + slice) * v.ld;  // rows r >= b > a: V(r, a) is stored
    for (int r = b + slice; r < rows; r += kSlices, vp += kSlices * v.ld) {
      const T vb = r == b ? T(1) : vp[b];
#pragma unroll
      for (int a = 0; a < kNB; ++a)
        if (a < b) acc[a] += vp[a] * vb;
    }
  }
#pragma unroll
  for (int a = 0; a < kNB; ++a) s.part[(slice * kNB + a) * kNB + b] = acc[a];
  __syncthreads();
  for (int e = threadIdx.x; e < kNB * kNB; e += kThreads) {
    const int a = e / kNB, bb = e % kNB;
    T g = 0;
    for (int q = 0; q < kSlices; ++q) g += s.part[(q * kNB + a) * kNB + bb];
    s.g[a][bb] = g;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    for (int i = 0; i < jb; ++i) {
      if (lane < i) {
        T x = 0;
        for (int c = lane; c < i; ++c) x += s.t[lane][c] * s.g[c][i];
        s.t[lane][i] = -tau[i] * x;
      } else if (lane == i) {
        s.t[i][i] = tau[i];
      }
      __syncwarp();
    }
  }
  __syncthreads();
}

// The bulk of a block-reflector pass: rows r0, r0 + step, ... < rows of column k of C, all below the
// unit-triangular top of V (so V(r, t) is stored). Pointer walks keep the index math out of the
// loop; kFull (jb == kNB, every panel but maybe the last) drops the per-column predicate.
template <typename T, int kNB, bool kFull, typename I>
__device__ __forceinline__ void BulkDots(const Mat<T>& v, const Mat<T, I>& c, int k, int r0, int rows,
                                         int step, int jb, T (&acc)[kNB]) {
  const T* vp = v.p + r0 * v.ld;
  const T* cp = c.p + r0 * c.ld + k;
  const int vs = step * v.ld;
  const I cs = step * c.ld;
#pragma unroll 2
  for (int r = r0; r < rows; r += step, vp += vs, cp += cs) {
    const T x = *cp;
#pragma unroll
    for (int t = 0; t < kNB; ++t)
      if (kFull || t < jb) acc[t] += vp[t] * x;
  }
}
template <typename T, int kNB, bool kFull, typename I>
__device__ __forceinline__ void BulkUpdate(const Mat<T>& v, const Mat<T, I>& c, int k, int r0, int rows,
                                           int step, int jb, const T (&z)[kNB]) {
  const T* vp = v.p + r0 * v.ld;
  T* cp = c.p + r0 * c.ld + k;
  const int vs = step * v.ld;
  const I cs = step * c.ld;
#pragma unroll 2
  for (int r = r0; r < rows; r += step, vp += vs, cp += cs) {
    T x = *cp;
#pragma unroll
    for (int t = 0; t < kNB; ++t)
      if (kFull || t < jb) x -= vp[t] * z[t];
    *cp = x;
  }
}

// C <- (I - V op(T) V^T) C for the panel in `v` (rows 0..rows-1, jb reflectors) and the
// rows x nc matrix `c`; op(T) = T^T when `trans` (applies Q_panel^T), else T (applies Q_panel).
// Thread = (column, row slice); columns in chunks of up to kThreads. Ends with a barrier.
template <typename T, int kThreads, int kNB, typename I>
__device__ void ApplyBlock(const Mat<T>& v, int rows, int jb, const Mat<T, I>& c, int nc, bool trans,
                           Scratch<T, kThreads, kNB>& s) {
  if (nc <= 0) return;
  const int kc_width = nc >= kThreads ? kThreads : RoundUp(nc, 32);
  const int slices = kThreads / kc_width;
  const int kc = threadIdx.x % kc_width, slice = threadIdx.x / kc_width;
  const int top = jb < rows ? jb : rows;
  for (int base = 0; base < nc; base += kc_width) {
    const int k = base + kc;
    const bool active = k < nc && slice < slices;
    T acc[kNB];
#pragma unroll
    for (int t = 0; t < kNB; ++t) acc[t] = 0;
    if (active) {
      for (int r = slice; r < top; r += slices) {  // the unit-triangular top of V
        const T x = c(r, k);
#pragma unroll
        for (int t = 0; t < kNB; ++t)
          if (t < jb) acc[t] += VAt(v, r, t) * x;
      }
      const int r0 = FirstRow(top, slice, slices);
      if (jb == kNB) BulkDots<T, kNB, true>(v, c, k, r0, rows, slices, jb, acc);
      else BulkDots<T, kNB, false>(v, c, k, r0, rows, slices, jb, acc);
#pragma unroll
      for (int t = 0; t < kNB; ++t) s.part[(slice * kNB + t) * kc_width + kc] = acc[t];
    }
    __syncthreads();
    for (int e = threadIdx.x; e < jb * kc_width; e += kThreads) {  // reduce the slices in place
      const int t = e / kc_width, col = e % kc_width;
      T y = s.part[t * kc_width + col];
      for (int q = 1; q < slices; ++q) y += s.part[(q * kNB + t) * kc_width + col];
      s.part[t * kc_width + col] = y;
    }
    __syncthreads();
    if (active) {
      T y[kNB], z[kNB];
#pragma unroll
      for (int t = 0; t < kNB; ++t) y[t] = t < jb ? s.part[t * kc_width + kc] : T(0);
#pragma unroll
      for (int t = 0; t < kNB; ++t) {  // z = op(T) y, T upper triangular
        T x = 0;
#pragma unroll
        for (int q = 0; q < kNB; ++q)
          if (q < jb && (trans ? q <= t : q >= t)) x += (trans ? s.t[q][t] : s.t[t][q]) * y[q];
        z[t] = t < jb ? x : T(0);
      }
      for (int r = slice; r < top; r += slices) {
        T x = c(r, k);
#pragma unroll
        for (int t = 0; t < kNB; ++t)
          if (t < jb) x -= VAt(v, r, t) * z[t];
        c(r, k) = x;
      }
      const int r0 = FirstRow(top, slice, slices);
      if (jb == kNB) BulkUpdate<T, kNB, true>(v, c, k, r0, rows, slices, jb, z);
      else BulkUpdate<T, kNB, false>(v, c, k, r0, rows, slices, jb, z);
    }
    __syncthreads();
  }
}

// Householder QR of the m x n leading columns of W; the reflectors are applied to all `ncols`
// columns (ncols > n carries a right-hand side along: W(:, n:) becomes Q^T B).
// kRowsPerLane > 0: panels of at most 32 * kRowsPerLane rows are factored by one warp (WarpPanel).
template <int kRowsPerLane, typename T, int kThreads, int kNB>
__device__ void Factor(const Mat<T>& w, int m, int n, int ncols, Scratch<T, kThreads, kNB>& s) {
  for (int j0 = 0; j0 < n; j0 += kNB) {
    const int jb = n - j0 < kNB ? n - j0 : kNB;
    if (kRowsPerLane > 0 && m - j0 <= 32 * kRowsPerLane)
      WarpPanel<T, kThreads, kNB, (kRowsPerLane > 0 ? kRowsPerLane : 1)>(w, m, j0, jb, s.tau);
    else
      FactorPanel(w, m, j0, jb, s.tau, s);
    if (j0 + jb < ncols) {
      const Mat<T> v = w.At(j0, j0);
      BuildT(v, m - j0, jb, s.tau + j0, s);
      ApplyBlock(v, m - j0, jb, w.At(j0, j0 + jb), ncols - j0 - jb, /*trans=*/true, s);
    }
  }
}

// org2r of a short panel in one warp's registers (as WarpPanel): columns [j0, j0 + jb) of W,
// holding reflectors below the diagonal, become those columns of Q (rows >= j0; the caller zeroes
// the rows above). The columns right of the panel must already have the panel's reflectors.
template <typename T, int kNB, int kRowsPerLane>
__device__ void WarpOrg2r(const Mat<T>& w, int m, int j0, int jb, const T* tau) {
  if (threadIdx.x < 32) {
    const int lane = threadIdx.x;
    WarpPanelRegs<T, kNB, kRowsPerLane> r;
    T (&p)[kRowsPerLane][kNB] = r.p;
    r.Load(w, m, j0, jb);
#pragma unroll
    for (int c = kNB - 1; c >= 0; --c) {
      if (c >= jb) continue;
      const T t = tau[j0 + c];
      T v[kRowsPerLane];  // rows below j0 + c: stored; row j0 + c: 1; rows above: 0
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q) v[q] = q > 0 || lane > c ? p[q][c] : T(q == 0 && lane == c);
      r.ApplyRight(c, v, t);
#pragma unroll
      for (int q = 0; q < kRowsPerLane; ++q) p[q][c] = q == 0 && lane == c ? T(1) - t : -t * v[q];
    }
    r.Store(w, m, j0, jb);
  }
}

// In place: W (m x n) holding k reflectors below its diagonal (taus in s.tau) becomes the first
// n columns of Q = H_0 ... H_{k-1} (LAPACK orgqr: panels backwards).
template <int kRowsPerLane, typename T, int kThreads, int kNB>
__device__ void FormQ(const Mat<T>& w, int m, int n, int k, Scratch<T, kThreads, kNB>& s) {
  for (int e = threadIdx.x; e < m * (n - k); e += kThreads) {  // columns past the reflectors: I
    const int i = e / (n - k), j = k + e % (n - k);
    w(i, j) = T(i == j);
  }
  __syncthreads();
  for (int j0 = (k - 1) / kNB * kNB; k > 0 && j0 >= 0; j0 -= kNB) {
    const int jb = k - j0 < kNB ? k - j0 : kNB, end = j0 + jb;
    const Mat<T> v = w.At(j0, j0);
    if (end < n) {
      BuildT(v, m - j0, jb, s.tau + j0, s);
      ApplyBlock(v, m - j0, jb, w.At(j0, end), n - end, /*trans=*/false, s);
    }
    if (kRowsPerLane > 0 && m - j0 <= 32 * kRowsPerLane) {
      WarpOrg2r<T, kNB, (kRowsPerLane > 0 ? kRowsPerLane : 1)>(w, m, j0, jb, s.tau);
      for (int e = threadIdx.x; e < j0 * jb; e += kThreads) w(e / jb, j0 + e % jb) = T(0);
      __syncthreads();
      continue;
    }
    for (int j = end - 1; j >= j0; --j) {  // org2r inside the panel
      const T tau = s.tau[j];
      ApplyReflectorInPanel<kThreads / 32>(w, m, j, end, tau, T(1), s.part);
      for (int i = j + 1 + threadIdx.x; i < m; i += kThreads) w(i, j) *= -tau;
      if (threadIdx.x == 0) w(j, j) = T(1) - tau;
      for (int i = threadIdx.x; i < j; i += kThreads) w(i, j) = T(0);
      __syncthreads();  // column j is read by the next reflector's apply
    }
  }
}

// ---- staging ----------------------------------------------------------------------------------
// dst(i, c0 + j) = src[i * cols + j] for an m x cols block of src (contiguous, row-major);
// element counts in I, the index type of dst (m * cols can pass 2^31 only when I is int64_t).
template <typename T, typename I>
__device__ void LoadBlock(const T* __restrict__ src, int m, int cols, const Mat<T, I>& dst, int c0) {
  for (I e = threadIdx.x; e < I(m) * cols; e += blockDim.x)
    dst(int(e / cols), c0 + int(e % cols)) = src[e];
}
// dst[i * cols + j] = src(i, c0 + j), or 0 below the diagonal when `upper_only`.
template <typename T, typename I>
__device__ void StoreBlock(const Mat<T, I>& src, int c0, int m, int cols, T* __restrict__ dst,
                           bool upper_only = false) {
  for (I e = threadIdx.x; e < I(m) * cols; e += blockDim.x) {
    const int i = int(e / cols), j = int(e % cols);
    dst[e] = upper_only && j < i ? T(0) : src(i, c0 + j);
  }
}
template <typename T>
__device__ void LoadVector(const T* __restrict__ src, int count, T* dst) {
  for (int e = threadIdx.x; e < count; e += blockDim.x) dst[e] = src[e];
}

// x = R^-1 C for the upper triangle R of s(0:n, 0:n) and C = s(0:n, n:n+k), by column-oriented
// back substitution in place (one barrier per row), then x (n x k, row-major) = C. Block-wide,
// any block size; a zero R(j, j) gives inf/NaN in x, as LAPACK trtrs would not but jnp does.
template <typename T>
__device__ void SolveUpper(const Mat<T>& s, int n, int k, T* __restrict__ x) {
  for (int j = n - 1; j >= 0; --j) {
    // Row j of C is final once every row above has read it (the barrier below); x_j = c_j / R(j, j)
    // is recomputed by each reader instead of broadcast.
    const T rjj = s(j, j);
    for (int e = threadIdx.x; e < j * k; e += blockDim.x) {
      const int i = e / k, c = n + e % k;
      s(i, c) -= s(i, j) * (s(j, c) / rjj);
    }
    __syncthreads();
    for (int c = threadIdx.x; c < k; c += blockDim.x) s(j, n + c) /= rjj;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < n * k; e += blockDim.x) x[e] = s(e / k, n + e % k);
}

// Least squares from the factored [A | B] (B's columns n..n+k-1 hold Q^T b): rdiag, resid, x.
template <typename T, int kThreads, int kNB>
__device__ void SolveLstsq(const Mat<T>& w, int m, int n, int k, int64_t b, const QrArgs<T>& args,
                           Scratch<T, kThreads, kNB>& s) {
  for (int j = threadIdx.x; j < n; j += kThreads) args.rdiag[b * n + j] = w(j, j);
  for (int c = 0; c < k; ++c) {
    T ss = 0;
    for (int i = n + threadIdx.x; i < m; i += kThreads) ss += w(i, n + c) * w(i, n + c);
    ss = BlockSum<kThreads / 32>(ss, s.red);
    if (threadIdx.x == 0) args.resid[b * k + c] = ss;
    __syncthreads();  // red is reused
  }
  SolveUpper(w, n, k, args.x + b * int64_t(n) * k);
}

// ---- kernels: a block per matrix, grid-stride over the batch -------------------------------------
template <typename S>
__device__ __forceinline__ S& ScratchOf(unsigned char* smem) {
  return *reinterpret_cast<S*>(smem);
}
template <typename T, typename S>
__device__ __forceinline__ T* SmemMatrix(unsigned char* smem) {
  return reinterpret_cast<T*>(smem + sizeof(S));
}
__host__ __device__ constexpr inline int SmemLd(int ncols) { return ncols | 1; }

// Every QrOutput; kInSmem = false only for kGeqrf (then W is args.qr).
template <typename T, int kThreads, int kNB, int kRowsPerLane, bool kInSmem>
__global__ void __launch_bounds__(kThreads) FactorKernel(QrArgs<T> args, QrOutput out) {
  using S = Scratch<T, kThreads, kNB>;
  extern __shared__ __align__(16) unsigned char smem[];
  S& s = ScratchOf<S>(smem);
  const int m = args.m, n = args.n, k = out == QrOutput::kLstsq ? args.k : 0;
  const int64_t mn = int64_t(m) * n;
  for (int64_t b = blockIdx.x; b < args.batch; b += gridDim.x) {
    const T* a = args.a + b * mn;
    const Mat<T> w = kInSmem ? Mat<T>{SmemMatrix<T, S>(smem), SmemLd(n + k)} : Mat<T>{args.qr + b * mn, n};
    if (kInSmem || w.p != a) LoadBlock(a, m, n, w, 0);
    if (k > 0) LoadBlock(args.b + b * m * k, m, k, w, n);
    __syncthreads();
    Factor<kRowsPerLane>(w, m, n, n + k, s);
    switch (out) {
      case QrOutput::kGeqrf:
        if (kInSmem) StoreBlock(w, 0, m, n, args.qr + b * mn);
        for (int j = threadIdx.x; j < n; j += kThreads) args.taus[b * n + j] = s.tau[j];
        break;
      case QrOutput::kR:
        StoreBlock(w, 0, n, n, args.r + b * n * n, /*upper_only=*/true);
        break;
      case QrOutput::kQr:
        StoreBlock(w, 0, n, n, args.r + b * n * n, /*upper_only=*/true);
        __syncthreads();
        FormQ<kRowsPerLane>(w, m, n, n, s);
        StoreBlock(w, 0, m, n, args.q + b * mn);
        break;
      case QrOutput::kLstsq:
        SolveLstsq(w, m, n, k, b, args, s);
        break;
    }
    __syncthreads();  // W and the scratch are reused by the next matrix
  }
}

template <typename T, int kThreads, int kNB, bool kInSmem>
__global__ void __launch_bounds__(kThreads)
    OrgqrKernel(const T* a, const T* taus, T* q, int64_t batch, int m, int n, int k) {
  using S = Scratch<T, kThreads, kNB>;
  extern __shared__ __align__(16) unsigned char smem[];
  S& s = ScratchOf<S>(smem);
  const int64_t mn = int64_t(m) * n;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const Mat<T> w = kInSmem ? Mat<T>{SmemMatrix<T, S>(smem), SmemLd(n)} : Mat<T>{q + b * mn, n};
    if (kInSmem || w.p != a + b * mn) LoadBlock(a + b * mn, m, n, w, 0);
    LoadVector(taus + b * k, k, s.tau);
    __syncthreads();
    FormQ<0>(w, m, n, k, s);
    if (kInSmem) StoreBlock(w, 0, m, n, q + b * mn);
    __syncthreads();
  }
}

// I: index type of C (int64_t when C is in global memory and m * p > INT32_MAX; see Mat).
template <typename T, int kThreads, int kNB, bool kInSmem, typename I = int>
__global__ void __launch_bounds__(kThreads)
    OrmqrKernel(const T* a, const T* taus, const T* c, T* x, int64_t batch, int m, int n, int k,
                int p, bool trans) {
  using S = Scratch<T, kThreads, kNB>;
  extern __shared__ __align__(16) unsigned char smem[];
  S& s = ScratchOf<S>(smem);
  const int64_t mn = int64_t(m) * n, mp = int64_t(m) * p;
  for (int64_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const Mat<T> v{const_cast<T*>(a + b * mn), n};  // only read
    const Mat<T, I> w = kInSmem ? Mat<T, I>{SmemMatrix<T, S>(smem), SmemLd(p)} : Mat<T, I>{x + b * mp, p};
    if (kInSmem || w.p != c + b * mp) LoadBlock(c + b * mp, m, p, w, 0);
    LoadVector(taus + b * k, k, s.tau);
    __syncthreads();
    const int panels = (k + kNB - 1) / kNB;
    for (int i = 0; i < panels; ++i) {  // Q^T c: H_0 first; Q c: H_{k-1} first
      const int j0 = (trans ? i : panels - 1 - i) * kNB, jb = k - j0 < kNB ? k - j0 : kNB;
      BuildT(v.At(j0, j0), m - j0, jb, s.tau + j0, s);
      ApplyBlock(v.At(j0, j0), m - j0, jb, w.At(j0, 0), p, trans, s);
    }
    if (kInSmem) StoreBlock(w, 0, m, p, x + b * mp);
    __syncthreads();
  }
}

}  // namespace qr_engine
}  // namespace detail
}  // namespace batchla
