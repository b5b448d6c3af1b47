// Interleaved-layout Cholesky solvers (issue 6): ONE THREAD PER MATRIX.
//
// Layout (bindings/TARGETS.md, DESIGN.md): a buffer (chunks, rows, cols, c) holds element (i, j)
// of matrix `lane` of chunk q at ((q * rows + i) * cols + j) * c + lane. Thread t owns matrix
// lane = t % c of chunk t / c, and its element e = i * cols + j sits at base[e * c]: a warp's
// 32 threads read 32 consecutive words for every (i, j), so every access is coalesced whatever n.
// Loops think ROW-MAJOR LOWER: l[r][s] with r >= s is L(r, s); solves read the factor as lower.
//
// Two kinds of variant (interleaved_variants.h):
//  - FullBody<N>: the triangle in registers, all loops unrolled; three factorization orders
//    that differ in when each element is loaded and how long it stays live.
//  - TileBody<NB>: runtime n; NB x NB tiles in registers, the factor in global memory (potrf's
//    output, or posv's packed scratch) re-read through L1/L2; left- or top-looking.
//  - SharedBody<NB>: runtime n; the thread's triangle staged into shared memory with cp.async
//    (all of its loads in flight at once), then the same tile loops on it, in place.
#pragma once

#include <cstdint>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/interleaved_variants.h"

namespace batchla {
namespace il {

using detail::Scalar;
using detail::StaticFor;

// L2 prefetch size of the copies that stage a wave in shared memory (the lane-group and block
// kinds): a warp there reads one 32 B sector of each 128 B line of a chunk (the line's other
// sectors belong to the next warps' matrices), so the qualifier asks L2 to fetch the rest of the
// line from DRAM with it. 0, 64, 128 or 256 (bytes); bench/NOTES.md "L2 prefetch" (1-5 % on the
// staged forms; the lane groups' direct loads measured 0-1.5 % slower with it and keep __ldg).
#ifndef BATCHLA_IL_L2_PREFETCH
#define BATCHLA_IL_L2_PREFETCH 128
#endif
#if BATCHLA_IL_L2_PREFETCH == 0
#define BATCHLA_IL_PREFETCH_PTX ""
#elif BATCHLA_IL_L2_PREFETCH == 64
#define BATCHLA_IL_PREFETCH_PTX ".L2::64B"
#elif BATCHLA_IL_L2_PREFETCH == 128
#define BATCHLA_IL_PREFETCH_PTX ".L2::128B"
#elif BATCHLA_IL_L2_PREFETCH == 256
#define BATCHLA_IL_PREFETCH_PTX ".L2::256B"
#else
#error "BATCHLA_IL_L2_PREFETCH: 0, 64, 128 or 256"
#endif

// cp.async of BYTES (4, 8 or 16) from global to shared memory with the prefetch above; .cg (L2
// only: the data is read once) where the size allows it, as __pipeline_memcpy_async.
template <int BYTES>
__device__ __forceinline__ void CopyAsync(unsigned dst, const void* src) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async sizes");
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global" BATCHLA_IL_PREFETCH_PTX " [%0], [%1], 16;\n" ::"r"(dst), "l"(src)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global" BATCHLA_IL_PREFETCH_PTX " [%0], [%1], %2;\n" ::"r"(dst), "l"(src),
                 "n"(BYTES)
                 : "memory");
}
// The same for one element, or its zero fill where !copy (src-size 0: nothing is read; no branch).
template <int BYTES>
__device__ __forceinline__ void CopyAsyncOrZero(unsigned dst, const void* src, bool copy) {
  static_assert(BYTES == 4 || BYTES == 8, "element sizes");
  asm volatile("cp.async.ca.shared.global" BATCHLA_IL_PREFETCH_PTX " [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src),
               "n"(BYTES), "r"(copy ? BYTES : 0)
               : "memory");
}

// How the op reads `a`: its lower triangle, its upper triangle (as the lower triangle of Aᵀ),
// or the lower triangle of (A + Aᵀ) / 2.
enum Mode : int { kReadLower = 0, kReadUpper = 1, kSymmetrize = 2 };

template <typename T>
struct Args {
  const T* a;      // (chunks, n, n, c): the matrix (potrf, posv, trsm) or the factor (potrs)
  const T* b;      // (chunks, n, k, c): right-hand sides
  T* out;          // potrf: l (chunks, n, n, c); solves: x (chunks, n, k, c)
  int32_t* info;   // potrf, posv: (chunks, c)
  T* scratch;      // posv TileBody only (the tuner's timing of it; the library composes potrf +
                   // potrs there instead): the packed factor, (chunks, n (n + 1) / 2, c)
  int64_t chunks;  // chunk count (leading dims collapsed)
  int64_t c;       // matrices per chunk
  int n, k;
  int mode;        // Mode of `a`
  bool trans;      // trsm: solve with op(A) = Aᵀ
  bool unit;       // trsm: unit diagonal (not read)
};

