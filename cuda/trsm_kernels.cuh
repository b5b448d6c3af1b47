// Batched triangular solves (trsm, potrs): kernels and their launcher. Included only by
// cuda/trsm_f32.cu and cuda/trsm_f64.cu.
//
// Storage: ROW-MAJOR, as launch.h. Matrix m of A starts at a + m*n*n, element (i, j) at i*n + j;
// B and X (n x k) start at m*n*k, element (i, c) at i*k + c. All matrix offsets are int64_t.
// The loops think in rows of op(A) = M (see trsm.cuh): "lane i owns row i of the solution".
//   M(i, j) = A[i][j] (!transposed): row i of M is row i of A      -> "dot" form over rows of A
//   M(i, j) = A[j][i] ( transposed): row i of M is column i of A   -> "axpy" form over rows of A
// so in both cases A is read row by row, contiguously.
//
// Two size classes (thresholds in cuda/tuning.h, measurements in bench/NOTES.md "trsm"):
//   small: SmallSolveKernel  n <= 32. A block stages a contiguous chunk of `mats` matrices and
//          their right-hand sides in shared memory (cp.async, coalesced), a group of n lanes
//          solves one (matrix, rhs column) pair, lane i owning row i (column sweep, SweepGroup:
//          per step a shuffle broadcast of x_j, one FMA), X leaves through shared memory.
//   tile:  TileSolveKernel   any n. One warp per (matrix, KC rhs columns). A streams through a
//          ring of 32 x 32 shared-memory tiles, S tiles in flight, in exactly the order the solve
//          consumes them; off-diagonal tiles update the rhs block (kept in shared memory), the
//          diagonal tile is solved with the pre-scaled shuffle sweep (ScaledSweep).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/launch.h"
#include "cuda/mbarrier.cuh"
#include "cuda/trsm.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace trsm_detail {

constexpr unsigned kFullMask = 0xffffffffu;

// plan.pass[p] without a dynamic index into the parameter struct (which would go through a stack copy).
__device__ __forceinline__ SweepPass PassOf(const SolvePlan& plan, int p) {
  return p == 0 ? plan.pass[0] : plan.pass[1];
}
constexpr int64_t kMaxGrid = int64_t{1} << 30;

// cp.async helpers: cuda/common.cuh.
using detail::CpAsync;
using detail::CpAsyncCommit;
using detail::CpAsyncWait;
using detail::CpAsyncWaitDyn;

// mbarrier helpers: cuda/mbarrier.cuh.
using detail::MbarArrive;
using detail::MbarInit;
using detail::MbarWait;

using detail::Vec16;  // 16-byte shared-memory vectors (cuda/common.cuh)

}  // namespace trsm_detail
}  // namespace batchla

#include "cuda/trsm_tiny.cuh"

