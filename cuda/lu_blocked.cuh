// Batched LU (getrf) with partial pivoting, blocked size classes: the building blocks shared by
// the medium kernel (whole matrix in shared memory, cuda/lu_blocked_medium.cuh) and the large one
// (matrix in global memory, panel in shared memory, cuda/lu_blocked_large.cuh).
//
// Storage: ROW-MAJOR everywhere (global and shared): element (i, j) of a matrix with leading
// dimension ld at i * ld + j. Loops think in rows: a panel is 32 consecutive COLUMNS of the
// remaining rows; panel row r is held in registers by thread r % NT (slot r / NT).
//
// Algorithm (right-looking, LAPACK getrf order): for each 32-wide panel [k, k + w):
//   1. LuPanel: getf2 on rows [k, n) of the panel columns, rows in registers, rows physically
//      exchanged between their owner threads (so "first max in the current order" is "smallest
//      row index"); records pivots and rowsrc (panel row i now holds pre-panel panel row rowsrc[i]).
//   2. LuColumnSwapSolve (thread per column outside the panel): apply the panel's row permutation
//      (only the top w rows and at most w rows below them move), and on the right of the panel
//      solve U12 = L11^-1 A12 with the top w entries in registers.
//   3. LuTrailing: A22 -= L21 U12, warp tiles of 16 x 32 (f32: FMA, thread tile 4 x 4; f64: DMMA
//      m8n8k4), operands from shared memory.
// Shared-memory layouts: cuda/lu_blocked_layout.cuh. Dispatch: cuda/lu_blocked.cu.
#pragma once

#include <climits>
#include <cstdint>
#include <utility>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/lu_dispatch.h"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {

// Thresholds of the blocked classes: cuda/tuning.h, block "LU family".
using tuning::kLuLargeMaxN;
using tuning::kLuLargeRows;
using tuning::kLuLargeStrip;
using tuning::kLuLargeThreads;
using tuning::kLuMediumMaxNF32;
using tuning::kLuMediumMaxNF64;
using tuning::kLuNB;

template <typename T>
__host__ __device__ constexpr int LuMediumMaxN() {
  return sizeof(T) == 8 ? kLuMediumMaxNF64 : kLuMediumMaxNF32;
}

// Row / column of element e of a row-major matrix with `cols` columns, without an integer divide:
// rcols = 1.0f / cols; exact while rows, cols <= 1024 (rounding error << 0.5 / cols).
__device__ __forceinline__ int LuRowOf(int e, float rcols) { return __float2int_rz((float(e) + 0.5f) * rcols); }

// dst[i * ldd + j] = src[i * lds + j] for i < rows, j < cols, with kLuCopyU loads in flight per
// thread (a copy with one load in flight per thread is latency-bound at a few hundred GB/s).
constexpr int kLuCopyU = 16;
template <typename T, int NT>
__device__ __forceinline__ void LuCopy(const T* __restrict__ src, int64_t lds, T* __restrict__ dst, int64_t ldd,
                                       int rows, int cols) {
  const int total = rows * cols;
  const float rc = 1.0f / float(cols);
  for (int e0 = threadIdx.x; e0 < total; e0 += kLuCopyU * NT) {
    T v[kLuCopyU];
#pragma unroll
    for (int u = 0; u < kLuCopyU; ++u) {
      const int e = e0 + u * NT;
      if (e < total) {
        const int i = LuRowOf(e, rc);
        v[u] = src[i * lds + (e - i * cols)];
      }
    }
#pragma unroll
    for (int u = 0; u < kLuCopyU; ++u) {
      const int e = e0 + u * NT;
      if (e < total) {
        const int i = LuRowOf(e, rc);
        dst[i * ldd + (e - i * cols)] = v[u];
      }
    }
  }
}

template <typename T>
struct LuShared {      // per-block scratch besides the matrix
  alignas(16) T prow[kLuNB];  // pivot row of the current panel step
  alignas(16) T xrow[kLuNB];  // the row it displaces
  unsigned long long redk[32];  // per-warp argmax keys / reductions
  T redv[32];
  int redi[32];
  int prow_src, xrow_src;
  int dlist[kLuNB];    // panel rows >= w that received a top row
  int dcount;
  int info;
};