// Element (r, s), r >= s, of the lower triangle the op works with, read from the input `a`
// (read-only for the kernel's lifetime, hence the non-coherent __ldg path). Reading the upper
// triangle is reading with the two strides swapped, so both share one branch-free load.
// Strides of element (r, s) of that triangle in one matrix of a (chunks, n, n, c) buffer: at
// r * rs + s * cs (the upper triangle read as the lower triangle of its transpose).
struct TriangleStrides {
  int64_t rs, cs;
  __host__ __device__ __forceinline__ TriangleStrides(int mode, int n, int64_t c)
      : rs(mode == kReadUpper ? c : int64_t(n) * c), cs(mode == kReadUpper ? int64_t(n) * c : c) {}
};

template <typename T>
struct InputLower {
  const T* p;       // this thread's matrix
  int64_t c;
  int n;
  int mode;
  int64_t rs, cs;   // element (r, s) of the triangle read at p + r * rs + s * cs
  __device__ __forceinline__ InputLower(const T* p_, int64_t c_, int n_, int mode_)
      : p(p_), c(c_), n(n_), mode(mode_),
        rs(TriangleStrides(mode_, n_, c_).rs), cs(TriangleStrides(mode_, n_, c_).cs) {}
  __device__ __forceinline__ T operator()(int r, int s) const {
    const T v = __ldg(p + r * rs + s * cs);
    if (mode != kSymmetrize) return v;
    return (v + __ldg(p + r * cs + s * rs)) * T(0.5);
  }
};

// The factor a TileBody writes and re-reads: potrf's (n, n) output, or posv's packed lower
// triangle ((r, s) at r (r + 1) / 2 + s). Plain loads: this thread wrote them.
template <typename T>
struct SquareStore {
  T* p;
  int64_t c;
  int n;
  __device__ __forceinline__ T* At(int r, int s) const { return p + (int64_t(r) * n + s) * c; }
  __device__ __forceinline__ T operator()(int r, int s) const { return *At(r, s); }
};
template <typename T>
struct PackedStore {
  T* p;
  int64_t c;
  __device__ __forceinline__ T* At(int r, int s) const {
    return p + (int64_t(r) * (r + 1) / 2 + s) * c;
  }
  __device__ __forceinline__ T operator()(int r, int s) const { return *At(r, s); }
};

// The pivot step shared by every order: d -> sqrt(d), its reciprocal, and LAPACK's info (the
// first pivot that is not > 0, NaN included). Factorization continues through a bad pivot; the
// caller turns the whole result to NaN afterwards, so neighbours never see it.
template <typename T>
__device__ __forceinline__ void Pivot(T& d, T& rinv, int index, int& info) {
  if (!(d > T(0)) && info == 0) info = index + 1;
  d = Scalar<T>::Sqrt(d);
  rinv = T(1) / d;
}

// As Pivot, through rsqrt: one short sequence on the factor's chain instead of IEEE sqrt and a
// divide, whose range checks sit on every step (float: detail::ApproxRsqrt, one Newton step;
// double: CUDA's rsqrt; both ~1 ulp). A pivot that is not > 0 still sets info (and gives NaN).
template <typename T>
__device__ __forceinline__ void RsqrtPivot(T& d, T& rinv, int index, int& info) {
  if (!(d > T(0)) && info == 0) info = index + 1;
  if constexpr (std::is_same_v<T, float>) rinv = detail::ApproxRsqrt(d);
  else rinv = rsqrt(d);
  d *= rinv;
}

