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
        // int64 row offsets: k is unbounded (vmap folds a batch of right-hand sides into it).
        const int64_t base = (m0 + t) * static_cast<int64_t>(N) * k;
        for (int c = 0; c < k; ++c) {
          T y[N];
#pragma unroll
          for (int i = 0; i < N; ++i) y[i] = b[base + int64_t(i) * k + c];
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
          for (int i = 0; i < N; ++i) out[base + int64_t(i) * k + c] = inf ? Scalar<T>::NaN() : y[i];
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
  using V = Vec16<T>;
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
        // this lane's row of b and x (int64: k is unbounded, vmap folds a batch of rhs into it)
        const int64_t off = ((m0 + g) * N + r) * static_cast<int64_t>(k);
        const T* brow = b + off;
        T* xrow = out + off;
        for (int cc = 0; cc < k; ++cc) {
          T y = (live && r < N) ? brow[cc] : T(0);
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
          if (live && r < N) xrow[cc] = inf ? Scalar<T>::NaN() : y;
        }
      }
    }
    __syncthreads();
  }
}

// ================================================================================================
// small v4 (the default for n = 9..32): persistent blocks, double-buffered: chunk c + 1 loads while
// chunk c is factored and stored; posv's forward solve rides along in the factor. Each chunk (kChunk consecutive matrices = one
// contiguous, 16 B aligned range of global memory) is copied with 16-byte cp.async into a dense
// shared buffer (rows padded by one 16 B granule when a row is an even number of granules, so the
// 16 B row loads of 8 consecutive lanes hit distinct banks), each group factors kG matrices of the
// chunk in turn, writes L back in place and the block stores the chunk with 16-byte stores. The
// column broadcast buffer is two rows per group (ping-pong), separate from the stages.
// Needs a and out 16 B aligned (LaunchSmall falls back to v2 otherwise).
// ================================================================================================

template <typename T, int N, bool POSV>
struct Small4Cfg {
  using B = SmallCfg<T, N>;
  static constexpr int kN = N, kLanes = B::kLanes, kMPB = B::kMPB, kTS = B::kTS;
  static constexpr int kV = 16 / int(sizeof(T));                   // elements per 16 B granule
  static constexpr int kNN = N * N;
  static constexpr bool kRowVec = N % kV == 0;                    // rows are whole granules
  static constexpr int kRS = (N % (2 * kV) == 0) ? N + kV : N;    // shared row stride
  static constexpr bool kDense = kRS == N;                        // shared layout == global layout
  static constexpr int kMS = N * kRS;                             // shared matrix stride
  static constexpr int kMatBytes = kNN * int(sizeof(T));
  static constexpr int kTarget = 8192;                            // ~bytes per stage
  static constexpr int kG0 = (kTarget + kMPB * kMatBytes / 2) / (kMPB * kMatBytes);
  static constexpr int kG = kG0 < 1 ? 1 : kG0;                    // matrices per group per chunk
  static constexpr int kChunk = kMPB * kG;                        // multiple of kV: chunks stay aligned
  static_assert(kChunk % kV == 0, "chunk must start 16 B aligned");
  static constexpr int kRhs = POSV ? RoundUp(kChunk * N, kV) : 0;
  static constexpr int kBuf = RoundUp(kChunk * kMS, kV) + kRhs;   // elements per stage
  static constexpr int kTb = kMPB * 2 * kTS;                      // broadcast rows (all groups)
  static constexpr size_t kSmem = (size_t(2) * kBuf + kTb) * sizeof(T);
};

// Shared offset of chunk element e (e = m * N * N + i * N + j).
template <typename C>
__device__ __forceinline__ int Small4At(int e) {
  if constexpr (C::kDense) {
    return e;
  } else {
    constexpr int NN = C::kNN, NC = C::kN;
    const int m = e / NN, rr = e - m * NN;
    const int i = rr / NC, j = rr - i * NC;
    return m * C::kMS + i * C::kRS + j;
  }
}

