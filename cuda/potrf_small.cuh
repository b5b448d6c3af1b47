// Batched Cholesky (potrf) and fused SPD solve (posv) kernels: tiny and small classes.
//
// Storage: ROW-MAJOR (launch.h). The loops think in ROW-MAJOR LOWER L: element (i, j), j <= i, of
// matrix b at b*n*n + i*n + j (int64_t offsets). Row-major lower L is column-major upper U.
// posv with lower == false reads the upper triangle; it is staged transposed so every kernel
// below factors a lower triangle.
//
// Failure (LAPACK potrf info): info = 1-based first pivot that is not > 0 (NaN fails). The
// factorization keeps running with garbage after a failure (no divergence); at the end a failed
// matrix gets NaN in its lower triangle (diagonal included), 0 above (potrf) or X = NaN (posv).
// Matrices never share arithmetic, so a bad matrix cannot touch a neighbour.
//
// Size classes (thresholds in cuda/tuning.h):
//   tiny   thread per matrix, template<int N>, registers, global I/O staged through shared memory
//   small  16/32-lane group per matrix, lane r holds row r, template<int N>; column j of L is
//          broadcast through shared memory (vector loads) rather than shuffles
//   wide   (cuda/potrf_wide.cuh) 64-thread block per matrix, lane per row, runtime n in 33..64
//   blocked (medium/large) block of 256 threads per matrix, right-looking with panels of 32:
//          one warp factors the diagonal block (the small code with N = 32), every thread solves
//          rows of the panel below, 16x16 threads x 4x4 register tiles do the trailing update.
//          medium keeps the matrix in shared memory; large works in global memory (L1/L2) with
//          the panel transposed in shared memory.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/potrf_dispatch.h"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {

template <typename T>
struct Vec;
template <>
struct Vec<float> {
  using type = float4;
  static constexpr int kN = 4;
  __device__ static float Get(const float4& v, int e) {
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
  }
};
template <>
struct Vec<double> {
  using type = double2;
  static constexpr int kN = 2;
  __device__ static double Get(const double2& v, int e) { return e == 0 ? v.x : v.y; }
};

// ================================================================================================
// tiny: thread per matrix
// ================================================================================================

// In-register right-looking Cholesky of the lower triangle of a. Returns info.
template <typename T, int N>
__device__ __forceinline__ int TinyFactor(T (&a)[N][N]) {
  int info = 0;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const T d = a[j][j];
    if (info == 0 && !(d > T(0))) info = j + 1;
    const T s = Scalar<T>::Sqrt(d);
    const T inv = T(1) / s;
    a[j][j] = s;
#pragma unroll
    for (int i = j + 1; i < N; ++i) a[i][j] *= inv;
#pragma unroll
    for (int i = j + 1; i < N; ++i) {
#pragma unroll
      for (int c = j + 1; c <= i; ++c) a[i][c] = fma(-a[i][j], a[c][j], a[i][c]);
    }
  }
  return info;
}

template <typename T, int N>
struct TinyCfg {
  static constexpr int kMPB = (N * N * sizeof(T) > 128) ? 64 : tuning::kTinyThreads;
  static constexpr int kMS = (N * N) | 1;  // odd matrix stride: thread t reads t*kMS + e
};