// ================================ FullBody: all in registers ================================
template <typename T, int N, Order O>
__device__ __forceinline__ int FactorFull(T (&l)[N][N], T (&rinv)[N], const InputLower<T>& a) {
  int info = 0;
  if constexpr (O == Order::kRight) {
#pragma unroll
    for (int r = 0; r < N; ++r)
#pragma unroll
      for (int s = 0; s <= r; ++s) l[r][s] = a(r, s);
#pragma unroll
    for (int k = 0; k < N; ++k) {
      Pivot(l[k][k], rinv[k], k, info);
#pragma unroll
      for (int r = k + 1; r < N; ++r) l[r][k] *= rinv[k];
#pragma unroll
      for (int s = k + 1; s < N; ++s)
#pragma unroll
        for (int r = s; r < N; ++r) l[r][s] -= l[r][k] * l[s][k];
    }
  } else if constexpr (O == Order::kLeft) {
#pragma unroll
    for (int s = 0; s < N; ++s) {
#pragma unroll
      for (int r = s; r < N; ++r) l[r][s] = a(r, s);
#pragma unroll
      for (int k = 0; k < s; ++k)
#pragma unroll
        for (int r = s; r < N; ++r) l[r][s] -= l[r][k] * l[s][k];
      Pivot(l[s][s], rinv[s], s, info);
#pragma unroll
      for (int r = s + 1; r < N; ++r) l[r][s] *= rinv[s];
    }
  } else {  // top-looking: row r is solved against the rows above it
#pragma unroll
    for (int r = 0; r < N; ++r) {
#pragma unroll
      for (int s = 0; s <= r; ++s) l[r][s] = a(r, s);
#pragma unroll
      for (int s = 0; s < r; ++s) {
#pragma unroll
        for (int k = 0; k < s; ++k) l[r][s] -= l[r][k] * l[s][k];
        l[r][s] *= rinv[s];
      }
#pragma unroll
      for (int k = 0; k < r; ++k) l[r][r] -= l[r][k] * l[r][k];
      Pivot(l[r][r], rinv[r], r, info);
    }
  }
  return info;
}

// x := L⁻¹ x and x := L⁻ᵀ x with L = l's lower triangle and 1 / diag(L) = rinv.
template <typename T, int N>
__device__ __forceinline__ void ForwardFull(const T (&l)[N][N], const T (&rinv)[N], T (&x)[N]) {
#pragma unroll
  for (int r = 0; r < N; ++r) {
#pragma unroll
    for (int k = 0; k < r; ++k) x[r] -= l[r][k] * x[k];
    x[r] *= rinv[r];
  }
}
template <typename T, int N>
__device__ __forceinline__ void BackwardFullT(const T (&l)[N][N], const T (&rinv)[N], T (&x)[N]) {
#pragma unroll
  for (int r = N - 1; r >= 0; --r) {
#pragma unroll
    for (int k = r + 1; k < N; ++k) x[r] -= l[k][r] * x[k];
    x[r] *= rinv[r];
  }
}

template <typename T, Op OP, int N, Order O>
struct FullBody {
  static __device__ __forceinline__ void Run(const Args<T>& g, int64_t t) {
    const int64_t chunk = t / g.c, lane = t % g.c;
    const InputLower<T> a{g.a + chunk * (N * N) * g.c + lane, g.c, N, g.mode};
    T l[N][N], rinv[N];
    int info = 0;
    if constexpr (OP == Op::kPotrf || OP == Op::kPosv) {
      info = FactorFull<T, N, O>(l, rinv, a);
    } else {  // potrs / trsm: the factor is given
      const bool unit = OP == Op::kTrsm && g.unit;
#pragma unroll
      for (int r = 0; r < N; ++r)
#pragma unroll
        for (int s = 0; s <= r; ++s) l[r][s] = (r == s && unit) ? T(1) : a(r, s);
#pragma unroll
      for (int r = 0; r < N; ++r) rinv[r] = unit ? T(1) : T(1) / l[r][r];
    }
    if constexpr (OP == Op::kPotrf) {
      T* out = g.out + chunk * (N * N) * g.c + lane;
#pragma unroll
      for (int r = 0; r < N; ++r)
#pragma unroll
        for (int s = 0; s < N; ++s)
          out[(r * N + s) * g.c] = s > r ? T(0) : (info ? Scalar<T>::NaN() : l[r][s]);
      g.info[t] = info;
      return;
    }
    // trsm solves forward when op(A) is lower: A lower and not transposed, or upper transposed.
    const bool forward_only = OP == Op::kTrsm && ((g.mode == kReadLower) != g.trans);
    const T* b = g.b + chunk * int64_t(N) * g.k * g.c + lane;
    T* x = g.out + chunk * int64_t(N) * g.k * g.c + lane;
    const int64_t row = int64_t(g.k) * g.c;
    for (int col = 0; col < g.k; ++col) {
      T v[N];
#pragma unroll
      for (int r = 0; r < N; ++r) v[r] = __ldg(b + r * row + col * g.c);
      if (OP != Op::kTrsm || forward_only) ForwardFull(l, rinv, v);
      if (OP != Op::kTrsm || !forward_only) BackwardFullT(l, rinv, v);
#pragma unroll
      for (int r = 0; r < N; ++r) x[r * row + col * g.c] = info ? Scalar<T>::NaN() : v[r];
    }
    if constexpr (OP == Op::kPosv) g.info[t] = info;
  }
};

