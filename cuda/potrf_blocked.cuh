// Batched Cholesky (potrf) and fused SPD solve (posv): blocked classes (medium, large).
// Conventions and failure semantics: see cuda/potrf_small.cuh (the diagonal block of every panel
// is factored by one warp with the small-class code).
#pragma once

#include "cuda/potrf_small.cuh"

namespace batchla {
namespace detail {

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
// when `transpose`) to dst (row stride ld), kNT threads, kU loads in flight per thread (large
// class: 32, f64 n = 256 / 512 potrf 795 / 920 -> 757 / 878 us; f32 unchanged).
// `zero_upper`: also writes 0 to dst's strict upper triangle (dst global, full copy).
// `full`: copy every element untransposed (kLoadSym; the caller then symmetrizes on chip).
template <typename T, int kU = 8>
__device__ __forceinline__ void LoadLower(const T* src, int n, T* dst, int ld, bool transpose,
                                          bool zero_upper, bool full = false) {
  const int total = n * n;
  for (int e0 = threadIdx.x; e0 < total; e0 += kU * kNT) {
    T v[kU];
    int at[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const int e = e0 + u * kNT;
      const int i = e / n, j = e - i * n;
      const bool in = e < total;
      const bool keep = in && (full || (transpose ? j >= i : j <= i));
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

// Lower triangle of A (shared, row stride ld, full matrix staged) = (A + A^T) / 2, in place:
// every write is to the lower triangle, every other read to the (untouched) upper one.
template <typename T>
__device__ __forceinline__ void SymmetrizeSmem(T* A, int ld, int n) {
  for (int i = threadIdx.x / 32; i < n; i += kNT / 32)
    for (int j = threadIdx.x % 32; j <= i; j += 32) A[i * ld + j] = (A[i * ld + j] + A[j * ld + i]) / T(2);
}
// dst (global, n x n) = lower triangle of (src + src^T) / 2, zeros above; 32 x 32 tile pairs
// through shared `buf` (>= 2 * 32 * 33 elements) so both reads are coalesced. dst != src.
template <typename T>
__device__ void SymmetrizeToGlobal(const T* __restrict__ src, int n, T* __restrict__ dst, T* buf) {
  T* X = buf;
  T* Y = buf + 32 * 33;
  const int tid = threadIdx.x, nt = (n + 31) / 32;
  constexpr int kQ = 32 * 32 / kNT;
  for (int I = 0; I < nt; ++I)
    for (int J = 0; J <= I; ++J) {
      T vx[kQ], vy[kQ];
#pragma unroll
      for (int q = 0; q < kQ; ++q) {
        const int e = tid + q * kNT, rr = e >> 5, cc = e & 31;
        const int i = I * 32 + rr, j = J * 32 + cc, i2 = J * 32 + rr, j2 = I * 32 + cc;
        vx[q] = (i < n && j < n) ? src[static_cast<int64_t>(i) * n + j] : T(0);
        vy[q] = (i2 < n && j2 < n) ? src[static_cast<int64_t>(i2) * n + j2] : T(0);
      }
#pragma unroll
      for (int q = 0; q < kQ; ++q) {
        const int e = tid + q * kNT, rr = e >> 5, cc = e & 31;
        X[rr * 33 + cc] = vx[q];
        Y[rr * 33 + cc] = vy[q];
      }
      __syncthreads();
#pragma unroll
      for (int q = 0; q < kQ; ++q) {
        const int e = tid + q * kNT, rr = e >> 5, cc = e & 31;
        const int i = I * 32 + rr, j = J * 32 + cc;
        if (i < n && j < n) dst[static_cast<int64_t>(i) * n + j] = j <= i ? (X[rr * 33 + cc] + Y[cc * 33 + rr]) / T(2) : T(0);
        const int i2 = J * 32 + rr, j2 = I * 32 + cc;
        if (I != J && i2 < n && j2 < n) dst[static_cast<int64_t>(i2) * n + j2] = T(0);
      }
      __syncthreads();
    }
}

// Correctly rounded reciprocal without the divide's range check and slow-path call.
__device__ __forceinline__ float RcpRn(float x) { return __frcp_rn(x); }
__device__ __forceinline__ double RcpRn(double x) { return __drcp_rn(x); }

// Factors the 32 x 32 diagonal block held by one warp (lane r: row r, identity-padded) in LDL^T form:
// the Schur complement stays unscaled, so each step's critical path is shuffle -> divide -> multiply
// -> FMA (the next pivot is lane j+1's own entry); no sqrt on the chain. L = S / sqrt(d) at the end.
// Returns the 1-based first pivot with !(d > 0) (0 if none); *invd_mine = 1 / L_rr.
template <typename T>
__device__ __forceinline__ int DiagFactorLdl(T (&row)[kNB], int lane, T* tb, T* invd_mine) {
  using V = Vec16<T>;
  constexpr int kV = V::kN;
  int info = 0;
  T dmine = T(1);
#pragma unroll
  for (int j = 0; j < kNB; ++j) {
    if (j + 1 < kNB) tb[j * kNB + lane] = row[j];  // column j of the Schur complement (rows > j valid)
    const T d = ShflIdx(row[j], j);
    if (info == 0 && !(d > T(0))) info = j + 1;
    if (lane == j) dmine = d;
    if (j + 1 < kNB) {
      const T m = row[j] * RcpRn(d);  // unit-lower multiplier l_rj (1 / d: no divide on the chain)
      __syncwarp();
#pragma unroll
      for (int kk = ((j + 1) / kV) * kV; kk < kNB; kk += kV) {
        const typename V::type v = *reinterpret_cast<const typename V::type*>(tb + j * kNB + kk);
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const int c = kk + e;
          if (c > j) row[c] = fma(-m, V::Get(v, e), row[c]);
        }
      }
      __syncwarp();
    }
  }
  const T s = Scalar<T>::Sqrt(dmine);
  const T rs = T(1) / s;
#pragma unroll
  for (int j = 0; j < kNB; ++j) {
    const T rsj = ShflIdx(rs, j);
    row[j] = (j == lane) ? s : row[j] * rsj;
  }
  *invd_mine = rs;
  return info;
}

// ---- large class: trailing update (v4) ---------------------------------------------------------
// A[k0:n, k0:n] (lower, global, row stride n) -= P P^T with P = L[k0:n, k:k+32] held transposed in
// shared PT[p * pld + (i - k)]. Warp-level 32 x 32 tiles of the lower triangle (diagonal tiles
// included), round-robin over the 8 warps; every warp issues its C tile's global loads before the
// k loop, so the loads are in flight during the tile's 32-step product (no block barrier per tile).
// f64: 4 x 4 DMMA m8n8k4 (exact f64 FMA), fragments straight from PT (pld = 8 mod 16 doubles:
// 2 wavefronts per 256 B load); f32: FFMA, thread = 4 rows (stride 8) x 8 consecutive columns,
// 1 LDS per 4 rows + 2 LDS.128 per 8 columns per 32 FFMA. Rows / columns >= n read stale PT
// entries; they only feed C entries that are never stored (a matrix product mixes no rows).
// BATCHLA_LARGE_UPDATE_OLD: the v3 block-tile update (benchmark variant).
template <typename T>
__host__ __device__ constexpr int LargePld(int n) {
  return sizeof(T) == 8 ? RoundUp(n, 16) + 8 : RoundUp(n, 4);
}

__device__ __forceinline__ void LargeTriDecode(int t, int& ti, int& tj) {
  int r = static_cast<int>((sqrtf(8.f * t + 1.f) - 1.f) * 0.5f);
  while (r * (r + 1) / 2 > t) --r;
  while ((r + 1) * (r + 2) / 2 <= t) ++r;
  ti = r;
  tj = t - r * (r + 1) / 2;
}

// noinline: inlined into the factor loop it spills (255 registers); as a call, none. static: one
// copy per translation unit (the header is included by more than one .cu).
static __device__ __noinline__ void LargeUpdateTile(double* A, int n, int k, int i0, int j0, const double* PT,
                                                int pld) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  double* const cb = A + static_cast<int64_t>(i0 + g) * n + j0 + 2 * q;  // element (mi, nj, e) at mi 8 n + nj 8 + e
  double c[4][4][2], acc[4][4][2];
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int nj = 0; nj < 4; ++nj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int i = i0 + mi * 8 + g, j = j0 + nj * 8 + 2 * q + e;
        c[mi][nj][e] = (i < n && j <= i) ? cb[mi * 8 * n + nj * 8 + e] : 0.0;
        acc[mi][nj][e] = 0.0;
      }
  const double* pa = PT + (i0 - k) + g + q * pld;
  const double* pb = PT + (j0 - k) + g + q * pld;
#pragma unroll 1
  for (int p = 0; p < kNB; p += 4) {
    double a[4], b[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      a[r] = pa[p * pld + r * 8];
      b[r] = pb[p * pld + r * 8];
    }
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) detail::MmaF64m8n8k4(acc[mi][nj], a[mi], b[nj]);
  }
#pragma unroll
  for (int mi = 0; mi < 4; ++mi)
#pragma unroll
    for (int nj = 0; nj < 4; ++nj)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int i = i0 + mi * 8 + g, j = j0 + nj * 8 + 2 * q + e;
        if (i < n && j <= i) cb[mi * 8 * n + nj * 8 + e] = c[mi][nj][e] - acc[mi][nj][e];
      }
}

