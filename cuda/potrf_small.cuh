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

// ================================================================================================
// small v3: persistent blocks, double-buffered cp.async staging (chunk c+1 loads while chunk c is
// factored and stored), posv forward solve folded into the factor (rhs column 0 rides along as one
// more register per lane; its broadcast shuffle issues next to the pivot's, off the critical path).
// Same lane-per-row factor and shared layout (odd row stride) as above. -DBATCHLA_POTRF_SMALL_V2
// selects the v2 kernel (SmallKernel) for comparison.
// ================================================================================================

// Smallest n that uses SmallKernel3 (v3) instead of SmallKernel (v2); candidate for tuning.h.
// Measured (bench/NOTES.md "potrf small v3"): v3 wins for float64 n = 20..32 (potrf 0.31-0.42 ->
// 0.43-0.48, posv 0.21-0.26 -> 0.23-0.27) and loses for float64 n = 9, 16 and every float32 n (its
// element-wise 4-byte cp.async staging is issue-bound). -DBATCHLA_POTRF_SMALL_V2 / _V3 force one.
template <typename T>
constexpr int Small3MinN() {
  return sizeof(T) == 8 ? tuning::kPotrfSmallV3MinNF64 : tuning::kPotrfSmallV3MinNF32;
}

template <int BYTES>
__device__ __forceinline__ void PfCpAsync(void* dst, const void* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(d), "l"(src), "n"(BYTES) : "memory");
}
__device__ __forceinline__ void PfCpCommit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void PfCpWait1() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

template <typename T, int N, bool POSV>
struct Small3Cfg {
  using B = SmallCfg<T, N>;
  static constexpr int kLanes = B::kLanes, kMPB = B::kMPB, kS = B::kS, kTS = B::kTS, kMS = B::kMS;
  static constexpr int kRhs = POSV ? RoundUp(kMPB * N, 16 / int(sizeof(T))) : 0;  // rhs col 0 / chunk
  static constexpr int kBuf = kMPB * kMS + kRhs;                                   // elements per stage
  static constexpr size_t kSmem = size_t(2) * kBuf * sizeof(T);
};

// Issues the cp.async copies of chunk [m0, m0 + cnt) into one stage (no commit).
template <typename T, int N, bool POSV>
__device__ __forceinline__ void Small3Stage(T* buf, const T* __restrict__ a, const T* __restrict__ b,
                                            int64_t m0, int cnt, int k, int mode) {
  using C = Small3Cfg<T, N, POSV>;
  constexpr int NN = N * N, S = C::kS;
  const T* src = a + m0 * NN;
  const int total = cnt * NN;
#pragma unroll 4
  for (int e = threadIdx.x; e < C::kMPB * NN; e += tuning::kSmallThreads) {
    if (e < total) {
      const int m = e / NN, rr = e - m * NN;
      const int i = rr / N, j = rr - i * N;
      const bool skip = mode == kLoadLower ? j > i : (mode == kLoadUpper ? j < i : false);
      if (!skip) PfCpAsync<sizeof(T)>(buf + m * C::kMS + (mode == kLoadUpper ? j * S + i : i * S + j), src + e);
    }
  }
  if constexpr (POSV) {
    if (k <= 0) return;  // no rhs (b may be empty)
    T* rb = buf + C::kMPB * C::kMS;
    for (int e = threadIdx.x; e < cnt * N; e += tuning::kSmallThreads) {
      const int m = e / N, i = e - m * N;
      PfCpAsync<sizeof(T)>(rb + e, b + ((m0 + m) * N + i) * static_cast<int64_t>(k));
    }
  }
}