namespace batchla {
namespace trsm_detail {

// =================================================================================================
// small: n <= 32, group of n lanes per (matrix, rhs column)
// =================================================================================================

// Diagonal-tile sweep of the tile kernel (W = 32, base = 0; kept generic over a group of lanes
// starting at `base`), lane i owning row i: ms[j] =
// M(i, j) for j < W (only the j of the sweep's triangle are used), inv = 1 / M(i, i) (1 with a unit
// diagonal, 0 for a lane without a row), r[c] = right-hand side in, solution out. The row is scaled
// by inv first (in place, ms is clobbered), so each step's dependency chain is one shuffle and one FMA:
//   x_j = r_j (final after step j);  r_i -= (M(i, j) / M(i, i)) x_j  for the rows i after j.
template <typename T, int W, int KC>
__device__ __forceinline__ void ScaledSweep(T (&ms)[W], T inv, bool forward, int n, int i, int base,
                                            T (&r)[KC]) {
#pragma unroll
  for (int j = 0; j < W; ++j) ms[j] *= inv;  // in place: M(i, j) / M(i, i)
#pragma unroll
  for (int c = 0; c < KC; ++c) r[c] *= inv;
  if (forward) {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      if (j >= n) break;
#pragma unroll
      for (int c = 0; c < KC; ++c) {
        const T xj = __shfl_sync(kFullMask, r[c], base + j);
        if (i > j) r[c] = fma(-ms[j], xj, r[c]);
      }
    }
  } else {
#pragma unroll
    for (int j = W - 1; j >= 0; --j) {
      if (j < n) {
#pragma unroll
        for (int c = 0; c < KC; ++c) {
          const T xj = __shfl_sync(kFullMask, r[c], base + j);
          if (i < j) r[c] = fma(-ms[j], xj, r[c]);
        }
      }
    }
  }
}

// One sweep for the group's column; lane i holds x_i. Am: the matrix in shared memory, row stride
// ld (odd: the lanes' row and column reads are free of bank conflicts). Lane i keeps its residual
// pre-divided by M(i, i), y_i = r_i / M(i, i), so y_j IS x_j when step j comes: per step ONE shuffle
// broadcast of x_j, one FMUL (M(i, j) / M(i, i), read from shared memory) and one FMA
// (v1 shuffled r_j and 1/M(j, j) separately: two shuffles per step; bench/NOTES.md "trsm" v2).
template <typename T>
__device__ __forceinline__ T SweepGroup(const T* Am, int ld, int n, int i, int base, bool valid,
                                        SweepPass sp, T xi) {
  const T* Mi = Am + (sp.transposed ? i : i * ld);  // M(i, j) = Mi[j * sj]
  const int sj = sp.transposed ? ld : 1;
  T inv = T(1);
  if (valid && !sp.unit_diag) inv = T(1) / Am[i * (ld + 1)];
  T y = xi * inv;
  if (sp.forward) {
#pragma unroll 4
    for (int j = 0; j < n; ++j) {
      const T xj = __shfl_sync(kFullMask, y, base + j);
      if (valid && i > j) y = fma(-(Mi[j * sj] * inv), xj, y);
    }
  } else {
#pragma unroll 4
    for (int j = n - 1; j >= 0; --j) {
      const T xj = __shfl_sync(kFullMask, y, base + j);
      if (valid && i < j) y = fma(-(Mi[j * sj] * inv), xj, y);
    }
  }
  return y;
}

// Block: blockDim.x threads (multiple of 32). Chunk of `mats` matrices per block iteration.
// Shared memory: As[mats][n][ld], then Bs[mats][n][k] (B in, X out, in place).
template <typename T>
__global__ void __launch_bounds__(tuning::kTrsmSmallThreads)
    SmallSolveKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ x,
                     int64_t batch, int n, int k, int mats, int ld, SolvePlan plan) {
  extern __shared__ __align__(16) unsigned char trsm_smem[];
  T* As = reinterpret_cast<T*>(trsm_smem);
  T* Bs = As + mats * n * ld;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int per_warp = 32 / n;
  const int gw = lane / n;       // group within the warp
  const int i = lane - gw * n;   // row owned by this lane
  const int base = gw * n;       // first lane of the group
  const bool in_group = gw < per_warp;
  const int groups = per_warp * (blockDim.x >> 5);
  const int64_t nn = int64_t{n} * n, nk = int64_t{n} * k;
  const int64_t chunks = (batch + mats - 1) / mats;
  const float rcp_n = 1.0f / float(n);

  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const int64_t m0 = chunk * mats;
    const int mc = static_cast<int>(batch - m0 < mats ? batch - m0 : mats);
    // Stage A (contiguous in global: mc*n rows of n) with padded rows, and B (contiguous).
    const T* ag = a + m0 * nn;
    const int aelems = mc * n * n;
    for (int e = threadIdx.x; e < aelems; e += blockDim.x) {
      // q = e / n: exact in float (e < 2^16, n <= 32: (e + 0.5)/n is >= 1/64 from an integer).
      const int q = __float2int_rz((float(e) + 0.5f) * rcp_n);
      CpAsync<sizeof(T)>(As + q * ld + (e - q * n), ag + e, true);
    }
    const T* bg = b + m0 * nk;
    const int belems = mc * n * k;
    for (int e = threadIdx.x; e < belems; e += blockDim.x) CpAsync<sizeof(T)>(Bs + e, bg + e, true);
    CpAsyncCommit();
    CpAsyncWait<0>();
    __syncthreads();

    const int pairs = mc * k;
    // The loop bound depends on the warp only, so every lane reaches every shuffle.
    for (int pw = warp * per_warp; pw < pairs; pw += groups) {
      const int p = pw + gw;
      const bool valid = in_group && p < pairs;
      const int m = valid ? p / k : 0;
      const int c = valid ? p - m * k : 0;
      T* xp = Bs + (m * n + i) * k + c;
      T xi = valid ? *xp : T(0);
      const T* Am = As + m * n * ld;
      for (int s = 0; s < plan.npasses; ++s) xi = SweepGroup(Am, ld, n, i, base, valid, PassOf(plan, s), xi);
      if (valid) *xp = xi;
    }
    __syncthreads();
    T* xg = x + m0 * nk;
    for (int e = threadIdx.x; e < belems; e += blockDim.x) xg[e] = Bs[e];
    __syncthreads();  // the next chunk overwrites shared memory
  }
}

