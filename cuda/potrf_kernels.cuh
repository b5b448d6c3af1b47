// Batched Cholesky (potrf) and fused SPD solve (posv) kernels, all size classes.
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
//   blocked (medium/large) block of 256 threads per matrix, right-looking with panels of 32:
//          one warp factors the diagonal block (the small code with N = 32), every thread solves
//          rows of the panel below, 16x16 threads x 4x4 register tiles do the trailing update.
//          medium keeps the matrix in shared memory; large works in global memory (L1/L2) with
//          the panel transposed in shared memory.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
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

// POSV == false: potrf (out = L). POSV == true: out = X, b = B (n x k), `lower` picks triangle.
template <typename T, int N, bool POSV>
__global__ void __launch_bounds__(TinyCfg<T, N>::kMPB)
    TinyKernel(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int k, bool lower) {
  using C = TinyCfg<T, N>;
  constexpr int MPB = C::kMPB;
  __shared__ T sm[MPB * C::kMS];
  const int t = threadIdx.x;
  const int64_t nblk = CeilDiv(batch, MPB);
  for (int64_t blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
    const int64_t m0 = blk * MPB;
    const int cnt = static_cast<int>(batch - m0 < MPB ? batch - m0 : MPB);
    StageIn<T, N, N>(a + m0 * N * N, cnt * N * N, sm, N, C::kMS, POSV && !lower, true);
    __syncthreads();
    if (t < cnt) {
      T r[N][N];
      const T* my = sm + t * C::kMS;
#pragma unroll
      for (int i = 0; i < N; ++i)
#pragma unroll
        for (int j = 0; j <= i; ++j) r[i][j] = my[i * N + j];
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
    SmallKernel(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int k, bool lower) {
  using C = SmallCfg<T, N>;
  constexpr int MPB = C::kMPB, S = C::kS;
  __shared__ __align__(16) T sm[MPB * C::kMS];
  const int g = threadIdx.x / C::kLanes, r = threadIdx.x % C::kLanes;
  T* my = sm + g * C::kMS;
  const int64_t nblk = CeilDiv(batch, MPB);
  for (int64_t blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
    const int64_t m0 = blk * MPB;
    const int cnt = static_cast<int>(batch - m0 < MPB ? batch - m0 : MPB);
    StageIn<T, N, N>(a + m0 * N * N, cnt * N * N, sm, S, C::kMS, POSV && !lower, true);
    __syncthreads();
    T row[N];
#pragma unroll
    for (int c = 0; c < N; ++c) row[c] = (r < N && c <= r) ? my[r * S + c] : T(0);
    __syncwarp();
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
// blocked (medium and large): block of 256 threads per matrix
// ================================================================================================

constexpr int kNB = tuning::kBlockedNB;  // 32: the diagonal block is one warp's small factor
constexpr int kNT = tuning::kBlockedThreads;
static_assert(kNB == 32 && kNT == 256, "blocked kernel assumes 32-wide panels and 16x16 threads");

template <typename T>
struct BlockedScratch {  // shared-memory scratch besides the matrix / panel
  T d[kNB * (kNB + 1)];  // diagonal block L_kk, row-major, stride 33
  T invd[kNB];
  alignas(16) T tb[kNB * kNB];
  T dinv[256];  // medium posv: 1 / L[i][i]
  int info;
};

// Copies the lower triangle of `src` (n x n, row-major, global; or its upper triangle transposed
// when `transpose`) to dst (row stride ld), kNT threads, 8 loads in flight per thread.
// `zero_upper`: also writes 0 to dst's strict upper triangle (dst global, full copy).
template <typename T>
__device__ __forceinline__ void LoadLower(const T* src, int n, T* dst, int ld, bool transpose,
                                          bool zero_upper) {
  constexpr int kU = 8;
  const int total = n * n;
  for (int e0 = threadIdx.x; e0 < total; e0 += kU * kNT) {
    T v[kU];
    int at[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int e = e0 + u * kNT;
      const int i = e / n, j = e - i * n;
      const bool in = e < total;
      const bool keep = in && (transpose ? j >= i : j <= i);
      at[u] = keep ? (transpose ? j * ld + i : i * ld + j) : (in && zero_upper ? -2 - (i * ld + j) : -1);
      v[u] = T(0);
      if (keep) v[u] = src[e];
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      if (at[u] >= 0) dst[at[u]] = v[u];
      else if (at[u] <= -2) dst[-2 - at[u]] = T(0);
    }
  }
}

// Factors the lower triangle of A (n x n, row stride ld; shared or global memory) in place.
// USE_PT: the panel below the diagonal block is also kept transposed in shared PT[p * pld + i-k]
// (large path: A in global memory); otherwise the update reads the panel from A (medium path).
// Sets sc->info (must be 0 on entry) to the first failing pivot; stops at the failing panel.
template <typename T, bool USE_PT>
__device__ void BlockedFactor(T* A, int ld, int n, T* PT, int pld, BlockedScratch<T>* sc) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int tx = tid & 15, ty = tid >> 4;
  for (int k = 0; k < n; k += kNB) {
    const int w = n - k < kNB ? n - k : kNB;
    // 1. diagonal block: warp 0, lane r holds row k + r (identity rows pad w up to 32)
    if (warp == 0) {
      T row[kNB];
#pragma unroll
      for (int c = 0; c < kNB; ++c)
        row[c] = (lane < w && c <= lane) ? A[(k + lane) * ld + k + c] : (c == lane ? T(1) : T(0));
      T invd;
      const int inf = SmallFactor<T, kNB, 32, kNB>(row, lane, sc->tb, &invd);
      if (lane < w) {
#pragma unroll
        for (int c = 0; c < kNB; ++c) {
          if (c <= lane) A[(k + lane) * ld + k + c] = row[c];
          sc->d[lane * (kNB + 1) + c] = row[c];
        }
      }
      sc->invd[lane] = invd;
      if (lane == 0 && inf) sc->info = k + inf;
    }
    __syncthreads();
    if (sc->info) return;
    // 2. panel below: row i solves x L_kk^T = A[i, k:k+w]
    for (int i = k + w + tid; i < n; i += kNT) {
      T x[kNB];
      T* ai = A + static_cast<int64_t>(i) * ld + k;
#pragma unroll
      for (int p = 0; p < kNB; ++p) x[p] = p < w ? ai[p] : T(0);
#pragma unroll
      for (int p = 0; p < kNB; ++p) {
        const T xp = x[p] * sc->invd[p];
        x[p] = xp;
#pragma unroll
        for (int q = p + 1; q < kNB; ++q) x[q] = fma(-xp, sc->d[q * (kNB + 1) + p], x[q]);
      }
#pragma unroll
      for (int p = 0; p < kNB; ++p) {
        if (p < w) {
          ai[p] = x[p];
          if constexpr (USE_PT) PT[p * pld + (i - k)] = x[p];
        }
      }
    }
    __syncthreads();
    // 3. trailing update A[k0:, k0:] -= P P^T (lower tiles only), P = L[k0:, k:k+w]
    const int k0 = k + w, m = n - k0;
    if (m > 0) {
      const int tiles = (m + 63) >> 6;
      for (int ti = 0; ti < tiles; ++ti) {
        for (int tj = 0; tj <= ti; ++tj) {
          int ri[4], cj[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int i = k0 + ti * 64 + ty + 16 * q, j = k0 + tj * 64 + tx + 16 * q;
            ri[q] = i < n ? i : n - 1;
            cj[q] = j < n ? j : n - 1;
          }
          T acc[4][4];
          T cpre[USE_PT ? 4 : 1][USE_PT ? 4 : 1];  // large: C loads issued before the k loop
#pragma unroll
          for (int qa = 0; qa < 4; ++qa)
#pragma unroll
            for (int qb = 0; qb < 4; ++qb) {
              acc[qa][qb] = T(0);
              if constexpr (USE_PT) {
                const int i = k0 + ti * 64 + ty + 16 * qa, j = k0 + tj * 64 + tx + 16 * qb;
                cpre[qa][qb] = (i < n && j <= i) ? A[static_cast<int64_t>(i) * ld + j] : T(0);
              }
            }
#pragma unroll 4
          for (int p = 0; p < w; ++p) {
            T la[4], lb[4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              if constexpr (USE_PT) {
                la[q] = PT[p * pld + ri[q] - k];
                lb[q] = PT[p * pld + cj[q] - k];
              } else {
                la[q] = A[ri[q] * ld + k + p];
                lb[q] = A[cj[q] * ld + k + p];
              }
            }
#pragma unroll
            for (int qa = 0; qa < 4; ++qa)
#pragma unroll
              for (int qb = 0; qb < 4; ++qb) acc[qa][qb] = fma(la[qa], lb[qb], acc[qa][qb]);
          }
#pragma unroll
          for (int qa = 0; qa < 4; ++qa) {
            const int i = k0 + ti * 64 + ty + 16 * qa;
#pragma unroll
            for (int qb = 0; qb < 4; ++qb) {
              const int j = k0 + tj * 64 + tx + 16 * qb;
              if (i < n && j <= i) {
                T* c = A + static_cast<int64_t>(i) * ld + j;
                if constexpr (USE_PT) *c = cpre[qa][qb] - acc[qa][qb];
                else *c -= acc[qa][qb];
              }
            }
          }
        }
      }
    }
    __syncthreads();
  }
}

// Warp-level L L^T x = b for one right-hand side column, L lower in shared A (stride ld), lane
// holds rows lane + 32 m. MAXM * 32 >= n.
template <typename T, int MAXM>
__device__ __forceinline__ void WarpCholSolve(const T* A, int ld, int n, const T* dinv, T (&y)[MAXM],
                                              int lane) {
#pragma unroll
  for (int jm = 0; jm < MAXM; ++jm) {
    if (jm * 32 >= n) break;
    for (int jl = 0; jl < 32; ++jl) {
      const int j = jm * 32 + jl;
      if (j >= n) break;
      const T xj = ShflIdx(y[jm] * dinv[j], jl);
      if (lane == jl) y[jm] = xj;
#pragma unroll
      for (int m = jm; m < MAXM; ++m) {
        const int i = m * 32 + lane;
        if (i > j && i < n) y[m] = fma(-A[i * ld + j], xj, y[m]);
      }
    }
  }
#pragma unroll
  for (int jm = MAXM - 1; jm >= 0; --jm) {
    if (jm * 32 >= n) continue;
    for (int jl = 31; jl >= 0; --jl) {
      const int j = jm * 32 + jl;
      if (j >= n) continue;
      const T xj = ShflIdx(y[jm] * dinv[j], jl);
      if (lane == jl) y[jm] = xj;
#pragma unroll
      for (int m = 0; m <= jm; ++m) {
        const int i = m * 32 + lane;
        if (i < j) y[m] = fma(-A[j * ld + i], xj, y[m]);
      }
    }
  }
}

template <typename T>
__host__ __device__ constexpr int MediumLd(int n) { return n | 1; }
template <typename T>
__host__ __device__ constexpr size_t MediumSmemBytes(int n) {
  return RoundUp(n * MediumLd<T>(n) * int(sizeof(T)), 16) + sizeof(BlockedScratch<T>);
}
template <typename T>
__host__ __device__ constexpr size_t LargeSmemBytes(int n) {
  return RoundUp(kNB * n * int(sizeof(T)), 16) + sizeof(BlockedScratch<T>);
}

// medium: whole matrix in shared memory. POSV: out = X (n x k); else out = L.
template <typename T, bool POSV>
__global__ void __launch_bounds__(kNT, 2)
    MediumKernel(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int n, int k,
                 bool lower) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int ld = MediumLd<T>(n);
  T* A = reinterpret_cast<T*>(smraw);
  auto* sc = reinterpret_cast<BlockedScratch<T>*>(smraw + RoundUp(n * ld * int(sizeof(T)), 16));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t nn = static_cast<int64_t>(n) * n;
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    const T* am = a + mat * nn;
    LoadLower<T>(am, n, A, ld, POSV && !lower, false);  // upper of A -> lower when transposed
    if (tid == 0) sc->info = 0;
    __syncthreads();
    BlockedFactor<T, false>(A, ld, n, nullptr, 0, sc);
    __syncthreads();
    const int inf = sc->info;
    if (tid == 0) info[mat] = inf;
    if constexpr (POSV) {
      for (int i = tid; i < n; i += kNT) sc->dinv[i] = T(1) / A[i * ld + i];
      __syncthreads();
    }
    if constexpr (!POSV) {
      T* om = out + mat * nn;
      for (int i = warp; i < n; i += kNT / 32)
        for (int j = lane; j < n; j += 32)
          om[static_cast<int64_t>(i) * n + j] =
              j <= i ? (inf ? Scalar<T>::NaN() : A[i * ld + j]) : T(0);
    } else {
      constexpr int MAXM = (tuning::kSmemMaxNF32 + 31) / 32;
      const int64_t base = mat * n * static_cast<int64_t>(k);
      for (int cc = warp; cc < k; cc += kNT / 32) {
        T y[MAXM];
#pragma unroll
        for (int m = 0; m < MAXM; ++m) {
          const int i = m * 32 + lane;
          y[m] = i < n ? b[base + static_cast<int64_t>(i) * k + cc] : T(0);
        }
        if (!inf) WarpCholSolve<T, MAXM>(A, ld, n, sc->dinv, y, lane);
#pragma unroll
        for (int m = 0; m < MAXM; ++m) {
          const int i = m * 32 + lane;
          if (i < n) out[base + static_cast<int64_t>(i) * k + cc] = inf ? Scalar<T>::NaN() : y[m];
        }
      }
    }
    __syncthreads();
  }
}

// large: factor in place in global memory (out = L), panel transposed in shared memory.
template <typename T>
__global__ void __launch_bounds__(kNT)
    LargeKernel(const T* a, T* l, int32_t* info, int64_t batch, int n) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int pld = n;
  T* PT = reinterpret_cast<T*>(smraw);
  auto* sc = reinterpret_cast<BlockedScratch<T>*>(smraw + RoundUp(kNB * n * int(sizeof(T)), 16));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t nn = static_cast<int64_t>(n) * n;
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    const T* am = a + mat * nn;
    T* lm = l + mat * nn;
    LoadLower<T>(am, n, lm, n, false, true);  // same thread reads and writes: a == l is fine
    if (tid == 0) sc->info = 0;
    __syncthreads();
    BlockedFactor<T, true>(lm, n, n, PT, pld, sc);
    __syncthreads();
    const int inf = sc->info;
    if (tid == 0) info[mat] = inf;
    if (inf) {
      for (int i = warp; i < n; i += kNT / 32)
        for (int j = lane; j <= i; j += 32) lm[static_cast<int64_t>(i) * n + j] = Scalar<T>::NaN();
    }
    __syncthreads();
  }
}

