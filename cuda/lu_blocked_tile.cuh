// Batched LU, "tile" class: ONE WARP per matrix, the matrix in SHARED memory, left-looking (Crout)
// in tile columns of kLuTileW = 8; getrf (kFactor), slogdet and gesv with one right-hand side,
// n <= 96 (range: cuda/tuning.h, LuTileTakes; measurements: bench/NOTES.md, "getrf tile class").
//
// Why: the register classes (small: lane = row of the whole matrix; warp: one or two warps hold
// the matrix) spend every column step on a dependent chain -- argmax, publish the pivot row,
// sync, broadcast loads, a full-row update -- with only 8-12 warps per SM to overlap it. Here a
// warp holds just one 8-column tile column in registers (lane l: rows l and l + 32, R = n / 32
// rounded up), so each SM keeps as many matrices in flight as shared memory allows (f64 n = 64: 6,
// f32 n = 32: 32), and most flops are rank-8 updates with eight independent FMAs per operand.
//
// Rows never move (final-destination pivoting, as the warp class): pos[q] is the current position
// of the lane's row lane + 32 q; rowof[p] (shared) is the row pivoted at step p. Tile column J
// (columns c0 = 8 J .. c0 + 7):
//   1. x = A(:, c0 .. c0 + 7) from shared memory.
//   2. For each earlier block of positions K (p0 = 8 K): the rows at positions p0 .. p0 + 7 post
//      their x; lanes 0..7 solve the unit-lower diagonal block (column c per lane) into usol =
//      U(p0 .., c0 ..); every row below the block takes x -= L(r, p0 ..) usol (its own L from
//      shared memory, usol broadcast); the block's rows take usol.
//   3. getf2 on the rows with pos >= c0 (the panel): per column, warp argmax of (|x|, pos) (LAPACK's
//      first max in the current order), the pivot row's values by shuffles from its lane, the
//      positions exchanged, multipliers and a rank-1 update of the panel's remaining columns.
//   4. x back to shared memory.
// Output: lu(p, :) = A(rowof[p], :) copied out row by row (coalesced); pivots, perm, info; or
// sign / logabsdet from the pivots and their parity; or x = A^-1 b by blocked forward / backward
// substitution on the factor in shared memory (LuTileSolve1).
// Non-finite input: rows not updated in step 2 get x - 0 * usol, so an inf in usol (only from a
// non-finite or overflowing matrix) turns that matrix's earlier U entries to NaN where LAPACK would
// keep them (the warp class does the same); other matrices are never touched.
#pragma once

#include <climits>
#include <cstdint>
#include <type_traits>

#include "cuda/lu_blocked.cuh"
#include "cuda/trsm_kernels.cuh"