// ================================ TileBody: runtime n ========================================
// Tiles are NB x NB blocks at (i0, j0), multiples of NB; elements past n are padding (identity
// on the diagonal, zero elsewhere) that is never stored, so partial tiles need no special case.

// acc := A's tile (i0, j0) (lower part only when DIAG).
template <typename T, int NB, bool DIAG, class Src>
__device__ __forceinline__ void LoadInputTile(T (&acc)[NB][NB], const Src& a, int i0, int j0, int n) {
#pragma unroll
  for (int i = 0; i < NB; ++i)
#pragma unroll
    for (int j = 0; j < (DIAG ? i + 1 : NB); ++j) {
      const int r = i0 + i, s = j0 + j;
      acc[i][j] = (r < n && s < n) ? a(r, s) : T(r == s ? 1 : 0);
    }
}

// acc -= L(i0.., 0:j0) L(j0.., 0:j0)ᵀ, L read from the store (the diagonal tile when DIAG:
// lower part only, and L(j0.., ·) is the same rows as L(i0.., ·)).
template <typename T, int NB, bool DIAG, class Store>
__device__ __forceinline__ void SubtractProducts(T (&acc)[NB][NB], const Store& L, int i0, int j0, int n) {
#pragma unroll
  for (int k0 = 0; k0 < j0; k0 += NB) {
    T y[NB][NB];
#pragma unroll
    for (int i = 0; i < NB; ++i)
#pragma unroll
      for (int kk = 0; kk < NB; ++kk) y[i][kk] = i0 + i < n ? L(i0 + i, k0 + kk) : T(0);
#pragma unroll
    for (int j = 0; j < NB; ++j) {
      T xj[NB];
#pragma unroll
      for (int kk = 0; kk < NB; ++kk) xj[kk] = DIAG ? y[j][kk] : (j0 + j < n ? L(j0 + j, k0 + kk) : T(0));
#pragma unroll
      for (int i = DIAG ? j : 0; i < NB; ++i)
#pragma unroll
        for (int kk = 0; kk < NB; ++kk) acc[i][j] -= y[i][kk] * xj[kk];
    }
  }
}

// Cholesky of the diagonal tile in place (right-looking, it is in registers).
template <typename T, int NB>
__device__ __forceinline__ void FactorDiagTile(T (&d)[NB][NB], T (&rinv)[NB], int j0, int n, int& info) {
#pragma unroll
  for (int k = 0; k < NB; ++k) {
    if (j0 + k < n) {
      Pivot(d[k][k], rinv[k], j0 + k, info);
    } else {
      rinv[k] = T(1);  // padding: d[k][k] = 1 and nothing couples it to a real row
    }
#pragma unroll
    for (int r = k + 1; r < NB; ++r) d[r][k] *= rinv[k];
#pragma unroll
    for (int s = k + 1; s < NB; ++s)
#pragma unroll
      for (int r = s; r < NB; ++r) d[r][s] -= d[r][k] * d[s][k];
  }
}

// acc := acc D⁻ᵀ with D = the factored diagonal tile (1 / its diagonal = rinv).
template <typename T, int NB>
__device__ __forceinline__ void SolveRightT(T (&acc)[NB][NB], const T (&d)[NB][NB], const T (&rinv)[NB]) {
#pragma unroll
  for (int j = 0; j < NB; ++j)
#pragma unroll
    for (int i = 0; i < NB; ++i) {
#pragma unroll
      for (int kk = 0; kk < j; ++kk) acc[i][j] -= acc[i][kk] * d[j][kk];
      acc[i][j] *= rinv[j];
    }
}

template <typename T, int NB, bool DIAG, class Store>
__device__ __forceinline__ void StoreTile(const Store& L, const T (&acc)[NB][NB], int i0, int j0, int n) {
#pragma unroll
  for (int i = 0; i < NB; ++i)
#pragma unroll
    for (int j = 0; j < (DIAG ? i + 1 : NB); ++j)
      if (i0 + i < n && j0 + j < n) *L.At(i0 + i, j0 + j) = acc[i][j];
}

// The factored diagonal tile back from the store (top-looking reuses it for every tile row).
template <typename T, int NB, class Store>
__device__ __forceinline__ void LoadDiagTile(T (&d)[NB][NB], T (&rinv)[NB], const Store& L, int j0, int n) {
#pragma unroll
  for (int i = 0; i < NB; ++i) {
#pragma unroll
    for (int j = 0; j <= i; ++j) d[i][j] = j0 + i < n ? L(j0 + i, j0 + j) : T(i == j ? 1 : 0);
    rinv[i] = T(1) / d[i][i];
  }
}