template <typename T>
__device__ __forceinline__ T LuInf();
template <>
__device__ __forceinline__ float LuInf<float>() { return __int_as_float(0x7f800000); }
template <>
__device__ __forceinline__ double LuInf<double>() { return __longlong_as_double(0x7ff0000000000000ll); }
template <typename T>
__host__ __device__ constexpr T LuMinNormal() { return Scalar<T>::kMinNormal; }

// Block reduction helpers (all threads get the result; uses sh->redv / redi; two barriers).
template <typename T, int NT>
__device__ __forceinline__ void LuBlockSum(T& s, int& cnt, LuShared<T>* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    s += ShflXor(s, off);
    cnt += __shfl_xor_sync(0xffffffffu, cnt, off);
  }
  __syncthreads();
  if (lane == 0) sh->redv[warp] = s, sh->redi[warp] = cnt;
  __syncthreads();
  s = T(0), cnt = 0;
#pragma unroll
  for (int u = 0; u < NT / 32; ++u) s += sh->redv[u], cnt += sh->redi[u];
}

// slogdet's sums over U's diagonal: sum of log|U(i, i)|, and cnt = row exchanges + negative entries
// (the parity) + 2^20 per zero entry.
template <typename T>
struct LuDetSums {
  T logs = T(0);
  int cnt = 0;
  __device__ void Add(T d, bool exchanged) {
    logs += log(fabs(d));
    cnt += int(exchanged) + (d < T(0)) + (d == T(0) ? (1 << 20) : 0);
  }
};
template <typename T>
__device__ __forceinline__ void LuStoreSlogdet(T logs, int cnt, T* sign, T* logabsdet) {
  const bool zero = cnt >= (1 << 20);
  *sign = zero ? T(0) : ((cnt & 1) ? T(-1) : T(1));
  *logabsdet = zero ? -LuInf<T>() : logs;
}

// sign and log|det| from the factors' diagonal (U(i, i) = diag[i * stride]) and the pivots, as
// jnp.linalg.slogdet: a zero U(i, i) gives (0, -inf), a NaN one logabsdet NaN (launch.h). All
// threads of the block call it; thread 0 writes.
template <typename T, int NT>
__device__ __forceinline__ void LuWriteSlogdet(const T* diag, int64_t stride, const int* piv, int n, LuShared<T>* sh,
                                               T* sign, T* logabsdet) {
  LuDetSums<T> sums;
  for (int i = threadIdx.x; i < n; i += NT) sums.Add(diag[i * stride], piv[i] != i);
  T s = sums.logs;
  int cnt = sums.cnt;
  LuBlockSum<T, NT>(s, cnt, sh);
  if (threadIdx.x == 0) LuStoreSlogdet(s, cnt, sign, logabsdet);
}

// Pivot-search key: |x| orders as its bit pattern, so key = bits(|x|) + 1; 0 = no candidate or
// NaN (never chosen: LAPACK idamax skips a NaN unless it is the first entry, which gets the top
// key). Keys are compared exactly, so equal |x| tie and the smaller row wins.
__device__ __forceinline__ unsigned long long LuKey(float x, bool first) {
  if (x != x) return first ? ~0ull : 0ull;
  return static_cast<unsigned long long>(__float_as_uint(fabsf(x))) + 1ull;
}
__device__ __forceinline__ unsigned long long LuKey(double x, bool first) {
  if (x != x) return first ? ~0ull : 0ull;
  return static_cast<unsigned long long>(__double_as_longlong(fabs(x))) + 1ull;
}
// LuKey as selects (a branch there serialized the pivot steps: bench/NOTES.md, "getrf tile class").
__device__ __forceinline__ unsigned long long LuKeyNoBranch(float x, bool first) {
  const unsigned long long k = static_cast<unsigned long long>(__float_as_uint(fabsf(x))) + 1ull;
  return x != x ? (first ? ~0ull : 0ull) : k;
}
__device__ __forceinline__ unsigned long long LuKeyNoBranch(double x, bool first) {
  const unsigned long long k = static_cast<unsigned long long>(__double_as_longlong(fabs(x))) + 1ull;
  return x != x ? (first ? ~0ull : 0ull) : k;
}
// 1 / x correctly rounded (what LAPACK's scaling multiplies by), without the division's general path.
__device__ __forceinline__ float LuRcp(float x) { return __frcp_rn(x); }
__device__ __forceinline__ double LuRcp(double x) { return __drcp_rn(x); }