// POSV == false: potrf (out = L). POSV == true: out = X, b = B (n x k). `mode` (LoadMode) picks the
// lower / upper triangle or (A + A^T) / 2.
template <typename T, int N, bool POSV>
__global__ void __launch_bounds__(TinyCfg<T, N>::kMPB)
    TinyKernel(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int k, int mode) {
  using C = TinyCfg<T, N>;
  constexpr int MPB = C::kMPB;
  __shared__ T sm[MPB * C::kMS];
  const int t = threadIdx.x;
  const int64_t nblk = CeilDiv(batch, MPB);
  for (int64_t blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
    const int64_t m0 = blk * MPB;
    const int cnt = static_cast<int>(batch - m0 < MPB ? batch - m0 : MPB);
    StageIn<T, N, N>(a + m0 * N * N, cnt * N * N, sm, N, C::kMS, mode == kLoadUpper, mode != kLoadSym);
    __syncthreads();
    if (t < cnt) {
      T r[N][N];
      const T* my = sm + t * C::kMS;
#pragma unroll
      for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j <= i; ++j)
          r[i][j] = mode == kLoadSym ? (my[i * N + j] + my[j * N + i]) / T(2) : my[i * N + j];
      const int inf = TinyFactor<T, N>(r);
      info[m0 + t] = inf;
      if constexpr (!POSV) {
        T* w = sm + t * C::kMS;
#pragma unroll
        for (int i = 0; i < N; ++i)
#pragma unroll
          for (int j = 0; j < N; ++j) w[i * N + j] = j <= i ? (inf ? Scalar<T>::NaN() : r[i][j]) : T(0);
      } else {
        T invd[N];
#pragma unroll
        for (int i = 0; i < N; ++i) invd[i] = T(1) / r[i][i];
        const int64_t base = (m0 + t) * static_cast<int64_t>(N) * k;
        for (int c = 0; c < k; ++c) {
          T y[N];
#pragma unroll
          for (int i = 0; i < N; ++i) y[i] = b[base + i * k + c];
#pragma unroll
          for (int i = 0; i < N; ++i) {  // L y = b
            T s = y[i];
#pragma unroll
            for (int j = 0; j < i; ++j) s = fma(-r[i][j], y[j], s);
            y[i] = s * invd[i];
          }
#pragma unroll
          for (int i = N - 1; i >= 0; --i) {  // L^T x = y
            T s = y[i];
#pragma unroll
            for (int j = i + 1; j < N; ++j) s = fma(-r[j][i], y[j], s);
            y[i] = s * invd[i];
          }
#pragma unroll
          for (int i = 0; i < N; ++i) out[base + i * k + c] = inf ? Scalar<T>::NaN() : y[i];
        }
      }
    }
    if constexpr (!POSV) {
      __syncthreads();
      StageOut<T, N, N>(sm, cnt * N * N, out + m0 * N * N, N, C::kMS);
    }
    __syncthreads();
  }
}

// ================================================================================================
// small: lane r of a group holds row r of the matrix in registers
// ================================================================================================

// Right-looking Cholesky with lane r holding row[c] = A[r][c] (c <= r; anything above). tb is a
// 16-byte aligned per-matrix buffer of N x TS elements that receives column j of L as its row j
// (tb[j*TS + i] = L[i][j]), from which every lane reads the multipliers with vector loads.
// Returns info (same in every lane); *invd_mine = 1 / L[r][r].
template <typename T, int N, int LANES, int TS>
__device__ __forceinline__ int SmallFactor(T (&row)[N], int r, T* tb, T* invd_mine) {
  using V = Vec<T>;
  constexpr int kV = V::kN;
  int info = 0;
  T invd = T(0);
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const T d = ShflIdx(row[j], j, LANES);
    if (info == 0 && !(d > T(0))) info = j + 1;
    const T s = Scalar<T>::Sqrt(d);
    const T inv = T(1) / s;
    if (r == j) invd = inv;
    const T lij = (r == j) ? s : row[j] * inv;
    row[j] = lij;
    if (j + 1 < N) {
      if (r < N) tb[j * TS + r] = lij;
      __syncwarp();
#pragma unroll
      for (int kk = ((j + 1) / kV) * kV; kk < N; kk += kV) {
        const typename V::type v = *reinterpret_cast<const typename V::type*>(tb + j * TS + kk);
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const int c = kk + e;
          if (c > j && c < N) row[c] = fma(-lij, V::Get(v, e), row[c]);
        }
      }
    }
  }
  *invd_mine = invd;
  return info;
}

template <typename T, int N>
struct SmallCfg {
  static constexpr int kLanes = N <= 16 ? 16 : 32;
  static constexpr int kMPB = tuning::kSmallThreads / kLanes;
  static constexpr int kS = N | 1;                               // staging row stride (odd)
  static constexpr int kTS = RoundUp(N, 16 / int(sizeof(T)));     // tb row stride (16 B rows)
  static constexpr int kArea = (N * kS > N * kTS) ? N * kS : N * kTS;
  static constexpr int kMS = RoundUp(kArea, 16 / int(sizeof(T)));  // keeps tb 16 B aligned
};