// Factor the matrix of `a` into the store (a may be the store itself: every tile is read before
// it is written); returns LAPACK's info. BOUND > 0: the loops run to that compile-time size (a
// padded n >= n; everything unrolls, tiles past n are padding), else to n.
template <typename T, int NB, Order O, int BOUND = 0, class Src, class Store>
__device__ __forceinline__ int FactorTiles(const Src& a, const Store& L, int n) {
  int info = 0;
  const int bound = BOUND ? BOUND : n;
  if constexpr (O == Order::kTop) {
#pragma unroll
    for (int i0 = 0; i0 < bound; i0 += NB) {
#pragma unroll
      for (int j0 = 0; j0 < i0; j0 += NB) {
        T acc[NB][NB], d[NB][NB], rinv[NB];
        LoadInputTile<T, NB, false>(acc, a, i0, j0, n);
        SubtractProducts<T, NB, false>(acc, L, i0, j0, n);
        LoadDiagTile(d, rinv, L, j0, n);
        SolveRightT(acc, d, rinv);
        StoreTile<T, NB, false>(L, acc, i0, j0, n);
      }
      T d[NB][NB], rinv[NB];
      LoadInputTile<T, NB, true>(d, a, i0, i0, n);
      SubtractProducts<T, NB, true>(d, L, i0, i0, n);
      FactorDiagTile(d, rinv, i0, n, info);
      StoreTile<T, NB, true>(L, d, i0, i0, n);
    }
  } else {  // left-looking: tile column j0, its diagonal tile kept in registers for the column
#pragma unroll
    for (int j0 = 0; j0 < bound; j0 += NB) {
      T d[NB][NB], rinv[NB];
      LoadInputTile<T, NB, true>(d, a, j0, j0, n);
      SubtractProducts<T, NB, true>(d, L, j0, j0, n);
      FactorDiagTile(d, rinv, j0, n, info);
      StoreTile<T, NB, true>(L, d, j0, j0, n);
#pragma unroll
      for (int i0 = j0 + NB; i0 < bound; i0 += NB) {
        T acc[NB][NB];
        LoadInputTile<T, NB, false>(acc, a, i0, j0, n);
        SubtractProducts<T, NB, false>(acc, L, i0, j0, n);
        SolveRightT(acc, d, rinv);
        StoreTile<T, NB, false>(L, acc, i0, j0, n);
      }
    }
  }
  return info;
}

// One rhs column: rows at src[r * ss] in, x[r * xs] out (src may be x).
// Forward: x := L⁻¹ src. BackwardT: x := L⁻ᵀ src. L read through `tri` (lower, (r, s), r >= s);
// `unit`: its diagonal is taken as 1.
template <typename T, int NB, int BOUND = 0, class Tri>
__device__ __forceinline__ void ForwardTiles(const Tri& tri, const T* src, int64_t ss, T* x, int64_t xs,
                                             int n, bool unit) {
  const int bound = BOUND ? BOUND : n;
#pragma unroll
  for (int i0 = 0; i0 < bound; i0 += NB) {
    T acc[NB];
#pragma unroll
    for (int i = 0; i < NB; ++i) acc[i] = i0 + i < n ? src[(i0 + i) * ss] : T(0);
#pragma unroll
    for (int k0 = 0; k0 < i0; k0 += NB) {
      T xk[NB];
#pragma unroll
      for (int kk = 0; kk < NB; ++kk) xk[kk] = x[(k0 + kk) * xs];
#pragma unroll
      for (int i = 0; i < NB; ++i)
        if (i0 + i < n)
#pragma unroll
          for (int kk = 0; kk < NB; ++kk) acc[i] -= tri(i0 + i, k0 + kk) * xk[kk];
    }
#pragma unroll
    for (int i = 0; i < NB; ++i) {
      if (i0 + i >= n) continue;
#pragma unroll
      for (int kk = 0; kk < i; ++kk) acc[i] -= tri(i0 + i, i0 + kk) * acc[kk];
      acc[i] = unit ? acc[i] : acc[i] * (T(1) / tri(i0 + i, i0 + i));
      x[(i0 + i) * xs] = acc[i];
    }
  }
}
template <typename T, int NB, int BOUND = 0, class Tri>
__device__ __forceinline__ void BackwardTilesT(const Tri& tri, const T* src, int64_t ss, T* x, int64_t xs,
                                               int n, bool unit) {
  const int bound = BOUND ? BOUND : n;
#pragma unroll
  for (int i0 = (bound - 1) / NB * NB; i0 >= 0; i0 -= NB) {
    T acc[NB];
#pragma unroll
    for (int i = 0; i < NB; ++i) acc[i] = i0 + i < n ? src[(i0 + i) * ss] : T(0);
#pragma unroll
    for (int k0 = i0 + NB; k0 < bound; k0 += NB) {
      T xk[NB];
#pragma unroll
      for (int kk = 0; kk < NB; ++kk) xk[kk] = k0 + kk < n ? x[(k0 + kk) * xs] : T(0);
#pragma unroll
      for (int i = 0; i < NB; ++i)
        if (i0 + i < n)
#pragma unroll
          for (int kk = 0; kk < NB; ++kk)
            if (k0 + kk < n) acc[i] -= tri(k0 + kk, i0 + i) * xk[kk];
    }
#pragma unroll
    for (int i = NB - 1; i >= 0; --i) {
      if (i0 + i >= n) continue;
#pragma unroll
      for (int kk = i + 1; kk < NB; ++kk)
        if (i0 + kk < n) acc[i] -= tri(i0 + kk, i0 + i) * acc[kk];
      acc[i] = unit ? acc[i] : acc[i] * (T(1) / tri(i0 + i, i0 + i));
      x[(i0 + i) * xs] = acc[i];
    }
  }
}