// Warp argmax of (key, row): largest key, then smallest row; every lane gets the result. Warp
// reductions on the integer pipe (sm_80+ redux): 32-bit halves of the key, then the row.
__device__ __forceinline__ void LuWarpArgmax(unsigned long long& key, int& row) {
  const unsigned hi = unsigned(key >> 32), lo = unsigned(key);
  const unsigned hmax = __reduce_max_sync(0xffffffffu, hi);
  const unsigned lmax = __reduce_max_sync(0xffffffffu, hi == hmax ? lo : 0u);
  const bool top = hi == hmax && lo == lmax;
  row = int(__reduce_min_sync(0xffffffffu, top ? unsigned(row) : 0x7fffffffu));
  key = (static_cast<unsigned long long>(hmax) << 32) | lmax;
}

// Block-wide pivot search of column step j: the row r (j <= r < m) whose column-j value has the
// largest LuKey, the smallest such r on ties (LAPACK idamax); j when every candidate is NaN. v[q]
// is the thread's value for its row tid + q NT. One __syncthreads (sh->redk / redi).
template <typename T, int R, int NT>
__device__ __forceinline__ int LuBlockPivot(const T (&v)[R], int j, int m, LuShared<T>* sh) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  unsigned long long key = 0;
  int bi = 0x7fffffff;
#pragma unroll
  for (int q = 0; q < R; ++q) {  // thread (slots in row order), warp, block
    const int r = tid + q * NT;
    const unsigned long long kq = (r >= j && r < m) ? LuKey(v[q], r == j) : 0ull;
    if (kq > key) key = kq, bi = r;
  }
  LuWarpArgmax(key, bi);
  if (lane == 0) sh->redk[warp] = key, sh->redi[warp] = bi;
  __syncthreads();
  key = sh->redk[0], bi = sh->redi[0];
#pragma unroll
  for (int u = 1; u < NT / 32; ++u) {
    const unsigned long long ok = sh->redk[u];
    const int oi = sh->redi[u];
    if (ok > key || (ok == key && oi < bi)) key = ok, bi = oi;
  }
  return key != 0 && bi < m ? bi : j;
}

// Slot q of a thread's R register rows (or row sources), picked by selects: a runtime index would
// move the rows to local memory. Called in unrolled loops, so c is a constant.
template <typename T, int R, int NB>
__device__ __forceinline__ T LuPick(const T (&rows)[R][NB], int q, int c) {
  T v = rows[0][c];
#pragma unroll
  for (int u = 1; u < R; ++u) v = q == u ? rows[u][c] : v;
  return v;
}
template <int R>
__device__ __forceinline__ int LuPick(const int (&v)[R], int q) {
  int x = v[0];
#pragma unroll
  for (int u = 1; u < R; ++u) x = q == u ? v[u] : x;
  return x;
}