namespace batchla {
namespace detail {

constexpr int kLuTileW = 8;       // tile column width
constexpr int kLuTileMaxRows = 96;  // three rows a lane

// Row stride of the shared matrix: columns rounded up to the tile width, plus one 16-byte granule
// so that the stride is an odd number of granules (lanes on consecutive rows: no bank conflicts
// for their 16-byte accesses).
template <typename T>
__host__ __device__ constexpr int LuTileLd(int n) {
  return RoundUp(n, kLuTileW) + 16 / int(sizeof(T));
}

// ROWS: the most rows a factored matrix or panel has (the left class's warp panel: 128).
// With BATCHLA_LU_TILE_COMPACT_SCRATCH (tuning.h) the solved U block overwrites the posted rows
// (each of lanes 0..7 reads and writes only its own column of it) and a one-row-a-lane kernel keeps
// 32 positions, not 64: 768 B less a f64 matrix, so more of them fit an SM.
// Row stride of a posted 8 x 8 block: one 16-byte granule more than its 8 values, so the 8 lanes
// that post (or read back) one row each with 16-byte accesses hit 8 distinct bank groups (at 8
// values a row, rows 0 / 2 / 4 / 6 shared a group: ncu measured ~5.9 wavefronts an access).
template <typename T>
constexpr int kLuTileBlkLd = kLuTileW + 16 / int(sizeof(T));
template <typename T>
using LuTileBlk = T[kLuTileW][kLuTileBlkLd<T>];

template <typename T, int ROWS>
struct LuTileScratch {
  alignas(16) LuTileBlk<T> ublk;  // block rows posted for the forward solve
#if !BATCHLA_LU_TILE_COMPACT_SCRATCH
  alignas(16) LuTileBlk<T> usol_;  // their solved U block
#endif
  alignas(16) T zero[kLuTileW];            // the L operand of rows a block update must not touch
  alignas(16) int rowof[ROWS];             // original row pivoted at each position
  int pivs[ROWS];                          // 0-based LAPACK pivots
  // the solved U block of a block update
  __device__ __forceinline__ T (*usol())[kLuTileBlkLd<T>] {
#if BATCHLA_LU_TILE_COMPACT_SCRATCH
    return ublk;
#else
    return usol_;
#endif
  }
};

// The tile kernel's scratch at R rows a lane (positions: 32 R, or 64 for R <= 2 without
// BATCHLA_LU_TILE_COMPACT_SCRATCH, the layout n <= 64 always had).
template <typename T, int R>
using LuTileKernelScratch = LuTileScratch<T, (R <= 2 && !BATCHLA_LU_TILE_COMPACT_SCRATCH ? 64 : 32 * R)>;
template <typename T, int R>
__host__ __device__ constexpr size_t LuTileSmemBytes(int n) {
  return sizeof(LuTileKernelScratch<T, R>) + size_t(n) * size_t(LuTileLd<T>(n)) * sizeof(T);
}

// Copies between the row-major n x n matrix at g and S (row stride ld) in units of V elements (V
// = 16 / sizeof(T): 16-byte granules, where rows are whole granules and g is aligned; else 1).
// With u = n / V units a row and u <= 32, a lane copies unit lane % u of rows lane / u + k (32 /
// u): no index math per unit (the flat-index version spent ~15 % of a matrix's instructions at
// f64 n = 32 there; the time moved within noise). Rows of more than 32 units (V = 1 and n > 32, or
// f64 n > 64) go one row at a time.
// IN: g -> S by cp.async (the caller commits and waits); else S row rowof[p] -> g row p.
template <typename T, int V, bool IN>
__device__ __forceinline__ void LuTileCopyUnits(const T* src, T* dst, const int* rowof, int n, int ld, int lane) {
  using U = typename std::conditional<V == 1, T, typename Vec16<T>::type>::type;
  auto unit = [&](int r, int c) {
    if constexpr (IN) {
      CpAsync<int(sizeof(U))>(dst + r * ld + c, src + r * n + c, true);
    } else {
      *reinterpret_cast<U*>(dst + r * n + c) = *reinterpret_cast<const U*>(src + rowof[r] * ld + c);
    }
  };
  const int u = n / V;
  if (u <= 32) {
    const int step = 32 / u, dr = lane / u, c = (lane - dr * u) * V;
    if (dr < step)
      for (int r = dr; r < n; r += step) unit(r, c);
  } else {
    for (int r = 0; r < n; ++r)
      for (int c = lane * V; c < n; c += 32 * V) unit(r, c);
  }
}

// The matrix at g into S; the columns n .. RoundUp(n, 8) - 1 (read by the last tile column) zeroed.
template <typename T>
__device__ __forceinline__ void LuTileCopyIn(const T* __restrict__ g, T* S, int n, int ld, int lane) {
  constexpr int V = 16 / int(sizeof(T));
  if (n % V == 0 && (reinterpret_cast<uintptr_t>(g) & 15u) == 0) LuTileCopyUnits<T, V, true>(g, S, nullptr, n, ld, lane);
  else LuTileCopyUnits<T, 1, true>(g, S, nullptr, n, ld, lane);
  const int nc = RoundUp(n, kLuTileW);
  for (int r = lane; r < n; r += 32)
    for (int c = n; c < nc; ++c) S[r * ld + c] = T(0);
  CpAsyncCommit();
  CpAsyncWait<0>();
  __syncwarp();
}

// Row p of the output at g = S row rowof[p].
template <typename T>
__device__ __forceinline__ void LuTileCopyOut(const T* S, const int* rowof, T* __restrict__ g, int n, int ld,
                                              int lane) {
  constexpr int V = 16 / int(sizeof(T));
  if (n % V == 0 && (reinterpret_cast<uintptr_t>(g) & 15u) == 0) LuTileCopyUnits<T, V, false>(S, g, rowof, n, ld, lane);
  else LuTileCopyUnits<T, 1, false>(S, g, rowof, n, ld, lane);
}

// Pivot keys of the tile-form panels: LuKeyNoBranch's order, in 32 bits for f32 (bits(|x|) + 1 and
// the NaN-first ~0 fit there; 64-bit compares doubled the key selects of every step).
template <typename T>
using LuTileKeyT = typename std::conditional<sizeof(T) == 4, unsigned, unsigned long long>::type;
template <typename T>
__device__ __forceinline__ LuTileKeyT<T> LuTileKey(T x, bool first) {
  return LuTileKeyT<T>(LuKeyNoBranch(x, first));
}

// The lane holding the warp's pivot: largest key, then smallest pos (LAPACK's first max in the
// current order). Usually one lane holds the largest leading key word: one redux and a ballot;
// ties fall through to the next key word and then to the smallest pos (LuWarpArgmax's order).
// f32 keys fit the low word (a NaN-first key ~0 is all ones there too).
template <typename T>
__device__ __forceinline__ int LuTileArgmaxLane(LuTileKeyT<T> key, int pos) {
  constexpr unsigned kAll = 0xffffffffu;
  const unsigned lo = unsigned(key);
  bool top;
  if constexpr (sizeof(T) == 8) {
    const unsigned hi = unsigned(key >> 32);
    top = hi == __reduce_max_sync(kAll, hi);
    const unsigned m = __ballot_sync(kAll, top);
    if (__popc(m) == 1) return __ffs(m) - 1;
    const unsigned lmax = __reduce_max_sync(kAll, top ? lo : 0u);  // every lane (not behind `top &&`)
    top = top && lo == lmax;
  } else {
    top = lo == __reduce_max_sync(kAll, lo);
  }
  const unsigned m = __ballot_sync(kAll, top);
  if (__popc(m) == 1) return __ffs(m) - 1;
  const unsigned pmin = __reduce_min_sync(kAll, top ? unsigned(pos) : 0x7fffffffu);
  return __ffs(__ballot_sync(kAll, top && unsigned(pos) == pmin)) - 1;
}

// A panel whose rows are split over NW warps (the left class's panel, cuda/lu_blocked_left.cuh):
// lane l of warp w holds rows l + 32 (w + NW q). Per step every warp posts its candidate (key,
// position, row and the row's values) and one barrier (LuTileSplit::Sync) lets each pick the best;
// per block update the rows posted for the forward solve are double-buffered by block (one
// barrier orders their reuse) and each warp solves its own copy of the U block. NW = 1 is the
// tile class's one warp: shuffles and __syncwarp, no scratch.
template <typename T, int NW>
struct LuTileSplitScratch {
  struct alignas(16) Cand {
    LuTileKeyT<T> key;
    int pos, row;
  };
  Cand cand[2][NW];                                 // by step parity
  alignas(16) T cv[2][NW][kLuTileW];                // the candidate row's values, by step parity
  alignas(16) LuTileBlk<T> ublk[2];                 // block rows posted, by block parity
  alignas(16) LuTileBlk<T> usol[NW];                // each warp's solved U block
};
// NB: the warps at each of its barriers (all of a block's warps, NB >= NW: the ones without rows
// only keep the count, as the left class's LuLeftPanelIdle). racecheck reported hazards between
// phases when a kernel synchronised subsets of its warps (bench/NOTES.md, "Left class: the
// panel's rows split over the block's warps"), so the splits here always hold the whole block.
template <typename T, int NW, int NB = NW>
struct LuTileSplit {
  static constexpr int kWarps = NW;
  static_assert(NB >= NW, "every warp with rows is at the barrier");
  int warp = 0;                               // this warp's index among the NW
  LuTileSplitScratch<T, NW>* xs = nullptr;    // NW > 1
  __device__ __forceinline__ int Row(int lane, int q) const { return lane + 32 * (warp + NW * q); }
  static __device__ __forceinline__ void Sync() {
    if constexpr (NB == 1) __syncwarp();
    else asm volatile("bar.sync 1, %0;" ::"n"(32 * NB) : "memory");
  }
};

// What the pivots leave besides the factor, read from it once the matrix is factored (lanes take
// positions lane, lane + 32 in parallel, instead of a log and counts on every step's chain).
template <typename T>
struct LuTileStats {
  int info;  // 1-based first zero pivot, 0 if none
  int odd;   // parity of row exchanges + negative pivots
  T logs;    // sum of log|pivot| (slogdet only)
};
template <typename T, class SC>
__device__ __forceinline__ LuTileStats<T> LuTileStatsOf(const T* S, int ld, const SC* sc, int n, int lane,
                                                        bool logs) {
  int first_zero = INT_MAX, cnt = 0;
  T lsum = T(0);
  for (int p = lane; p < n; p += 32) {
    const T d = S[sc->rowof[p] * ld + p];
    if (logs) lsum += log(fabs(d));
    cnt += (sc->pivs[p] != p) + (d < T(0));
    if (d == T(0)) first_zero = min(first_zero, p);
  }
  LuTileStats<T> st;
  first_zero = int(__reduce_min_sync(0xffffffffu, unsigned(first_zero)));
  st.info = first_zero == INT_MAX ? 0 : first_zero + 1;
  st.odd = int(__reduce_add_sync(0xffffffffu, unsigned(cnt))) & 1;
  if (logs) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) lsum += __shfl_xor_sync(0xffffffffu, lsum, o);
  }
  st.logs = lsum;
  return st;
}

