// Panel class of the batched Householder QR (cuda/qr_dispatch.h): kR and kGeqrf for
// tuning::kQrPanelMinM < m <= kQrPanelMaxM. One block per matrix, the matrix in shared memory; right-
// looking in panels of kNB = 16 reflectors:
//   panel     one warp factors the panel in registers (qr_engine::WarpPanel: rows spread over the
//             lanes, reductions by shuffles, no block barrier inside);
//   trailing  every thread owns one column c (kSplit threads share it): w = V^T a_c, then the
//             reflectors' sequential effect z_t = tau_t (w_t - sum_{s<t} (v_s^T v_t) z_s), then
//             a_c -= V z. The panel's own columns give the Gram matrix v_s^T v_t in the same pass,
//             so no T factor is formed and a panel costs three block barriers (the engine's
//             NB = 4 panels cost about seven each and a shared-memory reduction per pass).
// The row stride is chosen so that a row's 16 panel entries are 16-byte aligned vector loads and
// the warp panel's loads are free of bank conflicts.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/common.cuh"
#include "cuda/qr_dispatch.h"
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
};

template <typename T>
size_t SmemBytes(int m, int n) {
  return sizeof(Scratch<T>) + size_t(m) * PanelLd<T>(n) * sizeof(T);
}

// kCount consecutive elements from a 16-byte aligned address, as 16-byte loads.
template <int kCount, typename T>
__device__ __forceinline__ void LoadRow(const T* p, T (&out)[kCount]) {
  constexpr int kPer = 16 / sizeof(T);
  static_assert(kCount % kPer == 0, "whole 16-byte vectors");
#pragma unroll
  for (int v = 0; v < kCount / kPer; ++v) {
    if constexpr (sizeof(T) == 4) {
      const float4 x = reinterpret_cast<const float4*>(p)[v];
      out[4 * v] = x.x, out[4 * v + 1] = x.y, out[4 * v + 2] = x.z, out[4 * v + 3] = x.w;
    } else {
      const double2 x = reinterpret_cast<const double2*>(p)[v];
      out[2 * v] = x.x, out[2 * v + 1] = x.y;
    }
  }
}

// The m x n row-major matrix at src into a (row stride a.ld), kInFlight loads a thread in flight;
// 16-byte loads when every row is whole vectors (n a multiple of 16 / sizeof(T)).
template <typename T, int kThreads>
__device__ void LoadMatrix(const T* __restrict__ src, int m, int n, const Mat<T>& a) {
  constexpr int kInFlight = 8, kVec = 16 / sizeof(T);
  using V = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
  const bool vec = n % kVec == 0 && reinterpret_cast<uintptr_t>(src) % 16 == 0;
  const int width = vec ? n / kVec : n, total = m * width;  // elements or vectors
  for (int base = 0; base < total; base += kThreads * kInFlight) {
    V x[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int e = base + u * kThreads + threadIdx.x;
      if (e >= total) continue;
      if (vec) x[u] = __ldg(reinterpret_cast<const V*>(src) + e);
      else reinterpret_cast<T*>(&x[u])[0] = __ldg(src + e);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int e = base + u * kThreads + threadIdx.x;
      if (e >= total) continue;
      const int i = e / width, j = e % width;
      if (vec) *reinterpret_cast<V*>(&a(i, j * kVec)) = x[u];
      else a(i, j) = reinterpret_cast<const T*>(&x[u])[0];
    }
  }
}