// One column step j of LuPanel (j a template argument: every index into the register rows is
// static, whatever the unrolling heuristics decide).
template <typename T, int R, int NT, int j>
__device__ __forceinline__ void LuPanelStep(T (&row)[R][kLuNB], int (&src)[R], int m, int k, int* piv,
                                            LuShared<T>* sh, int& info) {
  constexpr int NB = kLuNB;
  using V = Vec16<T>;
  using VT = typename V::type;
  constexpr int KV = V::kN;
  const int tid = threadIdx.x, warp = tid >> 5;
  // 1. argmax over rows r >= j
  T cj[R];
#pragma unroll
  for (int q = 0; q < R; ++q) cj[q] = row[q][j];
  const int p = LuBlockPivot<T, R, NT>(cj, j, m, sh);
  // 2. the owners publish the pivot row and row j (warp-uniform branches). Slots are picked by
  // selects, never by a runtime index: that would move the register rows to local memory.
  const int pt = p % NT, jt = j % NT, pq = p / NT, jq = j / NT;
  if (warp == (pt >> 5) && tid == pt) {
#pragma unroll
    for (int c = 0; c < NB; ++c) sh->prow[c] = LuPick(row, pq, c);
    sh->prow_src = LuPick(src, pq);
  }
  if (p != j && warp == (jt >> 5) && tid == jt) {
#pragma unroll
    for (int c = 0; c < NB; ++c) sh->xrow[c] = LuPick(row, jq, c);
    sh->xrow_src = LuPick(src, jq);
  }
  if (tid == 0) piv[k + j] = k + p;
  __syncthreads();
  // 3. swap, scale, rank-1 update of the panel columns right of j
  const T pv = sh->prow[j];
  if (pv == T(0) && info == 0) info = k + j + 1;
  const bool tiny = !(fabs(pv) >= LuMinNormal<T>());  // LAPACK: divide instead of 1/pivot
  const T rp = T(1) / pv;
  if (p != j && warp == (pt >> 5) && tid == pt) {  // old row j moves to row p
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const bool mine = pq == q;
#pragma unroll
      for (int c = 0; c < NB; ++c) row[q][c] = mine ? sh->xrow[c] : row[q][c];
      src[q] = mine ? sh->xrow_src : src[q];
    }
  }
  if (p != j && warp == (jt >> 5) && tid == jt) {  // the pivot row moves to row j
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const bool mine = jq == q;
#pragma unroll
      for (int c = 0; c < NB; ++c) row[q][c] = mine ? sh->prow[c] : row[q][c];
      src[q] = mine ? sh->prow_src : src[q];
    }
  }
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int r = tid + q * NT;
    if (r > j && r < m) {
      T l = row[q][j];
      if (pv != T(0)) l = tiny ? l / pv : l * rp;
      row[q][j] = l;
#pragma unroll
      for (int c = ((j + 1) / KV) * KV; c < NB; c += KV) {
        const VT v = *reinterpret_cast<const VT*>(sh->prow + c);
#pragma unroll
        for (int e = 0; e < KV; ++e)
          if (c + e > j) row[q][c + e] = fma(-l, V::Get(v, e), row[q][c + e]);
      }
    }
  }
}
template <typename T, int R, int NT, int... J>
__device__ __forceinline__ void LuPanelSteps(std::integer_sequence<int, J...>, T (&row)[R][kLuNB], int (&src)[R],
                                             int m, int w, int k, int* piv, LuShared<T>* sh, int& info) {
  ((J < w ? LuPanelStep<T, R, NT, J>(row, src, m, k, piv, sh, info) : void()), ...);
}

// getf2 on the panel P (m rows x w <= 32 columns, row stride ldp, shared memory), rows held by
// their owner threads (R slots, m <= R * NT). Pivot search: LAPACK idamax (first max |x|; a NaN is
// never chosen unless it sits on the diagonal, where idamax would start) so p is always a valid
// row. Zero pivot: no scaling, sh->info = first (k + j + 1), elimination continues.
// Writes piv[k + j] = k + p, rowsrc, sh->dlist/dcount (caller zeroes dcount before). Block-wide.
template <typename T, int R, int NT>
__device__ void LuPanel(T* P, int ldp, int m, int w, int k, int* piv, int* rowsrc, LuShared<T>* sh) {
  constexpr int NB = kLuNB;
  const int tid = threadIdx.x;
  T row[R][NB];
  int src[R];
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int r = tid + q * NT;
    src[q] = r;
#pragma unroll
    for (int c = 0; c < NB; ++c) row[q][c] = (r < m && c < w) ? P[r * ldp + c] : T(0);
  }
  int info = 0;
  LuPanelSteps<T, R, NT>(std::make_integer_sequence<int, NB>(), row, src, m, w, k, piv, sh, info);
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int r = tid + q * NT;
    if (r < m) {
#pragma unroll
      for (int c = 0; c < NB; ++c)
        if (c < w) P[r * ldp + c] = row[q][c];
      rowsrc[r] = src[q];
      if (r >= w && src[q] != r) sh->dlist[atomicAdd(&sh->dcount, 1)] = r;
    }
  }
  if (tid == 0 && info != 0 && sh->info == 0) sh->info = info;
}

