// Panel class of the batched Householder QR (cuda/qr_dispatch.h): kR and kGeqrf for
// tuning::kQrPanelMinM < m <= kQrPanelMaxM. One block per matrix, the matrix in shared memory; right-
// looking in panels of kNB = 16 reflectors:
//   panel     one warp factors the panel in registers (WarpPanel: rows spread over the lanes,
//             a runtime loop over the columns, the sixteen dots of a step reduced together; no
//             block barrier inside), overlapped with the rest of the previous panel's update
//             (lookahead, Factor);
//   trailing  every thread owns one column c (kSplit threads share it): w = V^T a_c, then the
//             reflectors' sequential effect z_t = tau_t (w_t - sum_{s<t} (v_s^T v_t) z_s), then
//             a_c -= V z. The panel's own columns give the Gram matrix v_s^T v_t in the same pass,
//             so no T factor is formed and a panel costs three block barriers (the engine's
//             NB = 4 panels cost about seven each and a shared-memory reduction per pass). The
//             next panel's columns, on warp 0's path, are updated by all of warp 0 (two lanes a
//             column).
//   copy in   cp.async, the first panel's columns as their own group: the rest of the matrix
//             lands while warp 0 factors the first panel.
// Measured versions and what bounds the class: bench/NOTES.md "Panel class" .. "Panel class v10".
// The row stride is chosen so that a row's 16 panel entries are 16-byte aligned vector loads and
// the warp panel's loads are free of bank conflicts.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/common.cuh"
#include "cuda/qr_dispatch.h"
#include "cuda/qr_dlarfg.cuh"
#include "cuda/qr_engine.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {
namespace qr_panel {

using qr_engine::Mat;

constexpr int kNB = 16;  // reflectors per panel

// Row stride in elements: a multiple of 16 bytes (vector loads of V's rows) and 16 bytes more than
// a multiple of 32 (eight lanes reading 16 B of eight consecutive rows hit distinct banks); at
// least the panel-rounded width, so a last, narrower panel reads zeros right of column n.
template <typename T>
__host__ __device__ constexpr int PanelLd(int n) {
  return RoundUp(n, kNB) + 16 / int(sizeof(T));
}

// Shared memory besides the matrix (a multiple of 16 bytes: the matrix follows it).
template <typename T>
struct alignas(16) Scratch {
  T tau[tuning::kQrPanelCapM];
  alignas(16) T gram[kNB][kNB];  // gram[s][t] = v_s^T v_t for s < t of the current panel
  alignas(16) T row[2][kNB];     // WarpPanel: the current row, for the lanes that finish the dots
};

template <typename T>
size_t SmemBytes(int m, int n) {
  return sizeof(Scratch<T>) + size_t(m) * PanelLd<T>(n) * sizeof(T);
}

// kCount consecutive elements from a 16-byte aligned address, as 16-byte loads.
template <int kCount, typename T>
__device__ __forceinline__ void LoadRow(const T* p, T (&out)[kCount]) {
  constexpr int kPer = Vec16<T>::kN;
  static_assert(kCount % kPer == 0, "whole 16-byte vectors");
#pragma unroll
  for (int v = 0; v < kCount / kPer; ++v) Vec16<T>::Load(p + kPer * v, out + kPer * v);
}

template <int kCount, typename T>
__device__ __forceinline__ void StoreRow(T* p, const T (&in)[kCount]) {
  constexpr int kPer = Vec16<T>::kN;
#pragma unroll
  for (int v = 0; v < kCount / kPer; ++v) Vec16<T>::Store(p + kPer * v, in + kPer * v);
}

// Columns [c0, c1) of the m x n row-major matrix at src into a (row stride a.ld) as one cp.async
// commit group: the whole range in flight at once, no registers. 16-byte copies when every row is
// whole vectors (c0, c1 then multiples of the vector), else an element each. The (row, unit) grid is
// walked by increments: a division per element was a tenth of the kernel's stall samples (ncu).
template <typename T, int kThreads>
__device__ void CopyColumnsAsync(const T* __restrict__ src, int m, int n, int c0, int c1, const Mat<T>& a) {
  constexpr int kVec = 16 / sizeof(T);
  const bool vec = n % kVec == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0;
  const int unit = vec ? kVec : 1, width = (c1 - c0) / unit;  // copies a row
  if (width > 0) {
    const int di = kThreads / width, dj = kThreads % width;
    for (int i = threadIdx.x / width, j = threadIdx.x % width; i < m;) {
      const int col = c0 + j * unit;
      if (vec) CpAsync<16>(&a(i, col), src + i * n + col);
      else CpAsync<sizeof(T)>(&a(i, col), src + i * n + col);
      i += di, j += dj;
      if (j >= width) j -= width, ++i;
    }
  }
  CpAsyncCommit();
}

// Rows [0, rows) of a (n columns) to dst (row-major), zeros below the diagonal when upper_only.
template <typename T, int kThreads>
__device__ void StoreMatrix(const Mat<T>& a, int rows, int n, T* __restrict__ dst, bool upper_only) {
  constexpr int kVec = 16 / sizeof(T);
  using V = typename Vec16<T>::type;
  if (n % kVec == 0 && reinterpret_cast<uintptr_t>(dst) % 16 == 0) {
    const int width = n / kVec;
    for (int e = threadIdx.x; e < rows * width; e += kThreads) {
      const int i = e / width, j0 = e % width * kVec;
      V x = *reinterpret_cast<const V*>(&a(i, j0));
      T* xs = reinterpret_cast<T*>(&x);
#pragma unroll
      for (int u = 0; u < kVec; ++u)
        if (upper_only && j0 + u < i) xs[u] = T(0);
      reinterpret_cast<V*>(dst)[e] = x;
    }
    return;
  }
  for (int e = threadIdx.x; e < rows * n; e += kThreads) {
    const int i = e / n, j = e % n;
    dst[e] = upper_only && j < i ? T(0) : a(i, j);
  }
}

// Sum over the warp of each of the kNB values x[k], as a reduce-scatter: after the five
// butterfly stages lane l holds the total of x[(l >> 1) & (kNB - 1)] (16 shuffles for all
// sixteen sums, where sixteen butterflies would take 80).
template <typename T>
__device__ __forceinline__ T WarpReduceScatter16(const T (&x)[kNB]) {
  static_assert(kNB == 16, "five stages: 16 values over 32 lanes");
  const int lane = threadIdx.x & 31;
  T y8[8], y4[4], y2[2];
  const bool b4 = lane & 16, b3 = lane & 8, b2 = lane & 4, b1 = lane & 2;
#pragma unroll
  for (int i = 0; i < 8; ++i) y8[i] = (b4 ? x[i + 8] : x[i]) + ShflXor(b4 ? x[i] : x[i + 8], 16);
#pragma unroll
  for (int i = 0; i < 4; ++i) y4[i] = (b3 ? y8[i + 4] : y8[i]) + ShflXor(b3 ? y8[i] : y8[i + 4], 8);
#pragma unroll
  for (int i = 0; i < 2; ++i) y2[i] = (b2 ? y4[i + 2] : y4[i]) + ShflXor(b2 ? y4[i] : y4[i + 2], 4);
  const T y1 = (b1 ? y2[1] : y2[0]) + ShflXor(b1 ? y2[0] : y2[1], 2);
  return y1 + ShflXor(y1, 1);
}

// Unblocked Householder (LAPACK geqr2 / dlarfg conventions) of the kNB columns [j0, j0 + kNB) of
// a, rows j0..m-1, by the calling warp: lane l holds rows j0 + l + 32 q, q < kR, in registers
// (rows past m as zeros). A runtime loop over the columns (unrolled, the panel was ~3-4 k
// instructions run once each: ncu showed half the panel's stalls waiting for instruction fetch):
// the register array shifts left by one column per step, so p[.][0] is always the current column
// and p[.][k] the k-th after it (zeros past the panel). Columns past n are zero padding and give
// tau = 0. Each column goes back to shared memory (V below the diagonal, R on and above) when
// done; the taus to tau[].
// The dots of a step are taken with the column x below the diagonal as it is, not with v, so they
// do not wait for the reflector: d_k = v^T p(:, k) = scale U_k + P(c, k) with U_k = x^T p(:, k)
// and P(c, k) row c's entry (from shared memory, `row`). The reflector's norm (a butterfly) and
// the dots' reduce-scatter then run side by side: a column's chain is one reduction, the dlarfg
// arithmetic and one broadcast, where the reflector-first order took two reductions.
template <typename T, int kR>
__device__ __forceinline__ void WarpPanel(const Mat<T>& a, int m, int j0, T* tau, T (*row)[kNB]) {
  const int lane = threadIdx.x & 31;
  T p[kR][kNB];
#pragma unroll
  for (int q = 0; q < kR; ++q) {
    const int r = j0 + lane + 32 * q;
    if (r < m) {
      LoadRow(&a(r, j0), p[q]);
    } else {
#pragma unroll
      for (int c = 0; c < kNB; ++c) p[q][c] = T(0);
    }
  }
#pragma unroll 1
  for (int c = 0; c < kNB; ++c) {
    // Row j0 + c is lane c's q = 0; the rows below it are lanes > c of q = 0 and every q > 0.
    const bool below0 = lane > c;
    // Two buffers: the reads of this buffer at step c - 2 come before step c - 1's __syncwarp.
    T* const current_row = row[c & 1];
    if (lane == c) StoreRow(current_row, p[0]);
    T x[kR];
    x[0] = below0 ? p[0][0] : T(0);
#pragma unroll
    for (int q = 1; q < kR; ++q) x[q] = p[q][0];
    T u[kNB];  // u[0] = x^T x, the sum of squares below the diagonal
#pragma unroll
    for (int k = 0; k < kNB; ++k) {
      u[k] = 0;
#pragma unroll
      for (int q = 0; q < kR; ++q) u[k] = fma(x[q], p[q][k], u[k]);
    }
    __syncwarp();
    const int my_k = (lane >> 1) & (kNB - 1);  // the dot WarpReduceScatter16 leaves in this lane
    const T p_ck = current_row[my_k];
    const T ss = LanesSum<32>(u[0]);
    const T u_k = WarpReduceScatter16(u);
    const T alpha = ShflIdx(p[0][0], c);
    T beta, t, scale;
    const bool usual = DlarfgUsual(alpha, ss, beta, t, scale);
    bool zero = ss == T(0);  // the column is left as it is (tau = 0)
    T mine = t * fma(scale, u_k, p_ck);  // t d_k for k = my_k
    if (!usual) {
      // Outside dlarfg's safe range (a uniform branch, rare): ||x|| rescaled, LAPACK's form from
      // IEEE operations, and the dots taken again with v = scale x (x's raw products may have
      // overflowed or underflowed).
      const T xnorm = qr_engine::WarpRescaledNorm(x, ss);
      zero = xnorm == T(0);
      beta = zero ? alpha : -copysign(hypot(alpha, xnorm), alpha);
      t = zero ? T(0) : (beta - alpha) / beta;
      scale = zero ? T(0) : T(1) / (alpha - beta);
      T uv[kNB];
#pragma unroll
      for (int k = 0; k < kNB; ++k) {
        uv[k] = 0;
#pragma unroll
        for (int q = 0; q < kR; ++q) uv[k] = fma(x[q] * scale, p[q][k], uv[k]);
      }
      mine = t * (WarpReduceScatter16(uv) + p_ck);
    }
    T v[kR];
    v[0] = below0 ? x[0] * scale : T(lane == c);
#pragma unroll
    for (int q = 1; q < kR; ++q) v[q] = x[q] * scale;
    // column c is done: V below the diagonal (unchanged where tau = 0), beta on it
    p[0][0] = below0 ? (zero ? p[0][0] : v[0]) : (lane == c ? beta : p[0][0]);
#pragma unroll
    for (int q = 1; q < kR; ++q) p[q][0] = zero ? p[q][0] : v[q];
#pragma unroll
    for (int q = 0; q < kR; ++q) {
      const int r = j0 + lane + 32 * q;
      if (r < m) a(r, j0 + c) = p[q][0];
    }
    if (lane == 0) tau[j0 + c] = t;
    // H = I - t v v^T on the columns right of c, and shift left: p(:, k - 1) <- p(:, k) - t d_k v
#pragma unroll
    for (int k = 1; k < kNB; ++k) {
      const T tdk = ShflIdx(mine, 2 * k);
#pragma unroll
      for (int q = 0; q < kR; ++q) p[q][k - 1] = fma(-tdk, v[q], p[q][k]);
    }
#pragma unroll
    for (int q = 0; q < kR; ++q) p[q][kNB - 1] = T(0);
  }
}

// The panel at j0 by the calling warp, with as many rows per lane as its height needs.
template <typename T>
__device__ void FactorPanel(const Mat<T>& a, int m, int j0, Scratch<T>& s) {
  static_assert(tuning::kQrPanelCapM <= 160, "the instantiations below cover 5 rows a lane");
  switch ((m - j0 + 31) / 32) {
    case 1: return WarpPanel<T, 1>(a, m, j0, s.tau, s.row);
    case 2: return WarpPanel<T, 2>(a, m, j0, s.tau, s.row);
    case 3: return WarpPanel<T, 3>(a, m, j0, s.tau, s.row);
    case 4: return WarpPanel<T, 4>(a, m, j0, s.tau, s.row);
    default: return WarpPanel<T, 5>(a, m, j0, s.tau, s.row);
  }
}

// w[t] += sum over the rows of V (r = j0.., unit lower trapezoidal, kNB reflectors) of
// V(r, t0 + t) x(r), t < kT; x = column `col` of a, read as V when col is a panel column (the
// Gram matrix). The triangular top rows are masked; the rows below are whole vector loads.
template <int kT, typename T>
__device__ __forceinline__ void PanelDots(const Mat<T>& a, int m, int j0, int t0, int col, T (&w)[kT]) {
  const int pc = col - j0;  // < kNB: a panel column
#pragma unroll
  for (int i = 0; i < kNB; ++i) {
    const T x = pc < kNB ? (i > pc ? a(j0 + i, col) : T(i == pc)) : a(j0 + i, col);
#pragma unroll
    for (int t = 0; t < kT; ++t) {
      const int tt = t0 + t;
      const T v = i > tt ? a(j0 + i, j0 + tt) : T(i == tt);
      w[t] = fma(v, x, w[t]);
    }
  }
  const T* row = &a(j0 + kNB, j0 + t0);
  const T* x = &a(j0 + kNB, col);
#pragma unroll 2
  for (int r = j0 + kNB; r < m; ++r, row += a.ld, x += a.ld) {
    T v[kT];
    LoadRow(row, v);
    const T xr = *x;
#pragma unroll
    for (int t = 0; t < kT; ++t) w[t] = fma(v[t], xr, w[t]);
  }
}

// Dots of one column with this part's kNB / kSplit reflectors (PanelDots from zero).
template <typename T, int kSplit>
__device__ __forceinline__ void ColumnDots(const Mat<T>& a, int m, int j0, int part, int col,
                                           T (&w)[kNB / kSplit]) {
  constexpr int kT = kNB / kSplit;
#pragma unroll
  for (int t = 0; t < kT; ++t) w[t] = 0;
  PanelDots(a, m, j0, part * kT, col, w);
}

// The lanes that share this thread's column (they are active or inactive together).
template <int kSplit>
__device__ __forceinline__ unsigned OwnersMask() {
  return kSplit == 32 ? 0xffffffffu : ((1u << kSplit) - 1) << (threadIdx.x & 31 & ~(kSplit - 1));
}

// The reflectors' combined effect on one column from its dots w_t = v_t^T a_c (gathered from the
// kSplit owners): z_t = tau_t (w_t - sum_{s<t} (v_s^T v_t) z_s).
template <int kSplit, int kT, typename T>
__device__ __forceinline__ void PanelZ(const T (&w)[kT], const T* tau, const T (*gram)[kNB], T (&z)[kNB]) {
  const int owner0 = threadIdx.x & 31 & ~(kSplit - 1);  // the column's owners: lanes owner0 + part
#pragma unroll
  for (int t = 0; t < kNB; ++t) {
    const T mine = w[t % kT];
    z[t] = kSplit == 1 ? mine : ShflIdx(mine, owner0 + t / kT, 32, OwnersMask<kSplit>());
  }
#pragma unroll
  for (int t = 0; t < kNB; ++t) {
    z[t] *= tau[t];
    T g[kNB];
    LoadRow(&gram[t][0], g);
#pragma unroll
    for (int u = t + 1; u < kNB; ++u) z[u] = fma(-g[u], z[t], z[u]);
  }
}

// a(r, col) -= sum_t V(r, t) z_t for the rows r = j0 + part + kSplit i < m.
template <int kSplit, typename T>
__device__ __forceinline__ void PanelUpdate(const Mat<T>& a, int m, int j0, int part, int col,
                                            const T (&z)[kNB]) {
#pragma unroll
  for (int i = 0; i < kNB; ++i) {  // the triangular top: V(i, t) = 1 at t = i, stored left of it
    if (i % kSplit != part) continue;
    T x = a(j0 + i, col) - z[i];
#pragma unroll
    for (int t = 0; t < i; ++t) x = fma(-a(j0 + i, j0 + t), z[t], x);
    a(j0 + i, col) = x;
  }
  // Four partial sums a row: a chain of 16 dependent FMAs a row bounded the next panel's update,
  // which is on the panel warp's path (bench/NOTES.md "Panel class v7").
  constexpr int kChains = 4;
  const T* row = &a(j0 + kNB + part, j0);
  T* xp = &a(j0 + kNB + part, col);
#pragma unroll 2
  for (int r = j0 + kNB + part; r < m; r += kSplit, row += kSplit * a.ld, xp += kSplit * a.ld) {
    T v[kNB];
    LoadRow(row, v);
    T acc[kChains] = {};
#pragma unroll
    for (int t = 0; t < kNB; ++t) acc[t % kChains] = fma(v[t], z[t], acc[t % kChains]);
    *xp -= (acc[0] + acc[1]) + (acc[2] + acc[3]);
  }
}

// z and the update of one column by this part of its owners, after its dots.
template <typename T, int kSplit>
__device__ __forceinline__ void ColumnApply(const Mat<T>& a, int m, int j0, int part, int col,
                                            const T (&w)[kNB / kSplit], const Scratch<T>& s) {
  T z[kNB];
  PanelZ<kSplit>(w, s.tau + j0, s.gram, z);
  if (kSplit > 1) __syncwarp(OwnersMask<kSplit>());  // the other owners have read what this one writes
  PanelUpdate<kSplit>(a, m, j0, part, col, z);
}

// The next panel's kNB columns (j0 + kNB ..), updated by the whole of warp 0 (the panel warp, whose
// path this is on), two lanes a column with the rows split by parity. float has one dots owner a
// column (lanes 0..15; lanes 16..31 took the Gram's dots and are free now), so the upper half
// gathers its column's dots first; double has two owners a column (ColumnApply) already.
template <typename T, int kSplit>
__device__ __forceinline__ void ApplyNextPanel(const Mat<T>& a, int m, int n, int j0, T (&w)[kNB / kSplit],
                                               const Scratch<T>& s) {
  static_assert(2 * kNB == 32 && (kSplit == 1 || kSplit == 2), "two lanes a column");
  const int lane = threadIdx.x & 31;
  if constexpr (kSplit == 1) {
    const int c = lane % kNB, col = j0 + kNB + c;
#pragma unroll
    for (int t = 0; t < kNB; ++t) w[t] = ShflIdx(w[t], c);
    if (col >= n) return;
    T z[kNB];
    PanelZ<1>(w, s.tau + j0, s.gram, z);
    PanelUpdate<2>(a, m, j0, lane / kNB, col, z);
  } else {
    const int col = j0 + kNB + lane / kSplit;
    if (col < n) ColumnApply<T, kSplit>(a, m, j0, lane % kSplit, col, w, s);
  }
}

// Right-looking factorization with a one-panel lookahead. Per panel j0 (already factored):
//   pass 1   every thread takes the dots of its column: slots [0, kNB) the next panel's columns,
//            [kNB, 2 kNB) the panel's own columns (the Gram matrix), the rest one column of the
//            rest;
//   barrier
//   pass 2   warp 0 (the first kNB slots are at most 32 threads) updates the next panel's columns
//            (ApplyNextPanel) and factors the next panel while the other threads update the rest;
//   barrier
// Warp 0 has the panel role in every block: the hardware already gives the resident blocks' warp 0
// different schedulers (bench/warpid_probe.cu); an earlier rotation of the roles, meant to do
// that, put them all on one and cost 11 % (bench/NOTES.md "Panel class v6").
template <typename T, int kThreads, int kSplit>
__device__ void Factor(const Mat<T>& a, int m, int n, Scratch<T>& s) {
  constexpr int kSlots = kThreads / kSplit, kT = kNB / kSplit, kRest = kSlots - 2 * kNB;
  static_assert(kRest > 0 && kNB * kSplit <= 32, "slot layout");
  const int slot = threadIdx.x / kSplit, part = threadIdx.x % kSplit, warp = threadIdx.x / 32;
  // j0 = -kNB: only the first panel. FactorPanel has one call site: it is inlined once.
  for (int j0 = -kNB; j0 + kNB < n; j0 += kNB) {
    const bool update = j0 >= 0;
    const int col = slot < kNB ? j0 + kNB + slot : slot < 2 * kNB ? j0 + slot - kNB : j0 + slot;
    T w[kT];
    if (update) {
      ColumnDots<T, kSplit>(a, m, j0, part, col < n ? col : j0, w);  // (past n: any column)
      if (slot >= kNB && slot < 2 * kNB)
#pragma unroll
        for (int t = 0; t < kT; ++t) s.gram[part * kT + t][slot - kNB] = w[t];
      __syncthreads();
      if (warp == 0) ApplyNextPanel<T, kSplit>(a, m, n, j0, w, s);
    }
    if (warp == 0) {
      __syncwarp();  // the next panel's columns were updated by this warp
      FactorPanel(a, m, j0 + kNB, s);
    } else if (update && slot >= 2 * kNB) {
      for (int c = col; c < n; c += kRest) {  // more rest columns than rest slots: again
        if (c != col) ColumnDots<T, kSplit>(a, m, j0, part, c, w);
        ColumnApply<T, kSplit>(a, m, j0, part, c, w, s);
      }
    }
    CpAsyncWait<0>();  // the matrix past the first panel (FactorKernel's second copy group)
    __syncthreads();
  }
}

// Every QrOutput the class takes (kR, kGeqrf); a block per matrix, grid-stride over the batch.
template <typename T, int kThreads, int kSplit, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks) FactorKernel(QrArgs<T> args, QrOutput out) {
  extern __shared__ __align__(16) unsigned char smem[];
  Scratch<T>& s = *reinterpret_cast<Scratch<T>*>(smem);
  const int m = args.m, n = args.n, ld = PanelLd<T>(n);
  const Mat<T> a{reinterpret_cast<T*>(smem + sizeof(Scratch<T>)), ld};
  // Columns n..ld-1 are read as zeros by a last panel narrower than kNB; nothing writes them.
  for (int e = threadIdx.x; e < m * (ld - n); e += kThreads) a(e / (ld - n), n + e % (ld - n)) = T(0);
  const int64_t mn = int64_t(m) * n;
  for (int64_t b = blockIdx.x; b < args.batch; b += gridDim.x) {
    // The first panel's columns, then the rest as a second group that lands while warp 0 factors
    // the first panel (Factor waits for it before its first barrier).
    const int first = n < kNB ? n : kNB;  // a multiple of the vector when n is
    CopyColumnsAsync<T, kThreads>(args.a + b * mn, m, n, 0, first, a);
    CopyColumnsAsync<T, kThreads>(args.a + b * mn, m, n, first, n, a);
    CpAsyncWait<1>();
    __syncthreads();
    Factor<T, kThreads, kSplit>(a, m, n, s);
    if (out == QrOutput::kR) {
      StoreMatrix<T, kThreads>(a, n, n, args.r + b * int64_t(n) * n, /*upper_only=*/true);
    } else {
      StoreMatrix<T, kThreads>(a, m, n, args.qr + b * mn, /*upper_only=*/false);
      for (int j = threadIdx.x; j < n; j += kThreads) args.taus[b * n + j] = s.tau[j];
    }
    __syncthreads();  // the matrix and the taus are reused by the next one
  }
}