// Step 2 for the block of positions p0 = 8 K .. p0 + 7 (all < n). sp: the rows' split over warps.
template <typename T, int R, class SC, class SP = LuTileSplit<T, 1>>
__device__ __forceinline__ void LuTileBlockUpdate(T (&x)[R][kLuTileW], const int (&pos)[R], const T* S, int ld,
                                                  SC* sc, int p0, int lane, SP sp = {}) {
  constexpr int W = kLuTileW, NW = SP::kWarps;
  constexpr bool kCompact = NW > 1 || BATCHLA_LU_TILE_COMPACT_SCRATCH;  // lanes < 8 solve, each its column
  T(*ublk)[kLuTileBlkLd<T>] = NW == 1 ? sc->ublk : sp.xs->ublk[(p0 / W) & 1];
  T(*usol)[kLuTileBlkLd<T>] = NW == 1 ? sc->usol() : sp.xs->usol[sp.warp];
  if (NW == 1 && BATCHLA_LU_TILE_COMPACT_SCRATCH) __syncwarp();  // the previous block's usol reads done: it is ublk
#pragma unroll
  for (int q = 0; q < R; ++q)
    if (unsigned(pos[q] - p0) < unsigned(W)) Store8(ublk[pos[q] - p0], x[q]);
  sp.Sync();
  // forward solve with the unit-lower diagonal block; lane c < 8 owns column c (the other lanes
  // repeat a column's work unless the solution overwrites ublk, which they must not read then)
  if (!kCompact || lane < W) {
    const int c = lane & (W - 1);
    const int4 ra = *reinterpret_cast<const int4*>(sc->rowof + p0);
    const int4 rb = *reinterpret_cast<const int4*>(sc->rowof + p0 + 4);
    const int rows[W] = {ra.x, ra.y, ra.z, ra.w, rb.x, rb.y, rb.z, rb.w};
    T u[W];
#pragma unroll
    for (int i = 0; i < W; ++i) {
      T l[W];
      Load8(S + rows[i] * ld + p0, l);
      T acc = ublk[i][c];
#pragma unroll
      for (int m = 0; m < i; ++m) acc = fma(-l[m], u[m], acc);
      u[i] = acc;
    }
    if (lane < W) {
#pragma unroll
      for (int i = 0; i < W; ++i) usol[i][c] = u[i];
    }
  }
  __syncwarp();
  if constexpr (R * W * sizeof(T) <= 128) {
    T l[R][W];  // the row's L(r, p0 ..), or zeros where the row is not below the block
#pragma unroll
    for (int q = 0; q < R; ++q) Load8(pos[q] >= p0 + W ? S + sp.Row(lane, q) * ld + p0 : sc->zero, l[q]);
#pragma unroll
    for (int m = 0; m < W; ++m) {
      T u[W];
      Load8(usol[m], u);
#pragma unroll
      for (int q = 0; q < R; ++q)
#pragma unroll
        for (int c = 0; c < W; ++c) x[q][c] = fma(-l[q][m], u[c], x[q][c]);
    }
  } else {  // f64 with 4 rows a lane: L(r, p0 + m) one at a time (l[R][W] would double x's registers)
#pragma unroll
    for (int m = 0; m < W; ++m) {
      T u[W];
      Load8(usol[m], u);
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const T lq = pos[q] >= p0 + W ? S[sp.Row(lane, q) * ld + p0 + m] : T(0);
#pragma unroll
        for (int c = 0; c < W; ++c) x[q][c] = fma(-lq, u[c], x[q][c]);
      }
    }
  }