// Column c of rows [k, k + m) of A (element (k + i, c) at A[(k + i) * lda + c]): applies the
// panel's row permutation (new row i = old row rowsrc[i]; only rows < w and the dlist rows move,
// and dlist rows receive old top rows) and, when SOLVE, the unit-lower solve with L11 (w x w,
// row stride ldl) on the top w entries; us (stride usld) gets a copy of the solved entries.
template <typename T, bool SOLVE>
__device__ __forceinline__ void LuColumnSwapSolve(T* A, int64_t lda, int k, int w, int c, const int* rowsrc,
                                                  const LuShared<T>* sh, const T* L11, int ldl, T* us,
                                                  int usld) {
  constexpr int NB = kLuNB;
  T v[NB];
#pragma unroll
  for (int i = 0; i < NB; ++i) v[i] = i < w ? A[(k + rowsrc[i]) * lda + c] : T(0);
  const int nd = sh->dcount;
  for (int e0 = 0; e0 < nd; e0 += 8) {  // old top rows (not yet overwritten) that move down
    T dv[8];                              // 8 loads in flight, then their stores
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (e0 + e < nd) dv[e] = A[(k + rowsrc[sh->dlist[e0 + e]]) * lda + c];
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (e0 + e < nd) A[(k + sh->dlist[e0 + e]) * lda + c] = dv[e];
  }
  if constexpr (SOLVE) {
#pragma unroll
    for (int q = 0; q < NB; ++q)
#pragma unroll
      for (int i = q + 1; i < NB; ++i)
        if (i < w) v[i] = fma(-L11[i * ldl + q], v[q], v[i]);
  }
#pragma unroll
  for (int i = 0; i < NB; ++i)
    if (i < w) {
      A[(k + i) * lda + c] = v[i];
      if (us) us[i * usld] = v[i];
    }
}

// C[i][j] -= sum_{p < kd} L[i][p] U[p][j] for i < rows, j < cols. Warp tiles of 16 x 32 dealt
// round-robin to the NT / 32 warps; lane (ti = lane / 8, tj = lane % 8) owns rows ti + 4a and
// columns tj + 8b (a, b < 4): U loads and C accesses are contiguous across lanes, L loads are 4
// broadcast addresses (conflict-free for odd ldl). PRELOAD (C in global memory): C is loaded into
// its own registers before the product so its latency hides behind the FMAs.
// Loading the C tile of a warp's next tile before computing the current one (global C) costs 16-32
// registers: measured slower on H200 (f64 512: 4.6 vs 3.6 ms, spills in the large kernel), so it
// is a benchmark variant only.
#ifdef BATCHLA_LU_GEMM_PREFETCH
constexpr bool kLuPrefetch = true;
#else
constexpr bool kLuPrefetch = false;
#endif