// =================================================================================================
// tile: warp per (matrix, KC rhs columns), A streamed in 32 x 32 tiles
// =================================================================================================

template <typename T>
struct TileCfg {
  static constexpr int kVec = Vec16<T>::kN;      // elements per 16-byte chunk
  static constexpr int kLd = 32 + kVec;          // tile row stride: 16-byte rows, LDS.128 conflict-free
  static constexpr int kElems = 32 * kLd;
};

// The tile sequence of a plan. Pass p, outer step o, inner step t. The outer block index
// O = o (forward) or nt-1-o (backward) is always the tile's block ROW of A (R = O):
//   dot  (!transposed): row panel O, column blocks toward the diagonal, diagonal tile last;
//   axpy ( transposed): row panel O, diagonal tile first, then away from the diagonal.
struct TileSeq {
  int nt;  // tile blocks per dimension
  SolvePlan plan;
  __device__ __forceinline__ int Count(int p, int o) const {
    const SweepPass sp = PassOf(plan, p);
    const int O = sp.forward ? o : nt - 1 - o;
    return (sp.forward == !sp.transposed) ? O + 1 : nt - O;
  }
  __device__ __forceinline__ void Coords(int p, int o, int t, int& R, int& C) const {
    const SweepPass sp = PassOf(plan, p);
    const int O = sp.forward ? o : nt - 1 - o;
    R = O;
    if (!sp.transposed) {
      C = sp.forward ? t : nt - 1 - t;
    } else {
      C = sp.forward ? O + t : O - t;
    }
  }
};
struct TilePos {
  int p, o, t;
  __device__ __forceinline__ void Advance(const TileSeq& s) {
    if (++t == s.Count(p, o)) {
      t = 0;
      if (++o == s.nt) {
        o = 0;
        ++p;
      }
    }
  }
};

// Issues the cp.async of tile (R, C) of matrix Am into `slot` (one warp). Elements outside the
// matrix, and 16-byte chunks (or elements) of a diagonal tile entirely in the unused triangle, are
// zero-filled without being read. Vector path: lane reads chunk (lane % kCpr) of rows
// u * kRpu + lane / kCpr, u = 0 .. 32/kRpu - 1 (each warp instruction: kRpu full 32-element rows).
template <typename T>
__device__ __forceinline__ void LoadTile(T* slot, const T* Am, int n, int R, int C, bool need_lower,
                                         bool vec_ok, int lane) {
  using Cfg = TileCfg<T>;
  const int r0 = R * 32, c0 = C * 32;
  const bool diag = R == C;
  if (vec_ok) {
    constexpr int kCpr = 32 / Cfg::kVec;  // 16-byte chunks per tile row
    constexpr int kRpu = 32 / kCpr;       // rows per warp instruction
    const int lr = lane / kCpr, cc = (lane % kCpr) * Cfg::kVec;
    const bool col_ok = c0 + cc < n;
    const T* src = Am + int64_t{r0 + lr} * n + (c0 + cc);
    const int64_t step = int64_t{kRpu} * n;
    T* dst = slot + lr * Cfg::kLd + cc;
#pragma unroll
    for (int u = 0; u < 32 / kRpu; ++u) {
      const int rr = u * kRpu + lr;
      bool ok = col_ok && r0 + rr < n;
      if (diag) ok = ok && (need_lower ? cc <= rr : cc + Cfg::kVec - 1 >= rr);
      CpAsync<16>(dst + u * kRpu * Cfg::kLd, ok ? src + u * step : Am, ok);
    }
  } else {
    const bool col_ok = c0 + lane < n;
    const T* src = Am + int64_t{r0} * n + (c0 + lane);
#pragma unroll 8
    for (int rr = 0; rr < 32; ++rr) {
      bool ok = col_ok && r0 + rr < n;
      if (diag) ok = ok && (need_lower ? lane <= rr : lane >= rr);
      CpAsync<sizeof(T)>(slot + rr * Cfg::kLd + lane, ok ? src + int64_t{rr} * n : Am, ok);
    }
  }
}

