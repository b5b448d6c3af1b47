// Batched Householder QR, TILE class (cuda/qr_dispatch.h): R only (QrOutput::kR) for
// tuning::kQrTileMinN (9) <= n <= m <= 32. There the small class's layout (a lane
// per column) idles the lanes whose column is done and takes every step's dot, update and next
// norm over all M rows of every lane; here both dimensions shrink with the step (bench/NOTES.md
// "QR tile class").
//
// Layout: a GROUP of L lanes (tuning.h kQrTileLanes: 16, two matrices a warp; 32, a warp per
// matrix, measured slower; kQrTileLanesLow 8 for M <= 20: four matrices a warp, 1.2-1.5x faster;
// kQrTileLanesM28 8 for M = 28: f64 1.08x, f32 1.07x with the stage below)
// holds one matrix in registers as a 2 x CG lane grid (CG = L / 2): lane (rg, cg) = rg * CG + cg
// holds rows rg + 2 s (s < S = M / 2) and columns cg + CG t (t < NT), zeros past m and n. Both
// are cyclic, so at step j the row slots s < j / 2 and the column slots whose columns are all <=
// j are dead in every lane and skipped at compile time (the step loop is unrolled).
// Step j: the lanes of column j (cg = j % CG) store it, raw, to the group's slot (permuted: u[rg *
// SP + s] = row rg + 2 s, SP = S rounded up to whole 16-byte vectors; the slot positions of rows
// < j are stale and never read as such) and sum its squares below row j; one shuffle joins the
// two row groups and two broadcast ||x||^2 and alpha, and every lane computes dlarfg itself (no
// divergence): u = [alpha - beta; x] unscaled, kappa = 1 / (beta (beta - alpha)), as the small
// class's kR. After one sync every lane reads its rows of u (16-byte loads; row j gets alpha -
// beta by a select), takes the partial dots of its live columns, one shuffle each joins the row
// groups, and it updates its elements. The last column of a square matrix (no rows below it)
// takes H = I directly, and the last step updates nothing.
// dlarfg's rare branch (x tiny, huge or non-finite) is out of line (QrTileRescue), taken by the
// whole group together: NaN / Inf stay in their matrix's group.
// Per instance (tuning.h; f64 M = 32 only, the one latency-bound instance): the EARLY DOTS take
// x^T a(:, c) right after the column's store, before dlarfg, with dlarfg's usual case computed
// unconditionally so the two interleave (uj a(j, c) is added after), and a SQUARE twin for
// m == n == M folds the m / n tests.
// Per instance (tuning.h kQrTileBulkStageMinM / MaxM: those at 8-12 warps a SM): the block's
// chunk of matrices comes from a STAGE in shared memory that one bulk copy (sm_90, thread 0, on an
// mbarrier) filled while the block factored the previous chunk, so no warp waits a DRAM round
// trip for its matrix (ncu, f64 M = 28: 11 % of the stall samples were on those loads).
// Storage ROW-MAJOR, int64_t matrix offsets (launch.h). Two slots a group (a ring: the sync of
// step j + 1 orders step j's reads before step j + 2's writes).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/mbarrier.cuh"
#include "cuda/qr_dispatch.h"
#include "cuda/qr_dlarfg.cuh"
#include "cuda/qr_small.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {

template <int M, int L>
struct QrTileShape {
  static constexpr int kCG = L / 2;                          // column groups
  static constexpr int kS = M / 2;                           // row slots a lane
  static constexpr int kNT = (M + kCG - 1) / kCG;            // column slots a lane (n <= M)
  static constexpr int kGroups = tuning::kQrTileThreads / L;  // matrices a block
  // A lane's positions in a slot: its S rows rounded up to whole 16-byte vectors (the positions
  // s >= S hold zeros).
  template <typename T>
  static constexpr int kSP = CeilDiv(kS, QrSmallScalar<T>::kN) * QrSmallScalar<T>::kN;
  static_assert(L == 8 || L == 16 || L == 32, "a quarter, a half or a whole warp per matrix");
  static_assert(M % 2 == 0 && M <= 32, "two row groups, at most 32 rows");
};

// The reflector every lane of a group applies: H = I - kappa u u^T, u(j) = uj; beta = R(j, j).
template <typename T>
struct QrTileRefl {
  T kappa, uj, beta;
};