#pragma unroll
  for (int q = 0; q < R; ++q)
    if (unsigned(pos[q] - p0) < unsigned(W)) Load8(usol[pos[q] - p0], x[q]);
}

// Step 3: getf2 on the tile column's rows with pos >= c0, columns c0 + jj < n. sp: the rows' split
// over warps (NW > 1: the argmax and the pivot row's values through sp.xs, one barrier a step).
template <typename T, int R, class SC, class SP = LuTileSplit<T, 1>>
__device__ __forceinline__ void LuTilePanel(T (&x)[R][kLuTileW], int (&pos)[R], SC* sc, int c0, int n, int lane,
                                            SP sp = {}) {
  constexpr int W = kLuTileW, NW = SP::kWarps;
  StaticFor<0, W>([&](auto jj_) {
    constexpr int jj = decltype(jj_)::value;
    const int j = c0 + jj;
    if (j >= n) return;
    // the lane's best candidate (selects only: branches here serialized the step)
    LuTileKeyT<T> key = 0;
    int kp = INT_MAX, kq = 0;
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const LuTileKeyT<T> k = pos[q] >= j ? LuTileKey(x[q][jj], pos[q] == j) : LuTileKeyT<T>(0);
      const bool better = k > key || (k == key && k != 0 && pos[q] < kp);
      key = better ? k : key;
      kp = better ? pos[q] : kp;
      kq = better ? q : kq;
    }
    // the candidate row's values, picked before the argmax (off its chain)
    T v[W];
#pragma unroll
    for (int c = jj; c < W; ++c) {
      v[c] = x[0][c];
#pragma unroll
      for (int q = 1; q < R; ++q) v[c] = kq == q ? x[q][c] : v[c];
    }
    const int wl = LuTileArgmaxLane<T>(key, kp);
    int prow, ppos;
    if constexpr (NW == 1) {
#pragma unroll
      for (int c = jj; c < W; ++c) v[c] = __shfl_sync(0xffffffffu, v[c], wl);
      prow = __shfl_sync(0xffffffffu, lane + 32 * kq, wl), ppos = __shfl_sync(0xffffffffu, kp, wl);
    } else {  // each warp's winner posts; every lane picks the best post (largest key, then smallest pos)
      auto* xs = sp.xs;
      const int par = j & 1;  // a post is rewritten two steps later, after every warp passed the next barrier
      if (lane == wl) {
        xs->cand[par][sp.warp] = {key, kp, sp.Row(lane, kq)};
#pragma unroll
        for (int c = jj; c < W; ++c) xs->cv[par][sp.warp][c] = v[c];
      }
      sp.Sync();
      auto best = xs->cand[par][0];
      int bw = 0;
#pragma unroll
      for (int w = 1; w < NW; ++w) {
        const auto cw = xs->cand[par][w];
        const bool better = cw.key > best.key || (cw.key == best.key && cw.pos < best.pos);
        best = better ? cw : best;
        bw = better ? w : bw;
      }
#pragma unroll
      for (int c = jj; c < W; ++c) v[c] = xs->cv[par][bw][c];
      prow = best.row, ppos = best.pos;
    }
    const T pv = v[jj];
    if (lane == 0 && sp.warp == 0) sc->rowof[j] = prow, sc->pivs[j] = ppos;
    // LAPACK scales by 1 / pivot unless |pivot| < the smallest normal (then divides; a zero or NaN
    // pivot too: zero leaves the column unscaled). `tiny` is the same in every lane.
    const bool tiny = !(fabs(pv) >= LuMinNormal<T>());
    const T rp = LuRcp(pv);
    T mult[R];
#pragma unroll
    for (int q = 0; q < R; ++q) mult[q] = x[q][jj] * rp;
    if (tiny) {  // one warp-uniform branch for all rows
#pragma unroll
      for (int q = 0; q < R; ++q) mult[q] = pv != T(0) ? x[q][jj] / pv : x[q][jj];
    }
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const int p = pos[q];
      pos[q] = sp.Row(lane, q) == prow ? j : (p == j ? ppos : p);
      const bool elim = pos[q] > j;
      const T l = elim ? mult[q] : T(0);
      x[q][jj] = elim ? l : x[q][jj];
#pragma unroll
      for (int c = jj + 1; c < W; ++c) x[q][c] = fma(-l, v[c], x[q][c]);
    }
  });
}