template <typename T, int N, bool POSV>
__global__ void __launch_bounds__(tuning::kSmallThreads)
    SmallKernel(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int k, int mode) {
  using C = SmallCfg<T, N>;
  constexpr int MPB = C::kMPB, S = C::kS;
  __shared__ __align__(16) T sm[MPB * C::kMS];
  const int g = threadIdx.x / C::kLanes, r = threadIdx.x % C::kLanes;
  T* my = sm + g * C::kMS;
  const int64_t nblk = CeilDiv(batch, MPB);
  for (int64_t blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
    const int64_t m0 = blk * MPB;
    const int cnt = static_cast<int>(batch - m0 < MPB ? batch - m0 : MPB);
    StageIn<T, N, N>(a + m0 * N * N, cnt * N * N, sm, S, C::kMS, mode == kLoadUpper, mode != kLoadSym);
    __syncthreads();
    T row[N];
#pragma unroll
    for (int c = 0; c < N; ++c) {
      row[c] = (r < N && c <= r) ? my[r * S + c] : T(0);
      if (mode == kLoadSym && r < N && c <= r) row[c] = (row[c] + my[c * S + r]) / T(2);
    }
    __syncwarp();  // kLoadSym reads other lanes' rows (same warp): all reads before tb overwrites them
    T invd;
    const int inf = SmallFactor<T, N, C::kLanes, C::kTS>(row, r, my, &invd);
    __syncwarp();
    const bool live = g < cnt;
    if (live && r == 0) info[m0 + g] = inf;
    if constexpr (!POSV) {
      if (r < N) {
#pragma unroll
        for (int c = 0; c < N; ++c)
          my[r * S + c] = c <= r ? (inf ? Scalar<T>::NaN() : row[c]) : T(0);
      }
      __syncthreads();
      StageOut<T, N, N>(sm, cnt * N * N, out + m0 * N * N, S, C::kMS);
    } else {
      if (r < N) {
#pragma unroll
        for (int c = 0; c < N; ++c)
          if (c <= r) my[r * S + c] = row[c];
      }
      __syncwarp();
      {  // every group runs the shuffles (full-warp masks); only live groups touch memory
        const int64_t base = (m0 + g) * static_cast<int64_t>(N) * k;
        for (int cc = 0; cc < k; ++cc) {
          T y = (live && r < N) ? b[base + r * k + cc] : T(0);
#pragma unroll
          for (int j = 0; j < N; ++j) {  // L y = b
            const T xj = ShflIdx(y * invd, j, C::kLanes);
            if (r == j) y = xj;
            if (r > j) y = fma(-row[j], xj, y);
          }
#pragma unroll
          for (int j = N - 1; j >= 0; --j) {  // L^T x = y
            const T xj = ShflIdx(y * invd, j, C::kLanes);
            if (r == j) y = xj;
            if (r < j) y = fma(-my[j * S + r], xj, y);
          }
          if (live && r < N) out[base + r * k + cc] = inf ? Scalar<T>::NaN() : y;
        }
      }
    }
    __syncthreads();
  }
}

// ---- host-side launch helpers, one per class (instantiated in potrf_*.cu) --------------------
// a == out is allowed for potrf (every block reads its matrices before writing them).
template <typename T, int N>
cudaError_t LaunchTiny(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                       int64_t batch, int k, int mode, bool posv) {
  const int64_t blocks = CeilDiv(batch, TinyCfg<T, N>::kMPB);
  if (posv)
    TinyKernel<T, N, true><<<GridFor(blocks), TinyCfg<T, N>::kMPB, 0, s>>>(a, b, out, info, batch, k, mode);
  else
    TinyKernel<T, N, false><<<GridFor(blocks), TinyCfg<T, N>::kMPB, 0, s>>>(a, b, out, info, batch, k, mode);
  return cudaGetLastError();
}
template <typename T, int N>
cudaError_t LaunchSmall(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                        int64_t batch, int k, int mode, bool posv) {
  const int64_t blocks = CeilDiv(batch, SmallCfg<T, N>::kMPB);
  if (posv)
    SmallKernel<T, N, true><<<GridFor(blocks), tuning::kSmallThreads, 0, s>>>(a, b, out, info, batch, k, mode);
  else
    SmallKernel<T, N, false><<<GridFor(blocks), tuning::kSmallThreads, 0, s>>>(a, b, out, info, batch, k, mode);
  return cudaGetLastError();
}

// Size switches generated from one list (the [LO, HI] range of each instantiating .cu file).
template <typename T, int LO, int HI>
cudaError_t TinyRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                      int n, int k, int mode, bool posv) {
  if constexpr (LO > HI) {
    return cudaErrorInvalidValue;
  } else {
    if (n == LO) return LaunchTiny<T, LO>(s, a, b, out, info, batch, k, mode, posv);
    return TinyRange<T, LO + 1, HI>(s, a, b, out, info, batch, n, k, mode, posv);
  }
}
template <typename T, int LO, int HI>
cudaError_t SmallRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                       int n, int k, int mode, bool posv) {
  if constexpr (LO > HI) {
    return cudaErrorInvalidValue;
  } else {
    if (n == LO) return LaunchSmall<T, LO>(s, a, b, out, info, batch, k, mode, posv);
    return SmallRange<T, LO + 1, HI>(s, a, b, out, info, batch, n, k, mode, posv);
  }
}

}  // namespace detail
}  // namespace batchla