// Row of position p of a slot (u[rg * SP + s] = row rg + 2 s; positions s >= S, the rounding to
// whole vectors, map past the matrix and hold zeros).
__device__ __forceinline__ int QrTileRow(int p, int SP) { return p / SP + 2 * (p % SP); }

// dlarfg's rare branch: x (rows > J of the slot u, stored raw by the column's lanes) tiny (or 0),
// huge or non-finite. Every lane of the group (mask) computes the same beta from the slot; then
// LAPACK's form: u(i > J) = x / (alpha - beta), written back by the lanes in turn (and synced: an
// early-dots caller reads it back at once), kappa = tau, uj = 1. Runtime loops: one out-of-line
// copy a kernel, not one a step.
template <typename T>
__device__ __noinline__ QrTileRefl<T> QrTileRescue(T* u, int J, int SP, int lane, int L,
                                                   unsigned mask, T alpha, T xn2, T s2) {
  __syncwarp(mask);  // the column's stores are visible
  T amax = 0;
  for (int p = 0; p < 2 * SP; ++p)
    if (QrTileRow(p, SP) > J) amax = fmax(amax, fabs(u[p]));
  if (amax == T(0) && xn2 == xn2) return {T(0), T(1), alpha};  // x == 0: H = I, R(j, j) = alpha
  const T beta = QrSmallRescaledBeta(alpha, amax, xn2, s2, [&](T r, T t) {
    for (int p = 0; p < 2 * SP; ++p)
      if (QrTileRow(p, SP) > J) t = fma(u[p] * r, u[p] * r, t);
    return t;
  });
  const T inv = T(1) / (alpha - beta);
  __syncwarp(mask);  // every lane has read x
  for (int p = lane; p < 2 * SP; p += L)
    if (QrTileRow(p, SP) > J) u[p] *= inv;
  __syncwarp(mask);  // the caller reads v back
  return {(beta - alpha) / beta, T(1), beta};
}

// Independent FMA chains of a lane's norm of the step's column and of each dot product (tuning.h).
constexpr int kQrTileNormChains = tuning::kQrTileNormChains;
constexpr int kQrTileDotChains = tuning::kQrTileDotChains;

// Sum of C partial sums, pairwise.
template <int C, typename T>
__device__ __forceinline__ T QrTileSum(const T (&p)[C]) {
  if constexpr (C == 1) return p[0];
  else if constexpr (C == 2) return p[0] + p[1];
  else return (p[0] + p[1]) + (p[2] + p[3]);
}

// __launch_bounds__' blocks a SM of an instance (tuning.h; 0: ptxas' choice).
template <typename T, int M, int L>
constexpr int QrTileMinBlocks() {
  if (sizeof(T) == 4 && M == 28 && L == 8) return tuning::kQrTileM28L8MinBlocksF32;
  return tuning::kQrTileMinBlocks.Of(sizeof(T) == 8);
}

// Whether an instance takes a step's dots before its reflector / has an exact-square twin
// (tuning.h kQrTileEarlyDotsMinM / kQrTileSquareMinM).
template <typename T, int M>
constexpr bool kQrTileEarlyDots = M >= tuning::kQrTileEarlyDotsMinM.Of(sizeof(T) == 8);
template <typename T, int M>
constexpr bool kQrTileHasSquare = M >= tuning::kQrTileSquareMinM.Of(sizeof(T) == 8);

// Whether an instance reads its matrices from a stage in shared memory that one bulk copy (sm_90)
// fills with the block's next chunk while this one is factored (tuning.h kQrTileBulkStageMinM /
// MaxM), and the stage's bytes: a chunk of kGroups matrices of at most M x M.
template <typename T, int M>
constexpr bool kQrTileBulkStage = M >= tuning::kQrTileBulkStageMinM.Of(sizeof(T) == 8) &&
                                  M <= tuning::kQrTileBulkStageMaxM.Of(sizeof(T) == 8);
template <typename T, int M, int L>
constexpr size_t QrTileStageBytes() {
  return kQrTileBulkStage<T, M> ? size_t(QrTileShape<M, L>::kGroups) * M * M * sizeof(T) : 0;
}