// ---- host-side launch helpers, one per class (instantiated in potrf_*.cu) --------------------
// a == out is allowed for potrf (every block reads its matrices before writing them).
template <typename T, int N>
cudaError_t LaunchTiny(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                       int64_t batch, int k, bool lower, bool posv) {
  const int64_t blocks = CeilDiv(batch, TinyCfg<T, N>::kMPB);
  if (posv)
    TinyKernel<T, N, true><<<GridFor(blocks), TinyCfg<T, N>::kMPB, 0, s>>>(a, b, out, info, batch, k, lower);
  else
    TinyKernel<T, N, false><<<GridFor(blocks), TinyCfg<T, N>::kMPB, 0, s>>>(a, b, out, info, batch, k, lower);
  return cudaGetLastError();
}
template <typename T, int N>
cudaError_t LaunchSmall(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                        int64_t batch, int k, bool lower, bool posv) {
  const int64_t blocks = CeilDiv(batch, SmallCfg<T, N>::kMPB);
  if (posv)
    SmallKernel<T, N, true><<<GridFor(blocks), tuning::kSmallThreads, 0, s>>>(a, b, out, info, batch, k, lower);
  else
    SmallKernel<T, N, false><<<GridFor(blocks), tuning::kSmallThreads, 0, s>>>(a, b, out, info, batch, k, lower);
  return cudaGetLastError();
}