template <typename T, Op OP, int NB, Order O>
struct TileBody {
  static __device__ __forceinline__ void Run(const Args<T>& g, int64_t t) {
    const int n = g.n;
    const int64_t chunk = t / g.c, lane = t % g.c;
    const InputLower<T> a{g.a + chunk * int64_t(n) * n * g.c + lane, g.c, n, g.mode};
    if constexpr (OP == Op::kPotrf) {
      const SquareStore<T> L{g.out + chunk * int64_t(n) * n * g.c + lane, g.c, n};
      const int info = FactorTiles<T, NB, O>(a, L, n);
      for (int r = 0; r < n; ++r)  // zeros above the diagonal; NaN below it on failure
        for (int s = info ? 0 : r + 1; s < n; ++s) *L.At(r, s) = s > r ? T(0) : Scalar<T>::NaN();
      g.info[t] = info;
      return;
    }
    const T* b = g.b + chunk * int64_t(n) * g.k * g.c + lane;
    T* x = g.out + chunk * int64_t(n) * g.k * g.c + lane;
    const int64_t stride = int64_t(g.k) * g.c;
    if constexpr (OP == Op::kPosv) {
      const PackedStore<T> L{g.scratch + chunk * (int64_t(n) * (n + 1) / 2) * g.c + lane, g.c};
      const int info = FactorTiles<T, NB, O>(a, L, n);
      for (int col = 0; col < g.k; ++col) {
        if (info) {
          for (int r = 0; r < n; ++r) x[r * stride + col * g.c] = Scalar<T>::NaN();
          continue;
        }
        ForwardTiles<T, NB>(L, b + col * g.c, stride, x + col * g.c, stride, n, false);
        BackwardTilesT<T, NB>(L, x + col * g.c, stride, x + col * g.c, stride, n, false);
      }
      g.info[t] = info;
    } else {  // potrs, trsm: the factor is the input, read as lower
      const bool unit = OP == Op::kTrsm && g.unit;
      const bool forward_only = OP == Op::kTrsm && ((g.mode == kReadLower) != g.trans);
      for (int col = 0; col < g.k; ++col) {
        const T* src = b + col * g.c;
        if (OP != Op::kTrsm || forward_only) {
          ForwardTiles<T, NB>(a, src, stride, x + col * g.c, stride, n, unit);
          src = x + col * g.c;
        }
        if (OP != Op::kTrsm || !forward_only)
          BackwardTilesT<T, NB>(a, src, stride, x + col * g.c, stride, n, unit);
      }
    }
  }
};

// ================================ SharedBody: staged in shared memory ========================
// Each thread's region of the block's shared memory: its packed triangle (n (n + 1) / 2 values)
// then one rhs column (n values), element e at base[e * blockDim.x] (lanes side by side: no bank
// conflicts). Only the owning thread touches it, so no block barrier is needed.
template <typename T, int STRIDE = 0>  // STRIDE > 0: compile-time stride (constant offsets)
struct SharedStore {
  T* p;
  int stride;
  __device__ __forceinline__ T* At(int r, int s) const {
    return p + (r * (r + 1) / 2 + s) * (STRIDE ? STRIDE : stride);
  }
  __device__ __forceinline__ T operator()(int r, int s) const { return *At(r, s); }
};