// kSquare: every matrix of the launch is M x M, so the kernel's m / n tests fold away.
// stage_on: the instance stages (kQrTileBulkStage) and args.a is 16-byte aligned.
template <typename T, int M, int L, bool kSquare>
__global__ void __launch_bounds__(tuning::kQrTileThreads, QrTileMinBlocks<T, M, L>())
    QrTileKernel(QrArgs<T> args, bool stage_on) {
  using Shape = QrTileShape<M, L>;
  constexpr int CG = Shape::kCG, S = Shape::kS, NT = Shape::kNT, kGroups = Shape::kGroups;
  constexpr bool kEarly = kQrTileEarlyDots<T, M>;
  using V = QrSmallScalar<T>;
  constexpr int kV = V::kN;
  constexpr int SP = Shape::template kSP<T>;
  const int lane = threadIdx.x % L, group = threadIdx.x / L;
  const int rg = lane / CG, cg = lane % CG;
  const unsigned group_mask = L == 32 ? 0xffffffffu : ((1u << L) - 1) << (threadIdx.x & (32 - L));
  __shared__ __align__(16) T slots[kGroups][2][2 * SP];
  const int m = kSquare ? M : args.m, n = kSquare ? M : args.n;
  const int64_t mat_elems = int64_t(m) * n, chunk_stride = int64_t(gridDim.x) * kGroups;
  // The stage (kStage): chunk `base` is staged when the launch stages and the chunk is whole; the
  // copy is then kGroups m n sizeof(T) bytes (a multiple of 16) from a 16-byte aligned address
  // (base is a multiple of kGroups, and kGroups sizeof(T) of 16). The last, partial chunk of a
  // block loads from global memory as the unstaged instances do.
  constexpr bool kStage = kQrTileBulkStage<T, M> && kHasBulkCopy;
  extern __shared__ __align__(16) unsigned char qr_tile_stage[];
  __shared__ uint64_t stage_full;
  T* const stage = reinterpret_cast<T*>(qr_tile_stage);
  auto staged = [&](int64_t base) { return kStage && stage_on && base + kGroups <= args.batch; };
  auto fill_stage = [&](int64_t base) {  // thread 0
    const unsigned bytes = unsigned(kGroups * mat_elems * int64_t(sizeof(T)));
    MbarArriveExpectTx(&stage_full, bytes);
    BulkCopyToShared(stage, args.a + base * mat_elems, bytes, &stage_full);
  };
  unsigned stage_parity = 0;
  if constexpr (kStage) {
    if (threadIdx.x == 0) MbarInit(&stage_full, 1), MbarInitFence();
    __syncthreads();
    if (threadIdx.x == 0 && staged(int64_t(blockIdx.x) * kGroups)) fill_stage(int64_t(blockIdx.x) * kGroups);
  }
  // Uniform over the block, so every group of a warp (L < 32) takes the same trips: the steps'
  // __syncwarp and full-warp shuffles need all 32 lanes (an idle group runs on zeros).
  for (int64_t base = int64_t(blockIdx.x) * kGroups; base < args.batch; base += chunk_stride) {
    const int64_t b = base + group;
    const bool active = b < args.batch;
    T a[S][NT];
    auto load = [&](const T* src) {
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          const int i = rg + 2 * s, c = cg + CG * t;
          a[s][t] = active && i < m && c < n ? src[i * n + c] : T(0);
        }
    };
    if (staged(base)) {
      MbarTryWait(&stage_full, stage_parity);
      stage_parity ^= 1;
      load(stage + group * mat_elems);
    } else {
      load(args.a + (active ? b : 0) * mat_elems);
    }
    if constexpr (kStage) {
      __syncthreads();  // every lane has read the stage: refill it with the block's next chunk
      if (threadIdx.x == 0 && staged(base + chunk_stride)) FenceProxyAsync(), fill_stage(base + chunk_stride);
    }
    __syncwarp();  // the previous matrix's readers are done with the slots

#pragma unroll
    for (int j = 0; j < M; ++j) {
      if (j >= n) break;  // uniform: n is the launch's
      // Constants once unrolled: column j's slot, the first live row slot, the slot ring.
      const int tj = j / CG, s0 = j / 2;
      T* u = slots[group][j % 2] + rg * SP;
      // Column j to the slot (rows of slots >= s0), and its squares below row j (in slot s0 only
      // row j + 1, when j is even).
      T nrm[kQrTileNormChains] = {};
      if (cg == j % CG) {
#pragma unroll
        for (int q = 0; q < SP / kV; ++q) {
          if ((q + 1) * kV <= s0) continue;
          typename V::type vec;
          T* pe = reinterpret_cast<T*>(&vec);
#pragma unroll
          for (int e = 0; e < kV; ++e) pe[e] = q * kV + e < S ? a[(q * kV + e) % S][tj] : T(0);
          reinterpret_cast<typename V::type*>(u)[q] = vec;
        }
      }
#pragma unroll
      for (int s = 0; s < S; ++s) {
        if (s < s0 || (s == s0 && j % 2 == 1)) continue;
        const T x = s == s0 && rg == 0 ? T(0) : a[s][tj];
        nrm[s % kQrTileNormChains] = fma(x, x, nrm[s % kQrTileNormChains]);
      }
      T part = QrTileSum(nrm);
      part += ShflXor(part, CG, L);
      const T xn2 = ShflIdx(part, j % CG, L);
      const T alpha = ShflIdx(a[s0][tj], (j % 2) * CG + j % CG, L);
      const T s2 = fma(alpha, alpha, xn2);

      // u at this lane's rows, and the partial dots u^T a(:, c) of its live column slots. Late
      // (after dlarfg): u = [uj; x], row j -> uj. Early (before it, kEarly): x alone, row j -> 0,
      // and uj a(j, c) is added once uj exists, so the dots overlap dlarfg's chain instead of
      // following it. Row j - 1 (j odd, row group 0) -> 0.
      T uu[S], dots[NT];
      auto load_u = [&](T uj) {
#pragma unroll
        for (int q = 0; q < SP / kV; ++q) {
          if ((q + 1) * kV <= s0) continue;
          T x[kV];
          V::Split(reinterpret_cast<const typename V::type*>(u)[q], x);
#pragma unroll
          for (int e = 0; e < kV; ++e)
            if (q * kV + e < S) uu[q * kV + e] = x[e];
        }
        uu[s0] = rg == j % 2 ? uj : (j % 2 == 1 ? T(0) : uu[s0]);
      };
      auto take_dots = [&] {
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          if (CG * t + CG - 1 <= j) continue;  // every column of slot t is <= j
          T acc[kQrTileDotChains] = {};
#pragma unroll
          for (int s = 0; s < S; ++s)
            if (s >= s0) acc[s % kQrTileDotChains] = fma(uu[s], a[s][t], acc[s % kQrTileDotChains]);
          dots[t] = QrTileSum(acc);
        }
      };
      if constexpr (kEarly) {
        __syncwarp();  // the slot is written
        load_u(T(0));
        take_dots();
      }

      const bool in_range = xn2 >= DlarfgRange<T>::kLo && s2 <= DlarfgRange<T>::kHi;
      QrTileRefl<T> h;
      if constexpr (kEarly) {
        // dlarfg's usual case unconditionally: straight-line code the dots interleave with.
        const T beta = -copysign(s2 * DlarfgRsqrt(s2), alpha);
        h = {DlarfgRcp(beta * (beta - alpha)), alpha - beta, beta};
      }
      if (j + 1 == m) {
        // No rows below j (the last column of a square matrix): H = I, LAPACK's n = 1 dlarfg.
        // Its own case, or every square matrix would take the rescue below for x == 0.
        h = {T(0), T(1), alpha};
      } else if (in_range) {
        // Usual case: beta^2 and beta (beta - alpha) <= 2 s2 stay finite and normal.
        if constexpr (!kEarly) {
          const T beta = -copysign(s2 * DlarfgRsqrt(s2), alpha);
          h = {DlarfgRcp(beta * (beta - alpha)), alpha - beta, beta};
        }
      } else {
        h = QrTileRescue(slots[group][j % 2], j, SP, lane, L, group_mask, alpha, xn2, s2);
        if constexpr (kEarly) {  // the rescue rewrote x as LAPACK's v: the dots again, from it
          load_u(T(0));
          take_dots();
        }
      }
      const bool holds_rjj = rg == j % 2 && cg == j % CG;
      if (kEarly || j + 1 < n) {  // else the last column: no column right of it to update
        if constexpr (kEarly) {
          if (rg == j % 2) uu[s0] = h.uj;
        } else {
          __syncwarp();  // the slot is written
          load_u(h.uj);
          take_dots();
        }
        // w_t = kappa u^T a(:, c) for the lane's live columns c > j (the row groups' halves
        // joined by one shuffle); 0 for c <= j. (Early, past the last column: the slots of
        // columns >= n hold zeros, so w = 0 there.)
        T w[NT];
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          if (CG * t + CG - 1 <= j) continue;
          T d = kEarly && rg == j % 2 ? fma(h.uj, a[s0][t], dots[t]) : dots[t];
          d += ShflXor(d, CG, L);
          w[t] = cg + CG * t > j ? h.kappa * d : T(0);
        }
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          if (CG * t + CG - 1 <= j) continue;
#pragma unroll
          for (int s = 0; s < S; ++s)
            if (s >= s0) a[s][t] = fma(-w[t], uu[s], a[s][t]);
        }
      }
      if (holds_rjj) a[s0][tj] = h.beta;
    }

    if (active) {
      T* dst = args.r + b * int64_t(n) * n;
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int t = 0; t < NT; ++t) {
          const int i = rg + 2 * s, c = cg + CG * t;
          if (i < n && c < n) dst[i * n + c] = i <= c ? a[s][t] : T(0);
        }
    }
  }
}