// Size switches generated from one list (the [LO, HI] range of each instantiating .cu file).
template <typename T, int LO, int HI>
cudaError_t TinyRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                      int n, int k, bool lower, bool posv) {
  if constexpr (LO > HI) {
    return cudaErrorInvalidValue;
  } else {
    if (n == LO) return LaunchTiny<T, LO>(s, a, b, out, info, batch, k, lower, posv);
    return TinyRange<T, LO + 1, HI>(s, a, b, out, info, batch, n, k, lower, posv);
  }
}
template <typename T, int LO, int HI>
cudaError_t SmallRange(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                       int n, int k, bool lower, bool posv) {
  if constexpr (LO > HI) {
    return cudaErrorInvalidValue;
  } else {
    if (n == LO) return LaunchSmall<T, LO>(s, a, b, out, info, batch, k, lower, posv);
    return SmallRange<T, LO + 1, HI>(s, a, b, out, info, batch, n, k, lower, posv);
  }
}

template <typename T>
cudaError_t BlockedLaunch(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                          int64_t batch, int n, int k, bool lower, bool posv, bool medium) {
  if (medium) {
    const size_t smem = MediumSmemBytes<T>(n);
    auto kern = posv ? MediumKernel<T, true> : MediumKernel<T, false>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
    kern<<<GridFor(batch), kNT, smem, s>>>(a, b, out, info, batch, n, k, lower);
  } else {
    const size_t smem = LargeSmemBytes<T>(n);
    cudaError_t e = cudaFuncSetAttribute(LargeKernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
    LargeKernel<T><<<GridFor(batch), kNT, smem, s>>>(a, out, info, batch, n);
  }
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