// Issues the cp.async copies of chunk [m0, m0 + cnt) into one stage (no commit).
template <typename T, int N, bool POSV>
__device__ __forceinline__ void Small4Stage(T* buf, const T* __restrict__ a, const T* __restrict__ b,
                                            int64_t m0, int cnt, int k) {
  using C = Small4Cfg<T, N, POSV>;
  constexpr int V = C::kV;
  const T* src = a + m0 * C::kNN;
  const int total = cnt * C::kNN;
  const int ng = total / V;
#pragma unroll 4
  for (int q = threadIdx.x; q < ng; q += tuning::kSmallThreads)
    CpAsync<16>(buf + Small4At<C>(q * V), src + q * V);
  if constexpr (C::kDense && C::kNN % V != 0) {  // tail of the last chunk (dense layout only)
    const int e = ng * V + threadIdx.x;
    if (e < total) CpAsync<sizeof(T)>(buf + e, src + e);
  }
  if constexpr (POSV) {
    if (k <= 0) return;  // no rhs (b may be empty)
    T* rb = buf + (C::kBuf - C::kRhs);
    for (int e = threadIdx.x; e < cnt * N; e += tuning::kSmallThreads) {
      const int m = e / N, i = e - m * N;
      CpAsync<sizeof(T)>(rb + e, b + ((m0 + m) * N + i) * static_cast<int64_t>(k));
    }
  }
}