template <typename T, int M, int L, bool kSquare>
struct QrTileTag {};  // PersistentGrid's occupancy cache key

template <typename T, int M, int L, bool kSquare>
cudaError_t QrTileLaunchAs(cudaStream_t stream, const QrArgs<T>& args) {
  constexpr int kGroups = QrTileShape<M, L>::kGroups;
  auto kernel = QrTileKernel<T, M, L, kSquare>;
  constexpr size_t smem = QrTileStageBytes<T, M, L>();
  if constexpr (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  unsigned grid = 0;
  cudaError_t e = PersistentGrid<QrTileTag<T, M, L, kSquare>>(kernel, tuning::kQrTileThreads, smem,
                                                               CeilDiv(args.batch, kGroups), &grid);
  if (e != cudaSuccess) return e;
  const bool stage_on = smem > 0 && (reinterpret_cast<uintptr_t>(args.a) & 15u) == 0;
  kernel<<<grid, tuning::kQrTileThreads, smem, stream>>>(args, stage_on);
  return cudaGetLastError();
}

template <typename T, int M, int L>
cudaError_t QrTileLaunch(cudaStream_t stream, const QrArgs<T>& args) {
  if constexpr (kQrTileHasSquare<T, M>)
    if (args.m == M && args.n == M) return QrTileLaunchAs<T, M, L, true>(stream, args);
  return QrTileLaunchAs<T, M, L, false>(stream, args);
}

template <typename T>
bool QrTileTakes(int m, int n, QrOutput out) {
  return out == QrOutput::kR && n >= tuning::kQrTileMinN.Of(sizeof(T) == 8) && n <= m &&
         m <= tuning::kQrTileMaxM;
}

template <typename T>
cudaError_t QrTile(cudaStream_t stream, const QrArgs<T>& args) {
  if (!QrTileTakes<T>(args.m, args.n, QrOutput::kR) || args.batch < 0 || args.r == nullptr)
    return cudaErrorInvalidValue;
  if (args.batch == 0) return cudaGetLastError();
  constexpr int L = tuning::kQrTileLanes.Of(sizeof(T) == 8);         // M = 24, 28, 32
  constexpr int LS = tuning::kQrTileLanesLow.Of(sizeof(T) == 8);     // M = 12, 16, 20
  constexpr int L28 = tuning::kQrTileLanesM28.Of(sizeof(T) == 8);    // M = 28
  if constexpr (tuning::kQrTileM12)
    if (args.m <= 12) return QrTileLaunch<T, 12, LS>(stream, args);
  if (args.m <= 16) return QrTileLaunch<T, 16, LS>(stream, args);  // from n = 9 (tuning.h)
  if constexpr (tuning::kQrTileExactM)
    if (args.m <= 20) return QrTileLaunch<T, 20, LS>(stream, args);
  if (args.m <= 24) return QrTileLaunch<T, 24, L>(stream, args);
  if constexpr (tuning::kQrTileExactM)
    if (args.m <= 28) return QrTileLaunch<T, 28, L28>(stream, args);
  return QrTileLaunch<T, 32, L>(stream, args);
}

}  // namespace detail
}  // namespace batchla