__device__ __forceinline__ void LargeUpdateTile(float* A, int n, int k, int i0, int j0, const float* PT,
                                                int pld) {
  const int lane = threadIdx.x & 31, rg = lane >> 2, cg = lane & 3;
  float* const cb = A + static_cast<int64_t>(i0 + rg) * n + j0 + cg * 8;  // element (r, qq) at r 8 n + qq
  float c[4][8], acc[4][8];
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int qq = 0; qq < 8; ++qq) {
      const int i = i0 + rg + 8 * r, j = j0 + cg * 8 + qq;
      c[r][qq] = (i < n && j <= i) ? cb[r * 8 * n + qq] : 0.f;
      acc[r][qq] = 0.f;
    }
  const float* pa = PT + (i0 - k) + rg;
  const float* pb = PT + (j0 - k) + cg * 8;  // 16 B aligned: j0 - k = 32 (tj + 1), pld % 4 == 0
#pragma unroll 4
  for (int p = 0; p < kNB; ++p) {
    float a[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) a[r] = pa[p * pld + 8 * r];
    float b[8];
    detail::Load8(pb + p * pld, b);
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int qq = 0; qq < 8; ++qq) acc[r][qq] = fmaf(a[r], b[qq], acc[r][qq]);
  }
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int qq = 0; qq < 8; ++qq) {
      const int i = i0 + rg + 8 * r, j = j0 + cg * 8 + qq;
      if (i < n && j <= i) cb[r * 8 * n + qq] = c[r][qq] - acc[r][qq];
    }
}