// gesv, k = 1, once the matrix is factored: L y = P b (forward, blocks of 8 positions), then U x = y
// (backward). One column, so every lane solves each 8 x 8 diagonal block itself (no second sync,
// no shared round trip); y lives with its row (lane + 32 q), as the factor's columns do.
// LuTileSolvePost: the rows at positions p0..p0+7 post y; every lane reads the block's rows of the
// factor (rows beyond n: row 0, never used) and the posted y.
template <typename T, int R, class SC>
__device__ __forceinline__ void LuTileSolvePost(const int (&pos)[R], const T (&y)[R], const T* S, int ld,
                                                SC* sc, int n, int p0, T (&u)[kLuTileW][kLuTileW],
                                                T (&yb)[kLuTileW]) {
  constexpr int W = kLuTileW;
#pragma unroll
  for (int q = 0; q < R; ++q)
    if (unsigned(pos[q] - p0) < unsigned(W)) sc->ublk[pos[q] - p0][0] = y[q];
  __syncwarp();
#pragma unroll
  for (int i = 0; i < W; ++i) {
    Load8(S + (p0 + i < n ? sc->rowof[p0 + i] : 0) * ld + p0, u[i]);
    yb[i] = sc->ublk[i][0];
  }
  __syncwarp();  // ublk read before the next block posts
}
// The rows the block's solution xs updates (forward: below it, backward: above it) take
// y -= A(r, p0..p0+7) xs; the block's rows take xs.
template <typename T, int R, bool FORWARD, class SC>
__device__ __forceinline__ void LuTileSolveTake(const int (&pos)[R], T (&y)[R], const T* S, int ld,
                                                const SC* sc, int p0, int lane, const T (&xs)[kLuTileW]) {
  constexpr int W = kLuTileW;
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int p = pos[q];
    const bool other = FORWARD ? p >= p0 + W : (p >= 0 && p < p0), mine = unsigned(p - p0) < unsigned(W);
    T l[W];
    Load8(other ? S + (lane + 32 * q) * ld + p0 : sc->zero, l);
    // a block row takes xs[p - p0] as y = 0 + 1 * xs[p - p0] (a select of xs by a runtime index
    // becomes a local-memory array)
#pragma unroll
    for (int m = 0; m < W; ++m) l[m] = p - p0 == m ? T(-1) : l[m];
    y[q] = mine ? T(0) : y[q];
#pragma unroll
    for (int m = 0; m < W; ++m) y[q] = fma(-l[m], xs[m], y[q]);
  }
}
template <typename T, int R, class SC>
__device__ __forceinline__ void LuTileSolve1(const int (&pos)[R], const T* S, int ld, SC* sc, int n,
                                             int lane, const T* __restrict__ b, T* __restrict__ x) {
  constexpr int W = kLuTileW;
  T y[R];
#pragma unroll
  for (int q = 0; q < R; ++q) y[q] = lane + 32 * q < n ? b[lane + 32 * q] : T(0);
  for (int p0 = 0; p0 < n; p0 += W) {
    T u[W][W], yb[W], xs[W];
    LuTileSolvePost<T, R>(pos, y, S, ld, sc, n, p0, u, yb);
#pragma unroll
    for (int i = 0; i < W; ++i) {
      T acc = yb[i];
#pragma unroll
      for (int m = 0; m < i; ++m) acc = fma(-u[i][m], xs[m], acc);
      xs[i] = p0 + i < n ? acc : T(0);
    }
    LuTileSolveTake<T, R, true>(pos, y, S, ld, sc, p0, lane, xs);
  }
  for (int p0 = (n - 1) / W * W; p0 >= 0; p0 -= W) {
    T u[W][W], yb[W], xs[W];
    LuTileSolvePost<T, R>(pos, y, S, ld, sc, n, p0, u, yb);
#pragma unroll
    for (int ii = 0; ii < W; ++ii) {
      const int i = W - 1 - ii;
      T acc = yb[i];
#pragma unroll
      for (int m = i + 1; m < W; ++m) acc = fma(-u[i][m], xs[m], acc);
      xs[i] = p0 + i < n ? acc / u[i][i] : T(0);
    }
    LuTileSolveTake<T, R, false>(pos, y, S, ld, sc, p0, lane, xs);
  }
#pragma unroll
  for (int q = 0; q < R; ++q)
    if (pos[q] >= 0) x[pos[q]] = y[q];
}