// SmallFactor with an optional right-hand side (y, lane r: b_r on entry, becomes L^{-1} b) and a
// two-row broadcast buffer tb (row j & 1 receives column j): the __syncwarp of
// step j + 1 orders every lane's step-j reads before the step-(j + 2) overwrite.
template <typename T, int N, int LANES, int TS, bool RHS>
__device__ __forceinline__ int SmallFactor4(T (&row)[N], T& y, int r, T* tb, T* invd_mine) {
  using V = Vec16<T>;
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
      T* t = tb + (j & 1) * TS;
      if (r < N) t[r] = lij;
      __syncwarp();
#pragma unroll
      for (int kk = ((j + 1) / kV) * kV; kk < N; kk += kV) {
        const typename V::type v = *reinterpret_cast<const typename V::type*>(t + kk);
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
    SmallKernel4(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int k, int mode) {
  using C = Small4Cfg<T, N, POSV>;
  using VT = typename Vec16<T>::type;
  constexpr int MPB = C::kMPB, CH = C::kChunk, RS = C::kRS, V = C::kV;
  extern __shared__ __align__(16) unsigned char pf4_smem[];
  T* sm = reinterpret_cast<T*>(pf4_smem);
  const int g = threadIdx.x / C::kLanes, r = threadIdx.x % C::kLanes;
  T* tb = sm + 2 * C::kBuf + g * 2 * C::kTS;
  const int64_t nblk = CeilDiv(batch, CH);
  auto count = [&](int64_t bl) {
    const int64_t m0 = bl * CH;
    return static_cast<int>(batch - m0 < CH ? batch - m0 : CH);
  };
  int64_t blk = blockIdx.x;
  if (blk >= nblk) return;
  Small4Stage<T, N, POSV>(sm, a, b, blk * CH, count(blk), k);
  CpAsyncCommit();
  int st = 0;
  for (; blk < nblk; blk += gridDim.x, st ^= 1) {
    const int64_t nxt = blk + gridDim.x;
    if (nxt < nblk) Small4Stage<T, N, POSV>(sm + (st ^ 1) * C::kBuf, a, b, nxt * CH, count(nxt), k);
    CpAsyncCommit();
    CpAsyncWait<1>();
    __syncthreads();
    const int64_t m0 = blk * CH;
    const int cnt = count(blk);
    T* bufc = sm + st * C::kBuf;
    for (int gi = 0; gi < C::kG && gi * MPB < cnt; ++gi) {  // block-uniform trip count
      const int mi = gi * MPB + g;
      const bool live = mi < cnt;
      T* my = bufc + mi * C::kMS;
      T row[N];
      if (r < N) {
        if (mode == kLoadUpper) {
#pragma unroll
          for (int c = 0; c < N; ++c) row[c] = c <= r ? my[c * RS + r] : T(0);
        } else {
          if constexpr (C::kRowVec) {
#pragma unroll
            for (int kk = 0; kk < N; kk += V) {
              VT v;
              if (kk <= r) v = *reinterpret_cast<const VT*>(my + r * RS + kk);
#pragma unroll
              for (int e = 0; e < V; ++e) row[kk + e] = (kk + e <= r) ? Vec16<T>::Get(v, e) : T(0);
            }
          } else {
#pragma unroll
            for (int c = 0; c < N; ++c) row[c] = c <= r ? my[r * RS + c] : T(0);
          }
          if (mode == kLoadSym) {
#pragma unroll
            for (int c = 0; c < N; ++c)
              if (c <= r) row[c] = (row[c] + my[c * RS + r]) / T(2);
          }
        }
      } else {
#pragma unroll
        for (int c = 0; c < N; ++c) row[c] = T(0);
      }
      T y = T(0);
      if constexpr (POSV) y = (live && r < N) ? bufc[C::kBuf - C::kRhs + mi * N + r] : T(0);
      __syncwarp();  // kLoadSym / upper read other lanes' rows: all reads before the write-back
      T invd;
      const int inf = SmallFactor4<T, N, C::kLanes, C::kTS, POSV>(row, y, r, tb, &invd);
      if (live && r == 0) info[m0 + mi] = inf;
      if (r < N) {  // L back in place (zeros above, NaN on failure)
        if constexpr (C::kRowVec) {
#pragma unroll
          for (int kk = 0; kk < N; kk += V) {
            T w[V];
#pragma unroll
            for (int e = 0; e < V; ++e) {
              const int c = kk + e;
              w[e] = c <= r ? (inf ? Scalar<T>::NaN() : row[c]) : T(0);
            }
            VT v;
            if constexpr (V == 4) {
              v = VT{w[0], w[1], w[2], w[3]};
            } else {
              v = VT{w[0], w[1]};
            }
            *reinterpret_cast<VT*>(my + r * RS + kk) = v;
          }
        } else {
#pragma unroll
          for (int c = 0; c < N; ++c) my[r * RS + c] = c <= r ? (inf ? Scalar<T>::NaN() : row[c]) : T(0);
        }
      }
      if constexpr (POSV) {
        __syncwarp();
        // this lane's row of b and x (int64: k is unbounded, vmap folds a batch of rhs into it)
        const int64_t off = ((m0 + mi) * N + r) * static_cast<int64_t>(k);
        const T* brow = b + off;
        T* xrow = out + off;
        for (int cc = 0; cc < k; ++cc) {  // every group runs the shuffles; only live groups touch memory
          if (cc > 0) {
            y = (live && r < N) ? brow[cc] : T(0);
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
            if (r < j) y = fma(-my[j * RS + r], xj, y);
          }
          if (live && r < N) xrow[cc] = inf ? Scalar<T>::NaN() : y;
        }
      }
      __syncwarp();
    }
    if constexpr (!POSV) {
      __syncthreads();
      T* dst = out + m0 * C::kNN;
      const int total = cnt * C::kNN;
      const int ng = total / V;
#pragma unroll 4
      for (int q = threadIdx.x; q < ng; q += tuning::kSmallThreads)
        *reinterpret_cast<VT*>(dst + q * V) = *reinterpret_cast<const VT*>(bufc + Small4At<C>(q * V));
      if constexpr (C::kDense && C::kNN % V != 0) {
        const int e = ng * V + threadIdx.x;
        if (e < total) dst[e] = bufc[e];
      }
    }
    __syncthreads();  // this stage is refilled by the next iteration's copies
  }
}

template <typename T, int N, bool POSV>
cudaError_t LaunchSmall4(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                         int64_t batch, int k, int mode) {
  using C = Small4Cfg<T, N, POSV>;
  auto kernel = SmallKernel4<T, N, POSV>;
  cudaError_t e;
  if (C::kSmem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::kSmem));
    if (e != cudaSuccess) return e;
  }
  unsigned grid = 0;
  if ((e = PersistentGrid<C>(kernel, tuning::kSmallThreads, C::kSmem, CeilDiv(batch, C::kChunk), &grid)) !=
      cudaSuccess)
    return e;
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
#if defined(BATCHLA_POTRF_SMALL_V2)
  constexpr bool kPersistent = false;  // benchmark variant: the v2 kernel everywhere
#else
  constexpr bool kPersistent = true;   // v4 beats v2 at every n = 9..32 (bench/NOTES.md "potrf small v4")
#endif
  const bool aligned = (reinterpret_cast<uintptr_t>(a) % 16 == 0) && (posv || reinterpret_cast<uintptr_t>(out) % 16 == 0);
  if constexpr (kPersistent) {
    if (aligned) {  // 16-byte staging needs 16 B aligned buffers; v2 takes any
      if (posv) return LaunchSmall4<T, N, true>(s, a, b, out, info, batch, k, mode);
      return LaunchSmall4<T, N, false>(s, a, b, out, info, batch, k, mode);
    }
  }
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