// Rows [0, rows) of a (n columns) to dst (row-major), zeros below the diagonal when upper_only.
template <typename T, int kThreads>
__device__ void StoreMatrix(const Mat<T>& a, int rows, int n, T* __restrict__ dst, bool upper_only) {
  constexpr int kVec = 16 / sizeof(T);
  using V = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
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

// The panel (columns [j0, j0 + jb), rows j0..m-1) by warp 0, with as many rows per lane as the
// panel's height needs. Ends with a block barrier.
template <typename T, int kThreads>
__device__ void FactorPanel(const Mat<T>& a, int m, int j0, int jb, T* tau) {
  static_assert(tuning::kQrPanelCapM <= 160, "WarpPanel instantiations below cover 5 rows a lane");
  switch ((m - j0 + 31) / 32) {
    case 1: return qr_engine::WarpPanel<T, kThreads, kNB, 1>(a, m, j0, jb, tau);
    case 2: return qr_engine::WarpPanel<T, kThreads, kNB, 2>(a, m, j0, jb, tau);
    case 3: return qr_engine::WarpPanel<T, kThreads, kNB, 3>(a, m, j0, jb, tau);
    case 4: return qr_engine::WarpPanel<T, kThreads, kNB, 4>(a, m, j0, jb, tau);
    default: return qr_engine::WarpPanel<T, kThreads, kNB, 5>(a, m, j0, jb, tau);
  }
}

// w[t] += sum over the rows of V (r = j0.., unit lower trapezoidal, jb reflectors) of
// V(r, t0 + t) x(r), t < kT; x = column `col` of a, read as V when col is a panel column (the
// Gram matrix). The triangular top rows are masked; the rows below are whole vector loads.
template <int kT, typename T>
__device__ __forceinline__ void PanelDots(const Mat<T>& a, int m, int j0, int jb, int t0, int col,
                                          T (&w)[kT]) {
  const int pc = col - j0;  // < jb: a panel column
  for (int i = 0; i < jb; ++i) {
    const T x = pc < jb ? (i > pc ? a(j0 + i, col) : T(i == pc)) : a(j0 + i, col);
#pragma unroll
    for (int t = 0; t < kT; ++t) {
      const int tt = t0 + t;
      const T v = i > tt ? a(j0 + i, j0 + tt) : T(i == tt);
      w[t] += v * x;
    }
  }
  const T* row = &a(j0 + jb, j0 + t0);
  const T* x = &a(j0 + jb, col);
#pragma unroll 2
  for (int r = j0 + jb; r < m; ++r, row += a.ld, x += a.ld) {
    T v[kT];
    LoadRow(row, v);
    const T xr = *x;
#pragma unroll
    for (int t = 0; t < kT; ++t) w[t] += v[t] * xr;
  }
}

// a(r, col) -= sum_t V(r, t) z_t for the rows r = j0 + part + kSplit i < m.
template <int kSplit, typename T>
__device__ __forceinline__ void PanelUpdate(const Mat<T>& a, int m, int j0, int jb, int part, int col,
                                            const T (&z)[kNB]) {
#pragma unroll
  for (int i = 0; i < kNB; ++i) {  // the triangular top: V(i, t) = 1 at t = i, stored left of it
    if (i >= jb || i % kSplit != part) continue;
    T x = a(j0 + i, col) - z[i];
#pragma unroll
    for (int t = 0; t < i; ++t) x -= a(j0 + i, j0 + t) * z[t];
    a(j0 + i, col) = x;
  }
  int r = j0 + jb + ((part - jb) % kSplit + kSplit) % kSplit;
  const T* row = &a(r, j0);
  T* xp = &a(r, col);
#pragma unroll 2
  for (; r < m; r += kSplit, row += kSplit * a.ld, xp += kSplit * a.ld) {
    T v[kNB];
    LoadRow(row, v);
    T x = *xp;
#pragma unroll
    for (int t = 0; t < kNB; ++t) x -= v[t] * z[t];
    *xp = x;
  }
}

// Applies the panel's reflectors (Q_panel^T) to columns j0 + jb .. n-1, rows j0..m-1. Thread
// (slot, part): column j0 + slot (+ kSlots per further chunk); in the dot pass part owns the
// reflectors [part kT, (part + 1) kT), in the update pass the rows j0 + part + kSplit i. Ends with
// a block barrier.
template <typename T, int kThreads, int kSplit>
__device__ void UpdateTrailing(const Mat<T>& a, int m, int n, int j0, int jb, Scratch<T>& s) {
  constexpr int kSlots = kThreads / kSplit, kT = kNB / kSplit;
  const int slot = threadIdx.x / kSplit, part = threadIdx.x % kSplit;
  for (int c0 = j0; c0 < n; c0 += kSlots) {
    const int col = c0 + slot;
    T w[kT];
#pragma unroll
    for (int t = 0; t < kT; ++t) w[t] = 0;
    if (col < n) PanelDots(a, m, j0, jb, part * kT, col, w);
    if (c0 == j0) {  // the panel's columns hold the Gram matrix
      if (col < j0 + jb)
#pragma unroll
        for (int t = 0; t < kT; ++t) s.gram[part * kT + t][col - j0] = w[t];
      __syncthreads();
    }
    T z[kNB];  // first the dots of every reflector (gathered from the kSplit owners), then z
#pragma unroll
    for (int t = 0; t < kNB; ++t) {  // every lane: the shuffles need the whole warp
      const T mine = w[t % kT];
      z[t] = kSplit == 1 ? mine : ShflIdx(mine, (threadIdx.x & 31 & ~(kSplit - 1)) + t / kT);
    }
    if (kSplit > 1) __syncwarp();  // the column's other owner has read the rows this one writes
    if (col < j0 + jb || col >= n) continue;
#pragma unroll
    for (int t = 0; t < kNB; ++t) {
      z[t] = t < jb ? s.tau[j0 + t] * z[t] : T(0);
      T g[kNB];
      LoadRow(&s.gram[t][0], g);
#pragma unroll
      for (int u = t + 1; u < kNB; ++u) z[u] -= g[u] * z[t];
    }
    PanelUpdate<kSplit>(a, m, j0, jb, part, col, z);
  }
  __syncthreads();
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
    LoadMatrix<T, kThreads>(args.a + b * mn, m, n, a);
    __syncthreads();
    for (int j0 = 0; j0 < n; j0 += kNB) {
      const int jb = n - j0 < kNB ? n - j0 : kNB;
      FactorPanel<T, kThreads>(a, m, j0, jb, s.tau);
      if (j0 + jb < n) UpdateTrailing<T, kThreads, kSplit>(a, m, n, j0, jb, s);
    }
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
  return (out == QrOutput::kR || out == QrOutput::kGeqrf) && m > tuning::kQrPanelMinM &&
         m <= tuning::kQrPanelMaxM && qr_panel::SmemBytes<T>(m, ncols) <= SmemOptin();
}

template <typename T>
cudaError_t QrPanel(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  using S = qr_panel::Shape<T>;
  const auto kernel = qr_panel::FactorKernel<T, S::kThreads, S::kSplit, S::kMinBlocks>;
  const size_t smem = qr_panel::SmemBytes<T>(args.m, args.n);
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  kernel<<<GridFor(args.batch), S::kThreads, smem, stream>>>(args, out);
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