// The triangle `a` reads, into the store: cp.async for every element, so the thread has its whole
// matrix in flight at once; symmetrize then adds the upper triangle's loads (independent, so
// they overlap too). BOUND > 0: loops unrolled to that padded size (constant shared-memory
// offsets), guarded by n.
template <int BOUND, typename T, class Store>
__device__ __forceinline__ void StageTriangle(const Store& dst, const InputLower<T>& a) {
  const int n = a.n;
  const int bound = BOUND ? BOUND : n;
#pragma unroll
  for (int r = 0; r < bound; ++r) {
    if (BOUND && r >= n) break;
    const T* src = a.p + r * a.rs;
#pragma unroll
    for (int s = 0; s <= r; ++s, src += a.cs) __pipeline_memcpy_async(dst.At(r, s), src, sizeof(T));
  }
  __pipeline_commit();
  __pipeline_wait_prior(0);
  if (a.mode != kSymmetrize) return;
#pragma unroll
  for (int r = 0; r < bound; ++r) {
    if (BOUND && r >= n) break;
    const T* src = a.p + r * a.cs;  // (s, r): the mirror of (r, s)
#pragma unroll 8
    for (int s = 0; s <= r; ++s, src += a.rs) *dst.At(r, s) = (*dst.At(r, s) + __ldg(src)) * T(0.5);
  }
}

// PAD > 0: the loops run to the compile-time size PAD >= n (fully unrolled, constant shared-memory
// offsets; one warp per block so the lane stride is a constant too); PAD = 0: runtime n.
template <typename T, Op OP, int NB, Order O, int PAD = 0>
struct SharedBody {
  static constexpr int kFixedWarps = PAD ? 1 : 0;
  static size_t SharedBytes(int n, int threads) {
    const size_t m = PAD ? PAD : n;
    return size_t(threads) * (m * (m + 1) / 2 + m) * sizeof(T);
  }
  static __device__ __forceinline__ void Run(const Args<T>& g, int64_t t) {
    extern __shared__ __align__(16) unsigned char shared_raw[];
    const int n = g.n;
    const int m = PAD ? PAD : n;
    const int lanes = PAD ? 32 : int(blockDim.x);
    const int64_t chunk = t / g.c, lane = t % g.c;
    T* mine = reinterpret_cast<T*>(shared_raw) + threadIdx.x;
    const SharedStore<T, PAD ? 32 : 0> L{mine, lanes};
    T* xs = mine + (m * (m + 1) / 2) * lanes;
    const InputLower<T> a{g.a + chunk * int64_t(n) * n * g.c + lane, g.c, n, g.mode};
    StageTriangle<PAD>(L, a);
    int info = 0;
    if constexpr (OP == Op::kPotrf || OP == Op::kPosv) info = FactorTiles<T, NB, O, PAD>(L, L, n);
    if constexpr (OP == Op::kPotrf) {
      T* out = g.out + chunk * int64_t(n) * n * g.c + lane;
#pragma unroll
      for (int r = 0; r < m; ++r) {
        if (PAD && r >= n) break;
        T* dst = out + int64_t(r) * n * g.c;
#pragma unroll
        for (int s = 0; s < m; ++s, dst += g.c) {
          if (PAD && s >= n) break;
          *dst = s > r ? T(0) : (info ? Scalar<T>::NaN() : L(r, s));
        }
      }
      g.info[t] = info;
      return;
    }
    const T* b = g.b + chunk * int64_t(n) * g.k * g.c + lane;
    T* x = g.out + chunk * int64_t(n) * g.k * g.c + lane;
    const int64_t stride = int64_t(g.k) * g.c;
    const bool unit = OP == Op::kTrsm && g.unit;
    const bool forward = OP != Op::kTrsm || ((g.mode == kReadLower) != g.trans);
    const bool backward = OP != Op::kTrsm || !forward;
    for (int col = 0; col < g.k; ++col) {
      if (forward) ForwardTiles<T, NB, PAD>(L, b + col * g.c, stride, xs, lanes, n, unit);
      if (backward)
        BackwardTilesT<T, NB, PAD>(L, forward ? xs : b + col * g.c, forward ? int64_t(lanes) : stride, xs,
                                   lanes, n, unit);
#pragma unroll
      for (int r = 0; r < m; ++r) {
        if (PAD && r >= n) break;
        x[r * stride + col * g.c] = info ? Scalar<T>::NaN() : xs[r * lanes];
      }
    }
    if constexpr (OP == Op::kPosv) g.info[t] = info;
  }
};