// Requires a full 32-wide panel (k0 = k + 32), which holds whenever k0 < n.
template <typename T>
__device__ __forceinline__ void LargeTrailingUpdate(T* A, int n, int k, int k0, const T* PT, int pld) {
  const int warp = threadIdx.x >> 5;
  const int tiles = (n - k0 + 31) >> 5, total = tiles * (tiles + 1) / 2;
  for (int t = warp; t < total; t += kNT / 32) {
    int ti, tj;
    LargeTriDecode(t, ti, tj);
    LargeUpdateTile(A, n, k, k0 + ti * 32, k0 + tj * 32, PT, pld);
  }
}

// Factors the lower triangle of A (n x n, row stride ld; shared or global memory) in place.
// USE_PT: the panel below the diagonal block is also kept transposed in shared PT[p * pld + i-k]
// (large path: A in global memory); otherwise the update reads the panel from A (medium path).
// Sets sc->info (must be 0 on entry) to the first failing pivot; stops at the failing panel.
// nr >= n rows: rows n..nr-1 (medium posv: row n = b^T) get the panel solves and trailing updates
// of columns < n only, i.e. row n ends as (L^-1 b)^T (forward substitution folded into the factor).
template <typename T, bool USE_PT>
__device__ void BlockedFactor(T* A, int ld, int n, int nr, T* PT, int pld, BlockedScratch<T>* sc) {
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
#ifdef BATCHLA_BLOCKED_DIAG_OLD
      const int inf = SmallFactor<T, kNB, 32, kNB>(row, lane, sc->tb, &invd);
#else
      const int inf = DiagFactorLdl<T>(row, lane, sc->tb, &invd);
#endif
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
    for (int i = k + w + tid; i < nr; i += kNT) {
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
    const int k0 = k + w, m = nr - k0;
#ifndef BATCHLA_LARGE_UPDATE_OLD
    if constexpr (USE_PT) {  // large (nr == n): warp-tile update, see LargeTrailingUpdate
      if (m > 0) LargeTrailingUpdate<T>(A, n, k, k0, PT, pld);
    } else
#endif
    if (m > 0) {
      const int tiles = (m + 63) >> 6;
      for (int ti = 0; ti < tiles; ++ti) {
        for (int tj = 0; tj <= ti; ++tj) {
          int ri[4], cj[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const int i = k0 + ti * 64 + ty + 16 * q, j = k0 + tj * 64 + tx + 16 * q;
            ri[q] = i < nr ? i : nr - 1;
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
                cpre[qa][qb] = (i < nr && j <= i && j < n) ? A[static_cast<int64_t>(i) * ld + j] : T(0);
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
              if (i < nr && j <= i && j < n) {
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
// posv stages n + 1 rows (row n = first rhs column, forward-solved by the factor).
template <typename T>
__host__ __device__ constexpr size_t MediumSmemBytes(int n, bool posv = false) {
  return RoundUp((n + (posv ? 1 : 0)) * MediumLd<T>(n) * int(sizeof(T)), 16) + sizeof(BlockedScratch<T>);
}
template <typename T>
__host__ __device__ constexpr size_t LargeSmemBytes(int n) {
  return RoundUp(kNB * LargePld<T>(n) * int(sizeof(T)), 16) + sizeof(BlockedScratch<T>);
}

// Backward solve L^T x = z in place in z (shared, length n), block-parallel by 32-row panels from
// the bottom: warp 0 solves the diagonal block (column of L in registers, one shuffle per row), then
// every thread updates one row above the panel (z_i -= sum_j L[j][i] x_j, reads along a row of L).
template <typename T>
__device__ __forceinline__ void BlockBackSolve(const T* A, int ld, int n, const T* dinv, T* z) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int J = ((n - 1) / kNB) * kNB; J >= 0; J -= kNB) {
    const int jw = n - J < kNB ? n - J : kNB;
    if (warp == 0) {
      T a[kNB];
#pragma unroll
      for (int c = 0; c < kNB; ++c) a[c] = (c < jw && lane < jw) ? A[(J + c) * ld + J + lane] : T(0);
      T v = lane < jw ? z[J + lane] : T(0);
      const T di = lane < jw ? dinv[J + lane] : T(0);
#pragma unroll
      for (int jl = kNB - 1; jl >= 0; --jl) {
        if (jl < jw) {
          const T xj = ShflIdx(v * di, jl);
          if (lane == jl) v = xj;
          if (lane < jl) v = fma(-a[jl], xj, v);
        }
      }
      if (lane < jw) z[J + lane] = v;
    }
    __syncthreads();
    if (J > 0) {
      for (int i = tid; i < J; i += kNT) {
        T s0 = T(0), s1 = T(0);
#pragma unroll 8
        for (int c = 0; c < jw; c += 2) {
          s0 = fma(A[(J + c) * ld + i], z[J + c], s0);
          if (c + 1 < jw) s1 = fma(A[(J + c + 1) * ld + i], z[J + c + 1], s1);
        }
        z[i] -= s0 + s1;
      }
      __syncthreads();
    }
  }
}

// medium: whole matrix in shared memory. POSV: out = X (n x k); else out = L.
// MINB: min blocks per SM for the register budget (2 where two blocks fit the shared memory).
template <typename T, bool POSV, int MINB>
__global__ void __launch_bounds__(kNT, MINB)
    MediumKernel(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int n, int k,
                 int mode) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int ld = MediumLd<T>(n);
  const int nr = POSV ? n + 1 : n;
  T* A = reinterpret_cast<T*>(smraw);
  auto* sc = reinterpret_cast<BlockedScratch<T>*>(smraw + RoundUp(nr * ld * int(sizeof(T)), 16));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t nn = static_cast<int64_t>(n) * n;
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    const T* am = a + mat * nn;
    const int64_t base = mat * n * static_cast<int64_t>(k);
    LoadLower<T>(am, n, A, ld, mode == kLoadUpper, false, mode == kLoadSym);  // upper -> lower when transposed
    if constexpr (POSV) {  // row n = b[:, 0]^T
      for (int j = tid; j < n; j += kNT) A[n * ld + j] = k > 0 ? b[base + static_cast<int64_t>(j) * k] : T(0);
    }
    if (tid == 0) sc->info = 0;
    __syncthreads();
    if (mode == kLoadSym) {
      SymmetrizeSmem<T>(A, ld, n);
      __syncthreads();
    }
    BlockedFactor<T, false>(A, ld, n, nr, nullptr, 0, sc);
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
      if (k > 0) {
        if (!inf) BlockBackSolve<T>(A, ld, n, sc->dinv, A + n * ld);
        for (int i = tid; i < n; i += kNT)
          out[base + static_cast<int64_t>(i) * k] = inf ? Scalar<T>::NaN() : A[n * ld + i];
      }
      constexpr int MAXM = (tuning::kSmemMaxNF32 + 31) / 32;
      for (int cc = 1 + warp; cc < k; cc += kNT / 32) {  // further columns: warp per column
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
    LargeKernel(const T* a, T* l, int32_t* info, int64_t batch, int n, int mode) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int pld = LargePld<T>(n);
  T* PT = reinterpret_cast<T*>(smraw);
  auto* sc = reinterpret_cast<BlockedScratch<T>*>(smraw + RoundUp(kNB * pld * int(sizeof(T)), 16));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t nn = static_cast<int64_t>(n) * n;
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    const T* am = a + mat * nn;
    T* lm = l + mat * nn;
    if (mode == kLoadSym) SymmetrizeToGlobal<T>(am, n, lm, PT);  // a != l (launch.h)
    else LoadLower<T, 32>(am, n, lm, n, false, true);  // same thread reads and writes: a == l is fine
    if (tid == 0) sc->info = 0;
    __syncthreads();
    BlockedFactor<T, true>(lm, n, n, n, PT, pld, sc);
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

#ifdef BATCHLA_MEDIUM_MINB1
constexpr int kMediumMinB1 = BATCHLA_MEDIUM_MINB1;  // benchmark variant
#else
constexpr int kMediumMinB1 = 1;
#endif
template <typename T>
cudaError_t BlockedLaunch(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info,
                          int64_t batch, int n, int k, int mode, bool posv, bool medium) {
  if (medium) {
    const size_t smem = MediumSmemBytes<T>(n, posv);
    // two blocks per SM only where their shared memory fits (1 KB reserved per block)
    const bool two = 2 * (smem + 1024) <= 228 * 1024;
    auto kern = posv ? (two ? MediumKernel<T, true, 2> : MediumKernel<T, true, kMediumMinB1>)
                     : (two ? MediumKernel<T, false, 2> : MediumKernel<T, false, kMediumMinB1>);
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
    kern<<<GridFor(batch), kNT, smem, s>>>(a, b, out, info, batch, n, k, mode);
  } else {
    const size_t smem = LargeSmemBytes<T>(n);
    cudaError_t e = cudaFuncSetAttribute(LargeKernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
    LargeKernel<T><<<GridFor(batch), kNT, smem, s>>>(a, out, info, batch, n, mode);
  }
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