template <typename T, int NT, bool PRELOAD>
__device__ __forceinline__ void LuGemm(T* C, int64_t ldc, int rows, int cols, const T* L, int ldl,
                                       const T* U, int ldu, int kd = kLuNB) {
  constexpr int NW = NT / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int ti = lane >> 3, tj = lane & 7;
  const int tr = (rows + 15) >> 4, tc = (cols + 31) >> 5, total = tr * tc;
  auto coords = [&](int t, int (&ri)[4], int (&cj)[4]) {
    const int i0 = (t / tc) * 16 + ti, j0 = (t % tc) * 32 + tj;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      ri[a] = min(i0 + 4 * a, rows - 1);
      cj[a] = min(j0 + 8 * a, cols - 1);
    }
  };
  constexpr int PC = PRELOAD ? 4 : 1;
  T nx[PC][PC];  // PRELOAD: C of this warp's next tile, loaded one tile ahead
  if constexpr (PRELOAD && kLuPrefetch) {
    if (warp < total) {
      int ri[4], cj[4];
      coords(warp, ri, cj);
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) nx[a][b] = C[ri[a] * ldc + cj[b]];
    }
  }
  for (int t = warp; t < total; t += NW) {
    const int i0 = (t / tc) * 16 + ti, j0 = (t % tc) * 32 + tj;
    int ri[4], cj[4];
    coords(t, ri, cj);
    T acc[4][4], cv[PC][PC];
    if constexpr (PRELOAD && !kLuPrefetch) {  // C loads issued before the product
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) cv[a][b] = C[ri[a] * ldc + cj[b]], acc[a][b] = T(0);
    } else if constexpr (PRELOAD) {
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) cv[a][b] = nx[a][b], acc[a][b] = T(0);
      if (t + NW < total) {
        int rn[4], cn[4];
        coords(t + NW, rn, cn);
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
          for (int b = 0; b < 4; ++b) nx[a][b] = C[rn[a] * ldc + cn[b]];
      }
    } else {
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) acc[a][b] = C[ri[a] * ldc + cj[b]];
    }
#pragma unroll 8
    for (int p = 0; p < kd; ++p) {
      T x[4], y[4];
#pragma unroll
      for (int a = 0; a < 4; ++a) x[a] = L[ri[a] * ldl + p], y[a] = U[p * ldu + cj[a]];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) acc[a][b] = PRELOAD ? fma(x[a], y[b], acc[a][b]) : fma(-x[a], y[b], acc[a][b]);
    }
    // Lanes past the edge read clamped elements that their neighbours write below: order the
    // reads first (the values are discarded, but the hazard would be real for racecheck).
    __syncwarp();
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b)
        if (i0 + 4 * a < rows && j0 + 8 * b < cols) {
          if constexpr (PRELOAD) C[ri[a] * ldc + cj[b]] = cv[a][b] - acc[a][b];
          else C[ri[a] * ldc + cj[b]] = acc[a][b];
        }
  }
}

// LuGemm for double on tensor cores: the same 16 x 32 warp tiles as 2 x 4 DMMA m8n8k4 tiles.
template <int NT, bool PRELOAD>
__device__ __forceinline__ void LuGemmDmma(double* C, int64_t ldc, int rows, int cols, const double* L,
                                           int ldl, const double* U, int ldu) {
  constexpr int NW = NT / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
  const int tr = (rows + 15) >> 4, tc = (cols + 31) >> 5, total = tr * tc;
  // C element (mi, nj, e) of tile t: row ib + 8 mi + g, column jb + 8 nj + 2 q + e (clamped)
  auto cload = [&](int t, double (&dst)[2][4][2]) {
    const int ib = (t / tc) * 16, jb = (t % tc) * 32;
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < 4; ++nj)
#pragma unroll
        for (int e = 0; e < 2; ++e)
          dst[mi][nj][e] = C[min(ib + mi * 8 + g, rows - 1) * ldc + min(jb + nj * 8 + 2 * q + e, cols - 1)];
  };
  double nx[2][4][2];  // PRELOAD: C of this warp's next tile, loaded one tile ahead
  if (PRELOAD && kLuPrefetch && warp < total) cload(warp, nx);
  for (int t = warp; t < total; t += NW) {
    const int ib = (t / tc) * 16, jb = (t % tc) * 32;
    int ra[2], cb[4];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi) ra[mi] = min(ib + mi * 8 + g, rows - 1);
#pragma unroll
    for (int nj = 0; nj < 4; ++nj) cb[nj] = min(jb + nj * 8 + g, cols - 1);
    double acc[2][4][2], cv[2][4][2];
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < 4; ++nj)
#pragma unroll
        for (int e = 0; e < 2; ++e) acc[mi][nj][e] = 0.0;
    if constexpr (PRELOAD && !kLuPrefetch) {
      cload(t, cv);  // C loads issued before the product
    } else if constexpr (PRELOAD) {
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int nj = 0; nj < 4; ++nj)
#pragma unroll
          for (int e = 0; e < 2; ++e) cv[mi][nj][e] = nx[mi][nj][e];
      if (t + NW < total) cload(t + NW, nx);
    }