// Warps per block a body requires (0: any), and its dynamic shared memory (0 for the register
// and global-memory kinds).
template <class Body, class = void>
struct FixedWarpsOf {
  static constexpr int kValue = 0;
};
template <class Body>
struct FixedWarpsOf<Body, decltype(void(Body::kFixedWarps))> {
  static constexpr int kValue = Body::kFixedWarps;
};
// Threads that share one matrix (1 but for kGroup).
template <class Body, class = void>
struct ThreadsPerMatrixOf {
  static constexpr int kValue = 1;
};
template <class Body>
struct ThreadsPerMatrixOf<Body, decltype(void(Body::kThreadsPerMatrix))> {
  static constexpr int kValue = Body::kThreadsPerMatrix;
};
// Bodies that run their own persistent loop over the grid (GroupBody's staged forms), and their
// register cap.
template <class Body, class = void>
struct StagedOf {
  static constexpr bool kValue = false;
};
template <class Body>
struct StagedOf<Body, decltype(void(Body::kStaged))> {
  static constexpr bool kValue = Body::kStaged;
};
template <class Body, class = void>
struct MaxRegsOf {
  static constexpr int kValue = 255;  // ptxas' own limit
};
template <class Body>
struct MaxRegsOf<Body, decltype(void(Body::kMaxRegs))> {
  static constexpr int kValue = Body::kMaxRegs;
};
template <class Body, class = void>
struct SharedBytesOf {
  static size_t Get(int, int) { return 0; }
};
template <class Body>
struct SharedBytesOf<Body, decltype(void(Body::SharedBytes(0, 0)))> {
  static size_t Get(int n, int threads) { return Body::SharedBytes(n, threads); }
};

// ================================ launch =====================================================
template <typename T, class Body>
__global__ void Kernel(Args<T> g) {
  constexpr int kShare = ThreadsPerMatrixOf<Body>::kValue;
  const int64_t total = g.chunks * g.c * kShare;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  if constexpr (kShare == 1) {
    for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += stride) Body::Run(g, t);
  } else {
    // Group bodies shuffle with the full-warp mask, so every lane of a block runs the body while
    // the block has work: the loop condition is block-uniform (if ptxas cannot prove the lanes
    // converged it wraps every shuffle in a WARPSYNC / ENDCOLLECTIVE loop, ~10x slower). Past the
    // end (c not a multiple of 32: the batch-minor experiment's c = batch) a group redoes
    // matrix 0 and stores nothing.
    for (int64_t base = int64_t(blockIdx.x) * blockDim.x; base < total; base += stride) {
      const int64_t t = base + threadIdx.x;
      const bool live = t < total;
      Body::Run(g, live ? t : t % kShare, live);
    }
  }
}

// Staged bodies: their own persistent loop, under the body's register cap.
template <typename T, class Body>
__global__ void __maxnreg__(MaxRegsOf<Body>::kValue) StagedKernel(Args<T> g) {
  Body::RunStaged(g);
}

// The kernel a body runs in.
template <typename T, class Body>
constexpr auto KernelOf() {
  if constexpr (StagedOf<Body>::kValue) return &StagedKernel<T, Body>;
  else return &Kernel<T, Body>;
}

template <typename T, class Body>
cudaError_t Launch(cudaStream_t stream, const Args<T>& g, int warps) {
  const int64_t total = g.chunks * g.c * ThreadsPerMatrixOf<Body>::kValue;
  if (total == 0) return cudaSuccess;
  const int threads = 32 * (FixedWarpsOf<Body>::kValue ? FixedWarpsOf<Body>::kValue : warps);
  const size_t smem = SharedBytesOf<Body>::Get(g.n, threads);
  if (smem > 48 * 1024) {  // above the default: opt in (no-op when already set)
    const cudaError_t e =
        cudaFuncSetAttribute(KernelOf<T, Body>(), cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  unsigned grid = detail::GridFor(detail::CeilDiv(total, threads));
  if constexpr (StagedOf<Body>::kValue) {  // persistent: each warp prefetches its next wave
    const cudaError_t e = detail::PersistentGridKeyed<Body, 33>(KernelOf<T, Body>(), threads, smem,
                                                                detail::CeilDiv(total, threads), threads / 32, &grid);
    if (e != cudaSuccess) return e;
  }
  KernelOf<T, Body>()<<<grid, threads, smem, stream>>>(g);
  return cudaGetLastError();
}

}  // namespace il
}  // namespace batchla