// SmallFactor with an optional right-hand side: y (lane r: b_r on entry) becomes L^{-1} b.
template <typename T, int N, int LANES, int TS, bool RHS>
__device__ __forceinline__ int SmallFactor3(T (&row)[N], T& y, int r, T* tb, T* invd_mine) {
  using V = Vec<T>;
  constexpr int kV = V::kN;
  int info = 0;
  T invd = T(0);
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const T d = ShflIdx(row[j], j, LANES);
    T bj = T(0);
    if constexpr (RHS) bj = ShflIdx(y, j, LANES);
    if (info == 0 && !(d > T(0))) info = j + 1;
    const T s = Scalar<T>::Sqrt(d);
    const T inv = T(1) / s;
    if (r == j) invd = inv;
    const T lij = (r == j) ? s : row[j] * inv;
    row[j] = lij;
    if constexpr (RHS) {
      const T yj = bj * inv;
      y = (r == j) ? yj : (r > j ? fma(-lij, yj, y) : y);
    }
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

template <typename T, int N, bool POSV>
__global__ void __launch_bounds__(tuning::kSmallThreads)
    SmallKernel3(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int k, int mode) {
  using C = Small3Cfg<T, N, POSV>;
  constexpr int MPB = C::kMPB, S = C::kS;
  extern __shared__ __align__(16) unsigned char pf3_smem[];
  T* sm = reinterpret_cast<T*>(pf3_smem);
  const int g = threadIdx.x / C::kLanes, r = threadIdx.x % C::kLanes;
  const int64_t nblk = CeilDiv(batch, MPB);
  auto count = [&](int64_t bl) {
    const int64_t m0 = bl * MPB;
    return static_cast<int>(batch - m0 < MPB ? batch - m0 : MPB);
  };
  int64_t blk = blockIdx.x;
  if (blk >= nblk) return;
  Small3Stage<T, N, POSV>(sm, a, b, blk * MPB, count(blk), k, mode);
  PfCpCommit();
  int st = 0;
  for (; blk < nblk; blk += gridDim.x, st ^= 1) {
    const int64_t nxt = blk + gridDim.x;
    if (nxt < nblk) Small3Stage<T, N, POSV>(sm + (st ^ 1) * C::kBuf, a, b, nxt * MPB, count(nxt), k, mode);
    PfCpCommit();
    PfCpWait1();
    __syncthreads();
    const int64_t m0 = blk * MPB;
    const int cnt = count(blk);
    T* bufc = sm + st * C::kBuf;
    T* my = bufc + g * C::kMS;
    const bool live = g < cnt;
    T row[N];
#pragma unroll
    for (int c = 0; c < N; ++c) {
      row[c] = (r < N && c <= r) ? my[r * S + c] : T(0);
      if (mode == kLoadSym && r < N && c <= r) row[c] = (row[c] + my[c * S + r]) / T(2);
    }
    T y = T(0);
    if constexpr (POSV) y = (live && r < N) ? bufc[MPB * C::kMS + g * N + r] : T(0);
    __syncwarp();  // kLoadSym reads other lanes' rows (same warp): all reads before tb overwrites them
    T invd;
    const int inf = SmallFactor3<T, N, C::kLanes, C::kTS, POSV>(row, y, r, my, &invd);
    __syncwarp();
    if (live && r == 0) info[m0 + g] = inf;
    if constexpr (!POSV) {
      if (r < N) {
#pragma unroll
        for (int c = 0; c < N; ++c) my[r * S + c] = c <= r ? (inf ? Scalar<T>::NaN() : row[c]) : T(0);
      }
      __syncthreads();
      StageOut<T, N, N>(bufc, cnt * N * N, out + m0 * N * N, S, C::kMS);
    } else {
      if (r < N) {
#pragma unroll
        for (int c = 0; c < N; ++c)
          if (c <= r) my[r * S + c] = row[c];
      }
      __syncwarp();
      const int64_t base = (m0 + g) * static_cast<int64_t>(N) * k;
      for (int cc = 0; cc < k; ++cc) {  // every group runs the shuffles; only live groups touch memory
        if (cc > 0) {
          y = (live && r < N) ? b[base + r * k + cc] : T(0);
#pragma unroll
          for (int j = 0; j < N; ++j) {  // L y = b
            const T xj = ShflIdx(y * invd, j, C::kLanes);
            if (r == j) y = xj;
            if (r > j) y = fma(-row[j], xj, y);
          }
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
    __syncthreads();  // this stage is refilled by the next iteration's copies
  }
}

template <typename T, int N, bool POSV>
cudaError_t LaunchSmall3(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                         int64_t batch, int k, int mode) {
  using C = Small3Cfg<T, N, POSV>;
  auto kernel = SmallKernel3<T, N, POSV>;
  cudaError_t e;
  if (C::kSmem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::kSmem));
    if (e != cudaSuccess) return e;
  }
  int dev = 0, sms = 0, per_sm = 0;
  if ((e = cudaGetDevice(&dev)) != cudaSuccess) return e;
  if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return e;
  if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, tuning::kSmallThreads, C::kSmem)) !=
      cudaSuccess)
    return e;
  if (per_sm < 1) per_sm = 1;
  const int64_t blocks = CeilDiv(batch, C::kMPB);
  const int64_t resident = int64_t{per_sm} * sms;
  const unsigned grid = static_cast<unsigned>(blocks < resident ? blocks : resident);
  kernel<<<grid, tuning::kSmallThreads, C::kSmem, s>>>(a, b, out, info, batch, k, mode);
  return cudaGetLastError();
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
#if defined(BATCHLA_POTRF_SMALL_V3)
  constexpr bool kV3 = true;
#elif defined(BATCHLA_POTRF_SMALL_V2)
  constexpr bool kV3 = false;
#else
  constexpr bool kV3 = N >= Small3MinN<T>();
#endif
  if constexpr (kV3) {
    if (posv) return LaunchSmall3<T, N, true>(s, a, b, out, info, batch, k, mode);
    return LaunchSmall3<T, N, false>(s, a, b, out, info, batch, k, mode);
  } else {
    const int64_t blocks = CeilDiv(batch, SmallCfg<T, N>::kMPB);
    if (posv)
      SmallKernel<T, N, true><<<GridFor(blocks), tuning::kSmallThreads, 0, s>>>(a, b, out, info, batch, k, mode);
    else
      SmallKernel<T, N, false><<<GridFor(blocks), tuning::kSmallThreads, 0, s>>>(a, b, out, info, batch, k, mode);
    return cudaGetLastError();
  }
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