// SOLVE: kSolve (k = 1); else kFactor / kSlogdet. Separate kernels: the solve's 8 x 8 blocks in
// registers would otherwise set the factor's register budget, and with it the warps per SM.
template <typename T, int R, bool SOLVE>
__global__ void __launch_bounds__(32, tuning::LuTileMinBlocks<T>(R, SOLVE)) LuTileKernel(LuArgs<T> args, int out) {
  constexpr int W = kLuTileW;
  extern __shared__ __align__(16) unsigned char smraw[];
  using SC = LuTileKernelScratch<T, R>;
  auto* sc = reinterpret_cast<SC*>(smraw);
  T* S = reinterpret_cast<T*>(smraw + sizeof(SC));
  const int n = args.n, ld = LuTileLd<T>(n), lane = threadIdx.x, tiles = (n + W - 1) / W;
  const int64_t nn = int64_t(n) * n;
  // Once per block, ordered before their reads by the copy-in's __syncwarp: the zero row, and ublk
  // (the solve's last diagonal block reads rows beyond n it never posts; their values are unused).
  if (lane < W) sc->zero[lane] = T(0);
  for (int i = lane; i < W * W; i += 32) sc->ublk[i / W][i % W] = T(0);
  for (int64_t mat = blockIdx.x; mat < args.batch; mat += gridDim.x) {
    LuTileCopyIn(args.a + mat * nn, S, n, ld, lane);
    int pos[R];
#pragma unroll
    for (int q = 0; q < R; ++q) pos[q] = lane + 32 * q < n ? lane + 32 * q : -1;  // -1: no row
    for (int J = 0; J < tiles; ++J) {
      const int c0 = J * W;
      T x[R][W];
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const int r = lane + 32 * q;  // a lane without a row reads the zero row (not row 0: lane 0 writes it below)
        Load8(r < n ? S + r * ld + c0 : sc->zero, x[q]);
      }
      for (int p0 = 0; p0 < c0; p0 += W) LuTileBlockUpdate<T, R>(x, pos, S, ld, sc, p0, lane);
      LuTilePanel<T, R>(x, pos, sc, c0, n, lane);
#pragma unroll
      for (int q = 0; q < R; ++q)
        if (lane + 32 * q < n) Store8(S + (lane + 32 * q) * ld + c0, x[q]);
      __syncwarp();
    }
    const LuTileStats<T> st = LuTileStatsOf(S, ld, sc, n, lane, !SOLVE && out == int(LuOutput::kSlogdet));
    if constexpr (SOLVE) {
      LuTileSolve1<T, R>(pos, S, ld, sc, n, lane, args.b + mat * n, args.x + mat * n);
      if (lane == 0) args.info[mat] = st.info;
    } else if (out == int(LuOutput::kSlogdet)) {
      if (lane == 0) {
        args.sign[mat] = st.info ? T(0) : (st.odd ? T(-1) : T(1));
        args.logabsdet[mat] = st.info ? -LuInf<T>() : st.logs;
      }
    } else {
      LuTileCopyOut(S, sc->rowof, args.lu + mat * nn, n, ld, lane);
      for (int p = lane; p < n; p += 32) {
        args.pivots[mat * n + p] = sc->pivs[p];
        if (args.perm) args.perm[mat * n + p] = sc->rowof[p];
      }
      if (lane == 0) args.info[mat] = st.info;
    }
    __syncwarp();  // shared reads done before the next matrix is copied in
  }
}