#pragma unroll 2
    for (int p = 0; p < kLuNB; p += 4) {
      double a[2], b[4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) a[mi] = L[ra[mi] * ldl + p + q];
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) b[nj] = U[(p + q) * ldu + cb[nj]];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi)
#pragma unroll
        for (int nj = 0; nj < 4; ++nj) detail::MmaF64m8n8k4(acc[mi][nj], a[mi], b[nj]);
    }
#pragma unroll
    for (int mi = 0; mi < 2; ++mi)
#pragma unroll
      for (int nj = 0; nj < 4; ++nj)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int i = ib + mi * 8 + g, j = jb + nj * 8 + 2 * q + e;
          if (i < rows && j < cols) {
            double* c = C + i * ldc + j;
            if constexpr (PRELOAD) *c = cv[mi][nj][e] - acc[mi][nj][e];
            else *c -= acc[mi][nj][e];
          }
        }
  }
}

// The trailing update: DMMA for double (BATCHLA_LU_NO_DMMA: FMA tiles, benchmark variant).
template <typename T, int NT, bool PRELOAD>
__device__ __forceinline__ void LuTrailing(T* C, int64_t ldc, int rows, int cols, const T* L, int ldl,
                                           const T* U, int ldu) {
#ifndef BATCHLA_LU_NO_DMMA
  if constexpr (sizeof(T) == 8) {
    LuGemmDmma<NT, PRELOAD>(C, ldc, rows, cols, L, ldl, U, ldu);
    return;
  }
#endif
  LuGemm<T, NT, PRELOAD>(C, ldc, rows, cols, L, ldl, U, ldu);
}

// Host-side launchers (instantiated in cuda/lu_blocked_*.cu).
template <typename T, bool FUSED>  // FUSED: kSolve / kInverse / kSlogdet, else kFactor
cudaError_t LuMediumRun(cudaStream_t stream, const LuArgs<T>& args, LuOutput out);
template <typename T>
cudaError_t LuLargeLaunch(cudaStream_t stream, const LuArgs<T>& args);
// Left-looking class (kFactor, kLuNB < n <= tuning::kLuLeftMaxN; cuda/lu_blocked_left.cuh), and
// its dynamic shared memory.
template <typename T>
cudaError_t LuLeftLaunch(cudaStream_t stream, const LuArgs<T>& args);
template <typename T>
size_t LuLeftSmem(int n);
constexpr int kLuWarpMaxN = 64;  // the warp class holds 64 padded rows x 64 columns
// Above kLuWarpMaxN: N = 128 (f32: one 128-register row per thread, 4 warps per matrix; f64: two
// threads per row, 8 warps) for LuWarpWideMinN<T>(out) <= n <= LuWarpWideMaxN<T>().
template <typename T>
constexpr int LuWarpWideMaxN() {
  return sizeof(T) == 4 ? tuning::kLuWarpWideMaxNF32 : tuning::kLuWarpWideMaxNF64;
}
template <typename T>
constexpr int LuWarpWideMinN(LuOutput out) {  // per output kind, tuning.h
  const bool lu = out == LuOutput::kFactor || out == LuOutput::kSlogdet;
  if (sizeof(T) == 4) return lu ? tuning::kLuWarpWideLuMinN : kLuWarpMaxN + 1;
  return lu ? tuning::kLuWarpWideLuMinNF64
            : out == LuOutput::kInverse ? tuning::kLuWarpWideInvMinNF64 : tuning::kLuWarpWideSolveMinNF64;
}
// n <= N (64 or 128); GJ: kInverse / kSolve (k <= 1), else kFactor / kSlogdet
template <typename T, int N, bool GJ>
cudaError_t LuWarpRun(cudaStream_t stream, const LuArgs<T>& args, LuOutput out);
// Dynamic shared memory of one warp-class block (f64 N = 128: 149 KB, over the 99 KB of sm_86/89).
template <typename T, int N>
size_t LuWarpSmemBytes();

}  // namespace detail
}  // namespace batchla