// acc[c*NA + j%NA] += m[j] * V[j*KC + c] for j < 32 (V: 32 rows of KC, broadcast reads).
template <typename T, int KC, int NA>
__device__ __forceinline__ void TileDot(const T (&m)[32], const T* V, T (&acc)[KC * NA]) {
  constexpr int kV = Vec16<T>::kN;
  if constexpr (KC == 1) {
#pragma unroll
    for (int j = 0; j < 32; j += kV) {
      T v[kV];
      Vec16<T>::Load(V + j, v);
#pragma unroll
      for (int u = 0; u < kV; ++u) acc[(j + u) % NA] = fma(m[j + u], v[u], acc[(j + u) % NA]);
    }
  } else {
    static_assert(KC % kV == 0, "KC must be a multiple of the 16-byte vector");
#pragma unroll
    for (int j = 0; j < 32; ++j) {
#pragma unroll
      for (int c = 0; c < KC; c += kV) {
        T v[kV];
        Vec16<T>::Load(V + j * KC + c, v);
#pragma unroll
        for (int u = 0; u < kV; ++u) acc[(c + u) * NA + j % NA] = fma(m[j], v[u], acc[(c + u) * NA + j % NA]);
      }
    }
  }
}

// One warp per block; work item = matrix * col_blocks + block of KC rhs columns (grid-stride over
// blockIdx.x). The column blocks are not in gridDim.y (at most 65535): vmap folds a batch of
// right-hand sides into k, so k / KC is as unbounded as a batch.
// Shared memory: ring[stages][32][kLd], then V[nt*32][KC] (the rhs block: B in, X out).
template <typename T, int KC>
__global__ void __launch_bounds__(32)
    TileSolveKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ x,
                    int64_t batch, int n, int k, int col_blocks, int stages, bool vec_ok, SolvePlan plan) {
  using Cfg = TileCfg<T>;
  constexpr int NA = KC == 1 ? 4 : 1;  // independent accumulators per column
  extern __shared__ __align__(16) unsigned char trsm_smem[];
  T* ring = reinterpret_cast<T*>(trsm_smem);
  const int nt = (n + 31) / 32;
  T* V = ring + stages * Cfg::kElems;
  const int lane = threadIdx.x;
  const int vrows = nt * 32;
  TileSeq seq;
  seq.nt = nt;
  seq.plan = plan;
  const int total = plan.npasses * (nt * (nt + 1) / 2);
  const int64_t items = batch * col_blocks;

  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t mat = item / col_blocks;
    const int c0 = static_cast<int>(item - mat * col_blocks) * KC;
    const T* Am = a + mat * int64_t{n} * n;
    const T* Bm = b + mat * int64_t{n} * k;
    // V <- B[:, c0:c0+KC] (zero outside), in the first cp.async group.
    for (int e = lane; e < vrows * KC; e += 32) {
      const int row = e / KC, c = e % KC;
      const bool ok = row < n && c0 + c < k;
      CpAsync<sizeof(T)>(V + e, ok ? Bm + int64_t{row} * k + c0 + c : Bm, ok);
    }
    // Prologue: tiles 0 .. stages-2, one group each.
    TilePos prod{0, 0, 0};
    int issued = 0;
    for (; issued < stages - 1; ++issued) {
      if (issued < total) {
        int R, C;
        seq.Coords(prod.p, prod.o, prod.t, R, C);
        const SweepPass sp = PassOf(plan, prod.p);
        LoadTile(ring + issued * Cfg::kElems, Am, n, R, C, sp.forward != sp.transposed, vec_ok, lane);
        prod.Advance(seq);
      }
      CpAsyncCommit();
    }

    T acc[KC * NA];
#pragma unroll
    for (int u = 0; u < KC * NA; ++u) acc[u] = T(0);
    TilePos cons{0, 0, 0};
    for (int ct = 0; ct < total; ++ct) {
      CpAsyncWaitDyn(stages - 2);
      __syncwarp();
      // Refill the slot consumed in the previous iteration.
      if (issued < total) {
        int R, C;
        seq.Coords(prod.p, prod.o, prod.t, R, C);
        const SweepPass sp = PassOf(plan, prod.p);
        LoadTile(ring + (issued % stages) * Cfg::kElems, Am, n, R, C, sp.forward != sp.transposed,
                 vec_ok, lane);
        prod.Advance(seq);
      }
      ++issued;
      CpAsyncCommit();

      int R, C;
      seq.Coords(cons.p, cons.o, cons.t, R, C);
      const SweepPass sp = PassOf(plan, cons.p);
      const T* tile = ring + (ct % stages) * Cfg::kElems;
      T mrow[32];  // M(i, j), j = 0..31, of this lane's row i
      if (!sp.transposed) {
#pragma unroll
        for (int j = 0; j < 32; j += Cfg::kVec) Vec16<T>::Load(tile + lane * Cfg::kLd + j, mrow + j);
      } else {
#pragma unroll
        for (int j = 0; j < 32; ++j) mrow[j] = tile[j * Cfg::kLd + lane];
      }
      const int grow = R * 32 + lane;  // this lane's row of V for the diagonal / dot form
      if (R == C) {
        const int nv = n - R * 32 < 32 ? n - R * 32 : 32;
        T inv = T(0);
        if (lane < nv) inv = sp.unit_diag ? T(1) : T(1) / tile[lane * (Cfg::kLd + 1)];
        T r[KC];
#pragma unroll
        for (int c = 0; c < KC; ++c) {
          T s = T(0);
          if (!sp.transposed) {  // dot form: the row's accumulated update ends here
#pragma unroll
            for (int u = 0; u < NA; ++u) s += acc[c * NA + u];
          }
          r[c] = V[grow * KC + c] - s;
        }
#pragma unroll
        for (int u = 0; u < KC * NA; ++u) acc[u] = T(0);
        ScaledSweep<T, 32, KC>(mrow, inv, sp.forward, nv, lane, 0, r);
        if (lane < nv) {
#pragma unroll
          for (int c = 0; c < KC; ++c) V[grow * KC + c] = r[c];
        }
      } else if (!sp.transposed) {
        // dot form: row block R += A_RC x_C
        TileDot<T, KC, NA>(mrow, V + C * 32 * KC, acc);
      } else {
        // axpy form: r_C -= A_RC^T x_R, lane i owns row C*32+i
        T s[KC * NA];
#pragma unroll
        for (int u = 0; u < KC * NA; ++u) s[u] = T(0);
        TileDot<T, KC, NA>(mrow, V + R * 32 * KC, s);
        const int crow = C * 32 + lane;
        if (crow < n) {
#pragma unroll
          for (int c = 0; c < KC; ++c) {
            T t = T(0);
#pragma unroll
            for (int u = 0; u < NA; ++u) t += s[c * NA + u];
            V[crow * KC + c] -= t;
          }
        }
      }
      cons.Advance(seq);
    }
    CpAsyncWait<0>();
    __syncwarp();
    T* Xm = x + mat * int64_t{n} * k;
    for (int e = lane; e < n * KC; e += 32) {
      const int row = e / KC, c = e % KC;
      if (c0 + c < k) Xm[int64_t{row} * k + c0 + c] = V[e];
    }
    __syncwarp();  // the next matrix overwrites V
  }
}