// Block shape per scalar type: float keeps three 128 x 128 matrices resident per SM (a thread a
// column, at most 168 registers); a double matrix of that size fills an SM's shared memory, so its
// block has 256 threads, two a column.
template <typename T>
struct Shape;
template <>
struct Shape<float> {
  static constexpr int kThreads = 128, kSplit = 1, kMinBlocks = 3;
};
template <>
struct Shape<double> {
  static constexpr int kThreads = 256, kSplit = 2, kMinBlocks = 1;
};

}  // namespace qr_panel

template <typename T>
bool QrPanelTakes(int m, int ncols, QrOutput out) {
  return (out == QrOutput::kR || out == QrOutput::kGeqrf) && m > tuning::kQrPanelMinM.Of(sizeof(T) == 8) &&
         m <= tuning::kQrPanelMaxM && qr_panel::SmemBytes<T>(m, ncols) <= SmemOptin();
}

template <typename T>
cudaError_t QrPanel(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  using S = qr_panel::Shape<T>;
  return LaunchBlocks(qr_panel::FactorKernel<T, S::kThreads, S::kSplit, S::kMinBlocks>, S::kThreads,
                      qr_panel::SmemBytes<T>(args.m, args.n), stream, args.batch, args, out);
}

}  // namespace detail
}  // namespace batchla