// kFactor and kSlogdet for 1 <= n <= kLuTileMaxRows (one to three rows a lane), kSolve with k = 1
// for n <= 64.
template <typename T, int R, bool SOLVE>
cudaError_t LuTileLaunch(cudaStream_t stream, const LuArgs<T>& args, LuOutput out) {
  auto kern = LuTileKernel<T, R, SOLVE>;
  const size_t smem = LuTileSmemBytes<T, R>(args.n);
  if (smem > 48 * 1024) {  // f64 from n = 73 (three rows a lane)
    const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  kern<<<GridFor(args.batch), 32, smem, stream>>>(args, int(out));
  return cudaGetLastError();
}
template <typename T>
cudaError_t LuTileRun(cudaStream_t stream, const LuArgs<T>& args, LuOutput out) {
  const int n = args.n;
  const bool kind = out == LuOutput::kFactor || out == LuOutput::kSlogdet || (out == LuOutput::kSolve && args.k == 1);
  if (n < 1 || n > (out == LuOutput::kSolve ? 64 : kLuTileMaxRows) || !kind) return cudaErrorInvalidValue;
  static_assert(LuTileSmemBytes<double, 2>(64) <= 48 * 1024, "n <= 64 needs no opt-in shared memory");
  if (out == LuOutput::kSolve)
    return n <= 32 ? LuTileLaunch<T, 1, true>(stream, args, out) : LuTileLaunch<T, 2, true>(stream, args, out);
  return n <= 32 ? LuTileLaunch<T, 1, false>(stream, args, out)
                 : n <= 64 ? LuTileLaunch<T, 2, false>(stream, args, out) : LuTileLaunch<T, 3, false>(stream, args, out);
}

}  // namespace detail
}  // namespace batchla