// =================================================================================================
// launcher
// =================================================================================================

template <typename T>
constexpr int TileStages() {
  return sizeof(T) == 4 ? tuning::kTrsmTileStagesF32 : tuning::kTrsmTileStagesF64;
}

template <typename T, int KC>
cudaError_t LaunchTile(cudaStream_t stream, const T* a, const T* b, T* x, int64_t batch, int n,
                       int k, const SolvePlan& plan) {
  using Cfg = TileCfg<T>;
  const int nt = (n + 31) / 32;
  const int total = plan.npasses * (nt * (nt + 1) / 2);
  // A lone warp is latency-bound per tile, so occupancy (warps per SM) matters more than depth.
  int stages = nt <= 2 ? 2 : TileStages<T>();
  if (stages > total + 1) stages = total + 1;
  if (stages < 2) stages = 2;
  const size_t smem = (size_t(stages) * Cfg::kElems + size_t(nt) * 32 * KC) * sizeof(T);
  const int col_blocks = static_cast<int>((int64_t{k} + KC - 1) / KC);
  if (smem > 227 * 1024) return cudaErrorInvalidValue;
  auto kernel = TileSolveKernel<T, KC>;
  if (smem > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  const bool vec_ok = n % Cfg::kVec == 0 && reinterpret_cast<uintptr_t>(a) % 16 == 0;
  const int64_t items = batch * col_blocks;
  const unsigned grid = static_cast<unsigned>(items < kMaxGrid ? items : kMaxGrid);
  kernel<<<grid, 32, smem, stream>>>(a, b, x, batch, n, k, col_blocks, stages, vec_ok, plan);
  return cudaGetLastError();
}

template <typename T>
cudaError_t LaunchTriSolve(cudaStream_t stream, const T* a, const T* b, T* x, int64_t batch, int n,
                           int k, SolvePlan plan) {
  if (batch < 0 || n < 0 || k < 0 || plan.npasses < 1 || plan.npasses > 2) return cudaErrorInvalidValue;
  if (batch == 0 || n == 0 || k == 0) return cudaSuccess;
  // tiny class: thread per matrix (k == 1)
  if (k == 1 && n <= TinyMaxN<T>())
    return LaunchTiny<T>(stream, a, b, x, batch, n, plan);
  // small class: chunk of matrices in shared memory, n-lane group per (matrix, column)
  const int ld = n | 1;
  const int64_t per = (int64_t{n} * ld + int64_t{n} * k) * int64_t{sizeof(T)};
  if (n <= tuning::kTrsmSmallMaxN && per <= tuning::kTrsmSmallMaxMatrixBytes) {
    constexpr int kThreads = tuning::kTrsmSmallThreads;
    const int groups = (32 / n) * (kThreads / 32);
    const int64_t max_mats = tuning::kTrsmSmallMaxMatrixBytes / per;
    int64_t mats = tuning::kTrsmSmallChunkBytes / per;
    if (mats > groups) mats = mats / groups * groups;  // whole rounds of groups for k = 1
    if (k == 1 && mats < groups) mats = groups;
    if (mats > max_mats) mats = max_mats;
    if (mats > 8 * groups) mats = 8 * groups;
    if (mats < 1) mats = 1;
    const int64_t chunks = (batch + mats - 1) / mats;
    const size_t smem = size_t(mats * per);
    const unsigned grid = static_cast<unsigned>(chunks < kMaxGrid ? chunks : kMaxGrid);
    SmallSolveKernel<T><<<grid, kThreads, smem, stream>>>(a, b, x, batch, n, k, static_cast<int>(mats),
                                                          ld, plan);
    return cudaGetLastError();
  }
  if (k == 1) return LaunchTile<T, 1>(stream, a, b, x, batch, n, k, plan);
  return LaunchTile<T, tuning::kTrsmTileCols>(stream, a, b, x, batch, n, k, plan);
}

}  // namespace trsm_detail
}  // namespace batchla
