// Batched LU (getrf only), left-looking class: a block of 128 or 256 threads per matrix, n up to
// 512, on the structure of the Cholesky left class (cuda/potrf_left.cuh).
// Panel J (32 columns, all n rows in registers, each thread 8 columns x RQ rows) is formed from
// the input columns, gathered through the row permutation so far, and the columns of L already
// written back to the output, streamed in chunks of KC columns through shared memory (cp.async,
// double-buffered). Chunk c (columns kk..kk+KC) first finishes rows kk..kk+KC of the panel: warp 0
// solves them with the chunk's unit-lower diagonal block (they are U), then every row below gets
// X[r] -= L[r, kk:kk+KC] U[kk:kk+KC, :]. After the last chunk the rows J..n are the panel: it is
// factored on chip with partial pivoting (LuLeftPanel: LuPanel's getf2 with a rolled step loop), its row exchanges are
// applied to the columns of L left of it in global memory (LuColumnSwapSolve), and it is written
// once. So the trailing matrix is never read and rewritten per panel (the right-looking large
// class's traffic): A is read once, the output written once plus the row exchanges, and L read
// back ~n^3 / (3 KC) elements, read-only, mostly from L2.
// kSlogdet (args.logabsdet set) factors the same way into args.lu as scratch and writes sign and
// log|det| instead of pivots, perm and info: no second pass over the factors' diagonal. On the
// warp-panel bands (n <= 128) it keeps L there by input row, so no row exchange touches L
// (by_input_row below).
// Outputs and conventions: cuda/lu_blocked.cuh (LuPanel) and cuda/launch.h. Measurements:
// bench/NOTES.md, "getrf left-looking class".
#pragma once

#include "cuda/lu_blocked.cuh"
#include "cuda/lu_blocked_tile.cuh"
#include "cuda/left_chunks.cuh"

namespace batchla {
namespace detail {

// The panel of bands with at most kLuLeftWarpPanelRows rows is factored by ONE warp in the tile
// class's form (LuLeftWarpPanel), the bigger bands' by the whole block (LuLeftPanel). -D
// BATCHLA_LU_LEFT_WARP_PANEL=0: the block form everywhere (A/B builds only).
#ifndef BATCHLA_LU_LEFT_WARP_PANEL
#define BATCHLA_LU_LEFT_WARP_PANEL 1
#endif
// Panels of m <= 64 rows on 2 rows a lane instead of 4 (a second instantiation): f32 only (f32 n =
// 128 1107 -> 997 us, 96 1159 -> 1074; f64 n = 72 1352 -> 1735, 128 1022 -> 1035). -D
// BATCHLA_LU_LEFT_WARP_PANEL_SPLIT=0/1 sets both dtypes (A/B builds only).
template <typename T>
constexpr bool LuLeftWarpPanelSplit() {
#ifdef BATCHLA_LU_LEFT_WARP_PANEL_SPLIT
  return BATCHLA_LU_LEFT_WARP_PANEL_SPLIT;
#else
  return sizeof(T) == 4;
#endif
}
constexpr int kLuLeftWarpPanelRows = BATCHLA_LU_LEFT_WARP_PANEL ? 128 : 0;
// Which warps factor the warp-form panel of m rows, and how many rows a lane (cuda/lu_blocked_tile.cuh,
// LuTileSplit: rows split over NW warps, every barrier of the whole block), by dtype and band (RQ:
// row passes, 3: f64 n <= 96, 4: n <= 128). Measured (H200, check_lu_blocked time, against one
// warp; bench/NOTES.md, "Left class: the panel's rows split over the block's warps"): f64 n = 96
// slogdet 825 -> 742 us with a warp per 32 rows (four warps: 784), n = 100 / 112 / 128 1296 / 1112 /
// 925 -> 1205 / 1043 / 870 with four; f32 slower in every split form (0.84-0.98x): one warp.
// -D BATCHLA_LU_LEFT_PANEL_MODE sets every band (A/B builds).
enum LuLeftPanelMode : int {
  kPanelOneWarp = 0,    // warp 0, 2..4 rows a lane (the other warps wait at the barrier after it)
  kPanelFourWarps = 1,  // the 128-thread block's 4 warps, a row a lane
  kPanelRowWarps = 2,   // ceil(m / 32) warps, a row a lane (m <= 32: one warp, no barrier)
};
template <typename T, int RQ>
constexpr int LuLeftPanelModeOf() {
#ifdef BATCHLA_LU_LEFT_PANEL_MODE
  return BATCHLA_LU_LEFT_PANEL_MODE;
#else
  return sizeof(T) == 4 ? kPanelOneWarp : RQ == 3 ? kPanelRowWarps : kPanelFourWarps;
#endif
}
// The most warps any band's split uses (the scratch is sized for them; one warp: none).
template <typename T>
constexpr int LuLeftPanelMaxWarps() {
  return LuLeftPanelModeOf<T, 3>() == kPanelOneWarp && LuLeftPanelModeOf<T, 4>() == kPanelOneWarp ? 1 : 4;
}

// 1: the slogdet path above (bench/NOTES.md, "Left class: slogdet without row exchanges"); 0:
// the getrf path with the factors as scratch (A/B builds).
#ifndef BATCHLA_LU_LEFT_SLOGDET_BY_INPUT_ROW
#define BATCHLA_LU_LEFT_SLOGDET_BY_INPUT_ROW 1
#endif
constexpr bool kLuLeftSlogdetByInputRow = BATCHLA_LU_LEFT_SLOGDET_BY_INPUT_ROW != 0;
// 1: getrf keeps the factors by input row too (its U rows above each panel as well) and puts the
// rows in pivoted order once, after the last panel (LuLeftRowsToPositions); 0: the row exchanges
// applied to L after every panel (A/B builds).
#ifndef BATCHLA_LU_LEFT_GETRF_BY_INPUT_ROW
#define BATCHLA_LU_LEFT_GETRF_BY_INPUT_ROW 1
#endif
constexpr bool kLuLeftGetrfByInputRow = BATCHLA_LU_LEFT_GETRF_BY_INPUT_ROW != 0;

template <typename T, class C>
struct LuLeftScratch {
  alignas(16) T ut[kLuNB * C::kLds];  // the chunk's U rows transposed: ut[col * kLds + i] = U[kk + i][col]
  T ublk[C::kKC * C::kLdp];           // the same rows before the solve, row-major
  alignas(16) T prow1[kLuNB];         // panel step j: the pivot row's columns j + 1.. (then 0)
  T xrow[kLuNB];                      // the row it displaces, columns j..
  T pval;                             // the pivot
  int psrc, xsrc;
  LuShared<T> sh;                     // argmax keys, dlist / dcount, info
  LuTileScratch<T, 128> tile;         // the warp panel's blocks, row order and pivots (n <= 128 band)
  // its cross-warp posts (a split over NW <= LuLeftPanelMaxWarps warps uses the front of it)
  std::conditional_t<(LuLeftPanelMaxWarps<T>() > 1), LuTileSplitScratch<T, LuLeftPanelMaxWarps<T>()>, char> split;
};

// Row stride of the panel in shared memory: the warp form reads 8 columns of a row at a time
// (LuTileLd: 16-byte rows, an odd number of granules), the block form one column per thread (33).
template <typename T, class C, bool WARP>
__host__ __device__ constexpr int LuLeftPanelLd() { return WARP ? LuTileLd<T>(kLuNB) : C::kLdp; }

// Rows of one chunk buffer (the passes reach RoundUp(n, kPass) - 1; stale past n, never stored).
template <class C>
__host__ __device__ constexpr int LuLeftStageRows(int n) { return RoundUp(n, C::kPass); }
template <typename T, class C>
__host__ __device__ constexpr int LuLeftAreaElems(int n) {  // the chunk buffers, or the panel between products
  const int chunks = 2 * LuLeftStageRows<C>(n) * C::kLds, panel = n * LuLeftPanelLd<T, C, true>();
  return chunks > panel ? chunks : panel;
}
template <typename T, class C>
__host__ __device__ constexpr size_t LuLeftScratchOff(int n) { return RoundUp(LuLeftAreaElems<T, C>(n) * int(sizeof(T)), 16); }
template <typename T, class C>
__host__ __device__ constexpr size_t LuLeftIntOff(int n) { return LuLeftScratchOff<T, C>(n) + RoundUp(sizeof(LuLeftScratch<T, C>), 16); }
template <typename T, class C>
__host__ __device__ constexpr size_t LuLeftSmemBytes(int n) { return LuLeftIntOff<T, C>(n) + RoundUp(3 * n * 4, 16); }

// Stages L[r][kk, kk + KC) for kk <= r < n into S + r * kLds (absolute rows) and commits the group;
// with rowmap, L row rowmap[r] (L kept by input row).
template <typename T, class C>
__device__ __forceinline__ void LuLeftIssueChunk(const T* lm, int n, int kk, T* S, bool vec, int tid,
                                                 const int* rowmap) {
  if (rowmap) LeftIssueChunk<T, C, true>(lm, n, kk, n - kk, kk, S + kk * C::kLds, vec, tid, rowmap);
  else LeftIssueChunk<T, C>(lm, n, kk, n - kk, kk, S + kk * C::kLds, vec, tid);
}

// Warp 0: U rows kk..kk+KC of the panel = (unit lower L[kk:kk+KC, kk:kk+KC])^-1 ublk; lane = panel
// column. Writes them to ut (transposed, for the product) and, unless lm is null, to the output
// (rows < J, final; with rowmap, row kk + i to lm row rowmap[kk + i]).
template <typename T, class C>
__device__ __forceinline__ void LuLeftSolveBlock(const T* S, LuLeftScratch<T, C>* sc, T* lm, int n, int kk, int J,
                                                 int jw, int lane, const int* rowmap) {
  using V = Vec16<T>;
  using VT = typename V::type;
  constexpr int KC = C::kKC;
  T u[KC];
#pragma unroll
  for (int i = 0; i < KC; ++i) u[i] = sc->ublk[i * C::kLdp + lane];
  // row i: u[i] -= L[kk + i][kk + p] u[p], p < i; the row of L read 16 bytes at a time (broadcast)
#pragma unroll
  for (int i = 1; i < KC; ++i) {
    const T* lrow = S + (kk + i) * C::kLds;
#pragma unroll
    for (int p0 = 0; p0 < i; p0 += C::kV) {
      const VT w = *reinterpret_cast<const VT*>(lrow + p0);
#pragma unroll
      for (int v = 0; v < C::kV; ++v)
        if (p0 + v < i) u[i] = fma(-V::Get(w, v), u[p0 + v], u[i]);
    }
  }
#pragma unroll
  for (int i = 0; i < KC; i += C::kV) V::Store(sc->ut + lane * C::kLds + i, u + i);
  if (lm && lane < jw) {
#pragma unroll
    for (int i = 0; i < KC; ++i) lm[(rowmap ? rowmap[kk + i] : kk + i) * n + J + lane] = u[i];
  }
}

// getrf by input row, after the last panel: lu row p = stored row perm[p], 32 columns at a time
// through buf (the chunk buffers, >= n x 32 elements): every read of a column block lands before
// any write to it, so the permutation runs in place.
template <typename T, class C>
__device__ void LuLeftRowsToPositions(T* lm, int n, const int* perm, T* buf, int tid) {
  static_assert(2 * C::kLds >= kLuNB, "the two chunk buffers (2 x RoundUp(n, kPass) x kLds) hold n x 32");
  const int lane = tid & 31, warp = tid >> 5;
  for (int c0 = 0; c0 < n; c0 += kLuNB) {
    const bool live = c0 + lane < n;
    for (int p = warp; p < n; p += C::kNT / 32)
      if (live) CpAsync<int(sizeof(T))>(buf + p * kLuNB + lane, lm + perm[p] * n + c0 + lane);
    CpAsyncCommit();
    CpAsyncWait<0>();
    __syncthreads();
    for (int p = warp; p < n; p += C::kNT / 32)
      if (live) lm[p * n + c0 + lane] = buf[p * kLuNB + lane];
    __syncthreads();
  }
}

// getf2 on the panel P (m rows x w <= 32 columns, row stride ldp, shared memory), with the
// semantics of LuPanel (cuda/lu_blocked.cuh: LAPACK idamax pivots, zero pivots counted in
// sh->info, piv / rowsrc / dlist) but a rolled step loop: LuPanel's 32 unrolled steps do not fit
// the instruction cache, and with one or two blocks per SM the misses stalled every step
// (bench/NOTES.md, "getrf left-looking class"). Register indices stay static by rotation: at step j,
// slot c of a row holds column j + c; the update writes slot c from slot c + 1 (one FMA per slot,
// no moves), and each finished column leaves the registers for P (the multipliers of step j into
// column j, the pivot row into row j). A row exchange therefore also swaps the two rows' columns
// < j in P.
template <typename T, int R, int NT, class SC>
__device__ void LuLeftPanel(T* P, int ldp, int m, int w, int k, int* piv, int* rowsrc, SC* sc) {
  constexpr int NB = kLuNB, NW = NT / 32;
  using V = Vec16<T>;
  using VT = typename V::type;
  LuShared<T>* sh = &sc->sh;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
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
#pragma unroll 1
  for (int j = 0; j < w; ++j) {
    // 1. argmax of column j (slot 0) over rows r >= j
    T cj[R];
#pragma unroll
    for (int q = 0; q < R; ++q) cj[q] = row[q][0];
    const int p = LuBlockPivot<T, R, NT>(cj, j, m, sh);
    // 2. the owners publish the pivot row (shifted by one slot) and row j; slots picked by selects
    const int pt = p % NT, pq = p / NT, jt = j % NT, jq = j / NT;
    if (tid == pt) {
      sc->pval = LuPick(row, pq, 0);
#pragma unroll
      for (int c = 1; c < NB; ++c) sc->prow1[c - 1] = LuPick(row, pq, c);
      sc->prow1[NB - 1] = T(0);
      sc->psrc = LuPick(src, pq);
    }
    if (p != j && tid == jt) {
#pragma unroll
      for (int c = 0; c < NB; ++c) sc->xrow[c] = LuPick(row, jq, c);
      sc->xsrc = LuPick(src, jq);
    }
    if (tid == 0) piv[k + j] = k + p;
    __syncthreads();
    // 3. exchange, U row j and the exchanged rows' finished columns, multipliers, update + rotate
    const T pv = sc->pval;
    if (pv == T(0) && info == 0) info = k + j + 1;
    const bool tiny = !(fabs(pv) >= LuMinNormal<T>());  // LAPACK: divide instead of 1/pivot
    const T rp = T(1) / pv;
    if (p != j && tid == pt) {  // old row j moves to row p
      const int xs = sc->xsrc;
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const bool mine = pq == q;
#pragma unroll
        for (int c = 0; c < NB; ++c) row[q][c] = mine ? sc->xrow[c] : row[q][c];
        src[q] = mine ? xs : src[q];
      }
    }
    if (p != j && tid == jt) {  // the pivot row moves to row j (its registers are done)
      const int ps = sc->psrc;
#pragma unroll
      for (int q = 0; q < R; ++q) src[q] = jq == q ? ps : src[q];
    }
    if (warp == NW - 1) {
      if (j + lane < w) P[j * ldp + j + lane] = lane == 0 ? pv : sc->prow1[lane - 1];
      if (p != j && lane < j) {
        const T a = P[p * ldp + lane], b = P[j * ldp + lane];
        P[p * ldp + lane] = b;
        P[j * ldp + lane] = a;
      }
    }
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const int r = tid + q * NT;
      const bool act = r > j && r < m;
      T l = row[q][0];
      if (pv != T(0)) l = tiny ? l / pv : l * rp;
      if (act) P[r * ldp + j] = l;
      const T lf = act ? l : T(0);  // finished rows rotate too (their registers are dead)
#pragma unroll
      for (int c = 0; c < NB; c += V::kN) {
        const VT pr = *reinterpret_cast<const VT*>(sc->prow1 + c);
#pragma unroll
        for (int e = 0; e < V::kN; ++e)
          row[q][c + e] = fma(-lf, V::Get(pr, e), c + e + 1 < NB ? row[q][c + e + 1] : T(0));
      }
    }
  }
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int r = tid + q * NT;
    if (r < m) {
      rowsrc[r] = src[q];
      if (r >= w && src[q] != r) sh->dlist[atomicAdd(&sh->dcount, 1)] = r;
    }
  }
  if (tid == 0 && info != 0 && sh->info == 0) sh->info = info;
}

// getf2 on the panel P (m <= 32 RP NW rows x w <= 32 columns, row stride ld, shared memory) by NW
// warps (warp: this one's index among them), as the tile class factors a matrix
// (cuda/lu_blocked_tile.cuh): Crout in 8-column tiles, lane l of warp v holds rows l + 32 (v + NW
// q) of the current tile, rows never move (pos[q]: the row's position). One warp (NW = 1) runs a
// chain of shuffles and reductions instead of the block form's two barriers per column, while the
// other warps wait at the barrier after it: getrf n = 72..128 f32 12-24 % and f64 4-17 % faster
// (bench/NOTES.md, "Left class, warp panel"; the panel was still ~55 % of a block's time). With
// the rows split over NW > 1 warps (one row a lane) each step costs a barrier of all NB warps of
// the block (those without rows run LuLeftPanelIdle) and a shared-memory round trip, but a row's
// work a lane instead of 3-4 (bench/NOTES.md, "Left class: the panel's rows split over the
// block's warps"; LuLeftPanelModeOf).
// Leaves what the block form leaves, except that P keeps the input row order: rowsrc[p] = the
// panel row at position p (P row rowsrc[p] holds the factor's row p), piv, dlist / dcount, info.
// Returns the lane's slogdet sums over the panel's diagonal (warp 0, lane j: column j) when `det`,
// else zeros.
template <typename T, int RP, int NW, int NB, class SC>
__device__ LuDetSums<T> LuLeftWarpPanel(T* P, int ld, int m, int w, int k, int* piv, int* rowsrc, SC* sc, int lane,
                                        int warp, bool det) {
  constexpr int W = kLuTileW;
  auto* ts = &sc->tile;
  LuShared<T>* sh = &sc->sh;
  LuTileSplit<T, NW, NB> sp;
  if constexpr (NW > 1) {
    static_assert(sizeof(LuTileSplitScratch<T, NW>) <= sizeof(sc->split), "the split scratch holds NW warps' posts");
    sp.warp = warp, sp.xs = reinterpret_cast<LuTileSplitScratch<T, NW>*>(&sc->split);
  }
  int pos[RP];
#pragma unroll
  for (int q = 0; q < RP; ++q) pos[q] = sp.Row(lane, q) < m ? sp.Row(lane, q) : -1;  // -1: no row
  for (int c0 = 0; c0 < w; c0 += W) {
    T x[RP][W];
#pragma unroll
    for (int q = 0; q < RP; ++q) Load8(sp.Row(lane, q) < m ? P + sp.Row(lane, q) * ld + c0 : ts->zero, x[q]);
    for (int p0 = 0; p0 < c0; p0 += W) LuTileBlockUpdate<T, RP>(x, pos, P, ld, ts, p0, lane, sp);
    LuTilePanel<T, RP>(x, pos, ts, c0, w, lane, sp);
#pragma unroll
    for (int q = 0; q < RP; ++q)
      if (sp.Row(lane, q) < m) Store8(P + sp.Row(lane, q) * ld + c0, x[q]);
    __syncwarp();
  }
  sp.Sync();  // every warp's rows stored (warp 0 reads the diagonal below)
  int first_zero = INT_MAX;
  LuDetSums<T> sums;
  if (warp == 0) {
    for (int j = lane; j < w; j += 32) {
      piv[k + j] = k + ts->pivs[j];
      const T d = P[ts->rowof[j] * ld + j];
      if (d == T(0)) first_zero = j;  // LAPACK's info: an exact zero pivot
      if (det) sums.Add(d, ts->pivs[j] != j);
    }
  }
#pragma unroll
  for (int q = 0; q < RP; ++q) {
    const int r = sp.Row(lane, q), p = pos[q];
    if (p >= 0) {
      rowsrc[p] = r;
      if (p >= w && p != r) sh->dlist[atomicAdd(&sh->dcount, 1)] = p;  // a top row moved down to p
    }
  }
  if (warp == 0) {
    first_zero = int(__reduce_min_sync(0xffffffffu, unsigned(first_zero)));
    if (lane == 0 && first_zero != INT_MAX && sh->info == 0) sh->info = k + first_zero + 1;
  }
  return sums;
}

// A warp of the block without rows in a panel split over NW > 1 warps: the barriers of
// LuLeftWarpPanel (one a block update, one a column step, one at the end) and nothing else, so
// that every split synchronises the whole block (LuTileSplit).
template <typename T, int NB>
__device__ void LuLeftPanelIdle(int w) {
  using SP = LuTileSplit<T, 1, NB>;
  for (int c0 = 0; c0 < w; c0 += kLuTileW) {
    for (int p0 = 0; p0 < c0; p0 += kLuTileW) SP::Sync();
    for (int j = c0; j < w && j < c0 + kLuTileW; ++j) SP::Sync();
  }
  SP::Sync();
}

// C: LeftCfg (cuda/left_chunks.cuh). RQ: row passes per thread (n <= RQ kPass). R: panel rows per thread in LuPanel
// (n <= R NT). MINB: blocks per SM the register budget is sized for.
template <typename T, class C, int RQ, int R, int MINB>
__global__ void __launch_bounds__(C::kNT, MINB) LuLeftKernel(LuArgs<T> args, bool vec) {
  constexpr int NT = C::kNT, KC = C::kKC, LDP = C::kLdp;
  static_assert(LDP == kLuNB + 1 && kLuNB % KC == 0, "LuLeftKernel: chunks tile the 32-row U blocks");
  extern __shared__ __align__(16) unsigned char smraw[];
  const int n = args.n;
  const int sr = LuLeftStageRows<C>(n);
  T* const stage0 = reinterpret_cast<T*>(smraw);
  T* const stage1 = stage0 + sr * C::kLds;
  T* const pan = stage0;  // the panel (m x LDP) reuses the chunk buffers after the products
  auto* sc = reinterpret_cast<LuLeftScratch<T, C>*>(smraw + LuLeftScratchOff<T, C>(n));
  LuShared<T>* sh = &sc->sh;
  int* const perm = reinterpret_cast<int*>(smraw + LuLeftIntOff<T, C>(n));  // position -> input row
  int* const piv = perm + n;
  int* const rowsrc = piv + n;
  const int64_t nn = static_cast<int64_t>(n) * n;
  const int nend = RoundUp(n, C::kPass);
  constexpr bool kWarpPanel = RQ * C::kPass <= kLuLeftWarpPanelRows;
  constexpr int PLD = LuLeftPanelLd<T, C, kWarpPanel>();
  // On the warp panel the factors are kept by INPUT row: the panel writes row x of its input order
  // to lm row perm[J + x] and the chunks gather through perm, so no row exchange ever touches
  // L[:, 0:J]. kSlogdet stores no U row (none is read back; the panel sums the diagonal); getrf
  // stores U row p at perm[p] and puts every row in place after the last panel.
  const bool slogdet = args.logabsdet != nullptr;
  const bool by_input_row = kWarpPanel && (slogdet ? kLuLeftSlogdetByInputRow : kLuLeftGetrfByInputRow);
  if (threadIdx.x < kLuTileW) sc->tile.zero[threadIdx.x] = T(0);  // ordered by the first barrier
  for (int64_t mat = blockIdx.x; mat < args.batch; mat += gridDim.x) {
    const T* am = args.a + mat * nn;
    T* lm = args.lu + mat * nn;
    for (int i = threadIdx.x; i < n; i += NT) perm[i] = i;
    if (threadIdx.x == 0) sh->info = 0, sh->dcount = 0;
    LuDetSums<T> det_sums;  // kSlogdet with the warp panel: warp 0's lanes sum their panel columns
    __syncthreads();
    for (int J = 0; J < n; J += kLuNB) {
      // An opaque thread index per panel (as potrf_left.cuh: keeps ptxas from hoisting and
      // spilling the per-thread offsets).
      int tid = threadIdx.x;
      asm volatile("" : "+r"(tid));
      const int lane = tid & 31, warp = tid >> 5;
      const int rbase = (warp >> 2) * 32;
      const int rlast = nend - C::kPass + rbase + lane;  // the thread's row in pass 0 (the bottom)
      const int c0 = (warp & 3) * 8;
      const int m = n - J, jw = m < kLuNB ? m : kLuNB;
      // passes of this warp that hold a row >= lo (counted from the bottom, warp-uniform)
      auto live = [&](int lo) {
        const int q = (nend + rbase + 31 - lo) / C::kPass;
        return q < 0 ? 0 : q > RQ ? RQ : q;
      };
      // 0. acc = A[perm[r], J:J+jw] for every row r (the earlier exchanges applied by the gather)
      T acc[RQ][8];
      StaticFor<0, RQ>([&](auto Q) {
        constexpr int q = decltype(Q)::value;
        const int r = rlast - C::kPass * q;
        using V = Vec16<T>;
        if (r >= 0 && r < n) {
          const T* row = am + int64_t(perm[r]) * n + J + c0;
          if (vec && c0 + 8 <= jw) {
#pragma unroll
            for (int g = 0; g < 8; g += V::kN) {
              const typename V::type w = *reinterpret_cast<const typename V::type*>(row + g);
#pragma unroll
              for (int v = 0; v < V::kN; ++v) acc[q][g + v] = V::Get(w, v);
            }
          } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[q][e] = c0 + e < jw ? row[e] : T(0);
          }
        } else {
#pragma unroll
          for (int e = 0; e < 8; ++e) acc[q][e] = T(0);
        }
      });
      // 1. chunk c: rows kk..kk+KC become U (warp 0), then update every row below them
      const int chunks = J / KC;
      if (chunks > 0) LuLeftIssueChunk<T, C>(lm, n, 0, stage0, vec, tid, by_input_row ? perm : nullptr);
      for (int c = 0; c < chunks; ++c) {
        const int kk = c * KC;
        StaticFor<0, RQ>([&](auto Q) {  // the owners hand rows kk..kk+KC to warp 0
          constexpr int q = decltype(Q)::value;
          const int r = rlast - C::kPass * q;
          if (r >= kk && r < kk + KC) {
#pragma unroll
            for (int e = 0; e < 8; ++e) sc->ublk[(r - kk) * LDP + c0 + e] = acc[q][e];
          }
        });
        CpAsyncWait<0>();
        __syncthreads();  // chunk c landed; product c - 1 done (the other buffer and ut are free)
        if (c + 1 < chunks)
          LuLeftIssueChunk<T, C>(lm, n, kk + KC, (c & 1) ? stage0 : stage1, vec, tid, by_input_row ? perm : nullptr);
        const T* S = (c & 1) ? stage1 : stage0;
        if (warp == 0)
          LuLeftSolveBlock<T, C>(S, sc, by_input_row && slogdet ? nullptr : lm, n, kk, J, jw, lane,
                                 by_input_row ? perm : nullptr);
        __syncthreads();
        const int qn = live(kk + KC);
        StaticFor<1, RQ + 1>([&](auto Q) {
          if (qn == Q) LeftChunkProduct<T, C, decltype(Q)::value, RQ, -C::kPass, true>(S, rlast, sc->ut, c0, acc);
        });
      }
      __syncthreads();  // products done: the panel may overwrite the chunk buffers
      // 2. the panel (rows J..n) to shared memory and factored with partial pivoting (columns
      // jw..31 zero: the warp form reads whole 8-column tiles)
      StaticFor<0, RQ>([&](auto Q) {
        constexpr int q = decltype(Q)::value;
        const int r = rlast - C::kPass * q;
        if (r >= J && r < n) {
#pragma unroll
          for (int e = 0; e < 8; ++e)
            if (kWarpPanel || c0 + e < jw) pan[(r - J) * PLD + c0 + e] = c0 + e < jw ? acc[q][e] : T(0);
        }
      });
      __syncthreads();
      if constexpr (kWarpPanel) {
        constexpr int RP = RQ * C::kPass / 32;
        const bool det = args.logabsdet != nullptr;
        LuDetSums<T> s;
        // warps 0 .. NW - 1 factor it, RPL rows a lane; with NW > 1 the others keep the barrier
        // count (LuLeftPanelIdle), with NW = 1 they go on to the barrier below
        auto on = [&](auto rpl, auto nw) {
          constexpr int kRows = decltype(rpl)::value, kWarps = decltype(nw)::value, kBar = kWarps == 1 ? 1 : NT / 32;
          static_assert(kWarps <= NT / 32 && (kWarps == 1 || kWarps <= LuLeftPanelMaxWarps<T>()), "the block's warps");
          if (warp < kWarps)
            s = LuLeftWarpPanel<T, kRows, kWarps, kBar>(pan, PLD, m, jw, J, piv, rowsrc, sc, lane, warp, det);
          else if constexpr (kWarps > 1)
            LuLeftPanelIdle<T, kBar>(jw);
        };
        using I1 = std::integral_constant<int, 1>;
        using I2 = std::integral_constant<int, 2>;
        constexpr int mode = LuLeftPanelModeOf<T, RQ>();
        static_assert(mode == kPanelOneWarp || RQ * C::kPass <= 128, "the split modes take up to 4 x 32 rows");
        if constexpr (mode == kPanelFourWarps) {
          on(I1(), std::integral_constant<int, 4>());
        } else if constexpr (mode == kPanelRowWarps) {
          const int nw = (m + 31) / 32;
          if (nw == 1) on(I1(), I1());
          else if (nw == 2) on(I1(), I2());
          else if (nw == 3) on(I1(), std::integral_constant<int, 3>());
          else if constexpr (RQ * C::kPass > 96) on(I1(), std::integral_constant<int, 4>());
        } else if (LuLeftWarpPanelSplit<T>() && RP > 2 && m <= 64) {
          on(I2(), I1());
        } else {
          on(std::integral_constant<int, RP>(), I1());
        }
        det_sums.logs += s.logs, det_sums.cnt += s.cnt;
      } else {
        LuLeftPanel<T, R, NT>(pan, LDP, m, jw, J, piv, rowsrc, sc);
      }
      __syncthreads();
      // 3. new order of rows J..n; the exchanges applied to L[:, 0:J] (not by_input_row); the panel written
      int newperm[R];
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const int r = tid + q * NT;
        newperm[q] = r < m ? perm[J + rowsrc[r]] : 0;
      }
      if (by_input_row) {  // P row x (input order) is input row perm[J + x]: no exchanges in L
        if (lane < jw)
          for (int x = warp; x < m; x += NT / 32) lm[perm[J + x] * n + J + lane] = pan[x * PLD + lane];
      } else {
        for (int cc = tid; cc < J; cc += NT)
          LuColumnSwapSolve<T, false>(lm, n, J, jw, cc, rowsrc, sh, nullptr, 0, nullptr, 0);
        if (lane < jw)  // (the warp form left the panel's rows in place: row r of the factor is rowsrc[r])
          for (int r = warp; r < m; r += NT / 32)
            lm[(J + r) * n + J + lane] = pan[(kWarpPanel ? rowsrc[r] : r) * PLD + lane];
      }
      __syncthreads();
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const int r = tid + q * NT;
        if (r < m) perm[J + r] = newperm[q];
      }
      if (tid == 0) sh->dcount = 0;
      __syncthreads();  // perm and the output visible to the next panel's gather and cp.async
    }
    if (by_input_row && !slogdet) LuLeftRowsToPositions<T, C>(lm, n, perm, stage0, threadIdx.x);
    if (args.logabsdet) {  // kSlogdet: the factors were scratch (lm)
      if constexpr (kWarpPanel) {  // the panel warp's lanes hold the sums: reduce them there
        if (threadIdx.x < 32) {
#pragma unroll
          for (int o = 16; o > 0; o >>= 1) {
            det_sums.logs += ShflXor(det_sums.logs, o);
            det_sums.cnt += __shfl_xor_sync(0xffffffffu, det_sums.cnt, o);
          }
          if (threadIdx.x == 0) LuStoreSlogdet(det_sums.logs, det_sums.cnt, args.sign + mat, args.logabsdet + mat);
        }
      } else {  // U's diagonal is final in lm
        LuWriteSlogdet<T, NT>(lm, n + 1, piv, n, sh, args.sign + mat, args.logabsdet + mat);
      }
    } else {
      for (int i = threadIdx.x; i < n; i += NT) {
        args.pivots[mat * n + i] = piv[i];
        if (args.perm) args.perm[mat * n + i] = perm[i];
      }
      if (threadIdx.x == 0) args.info[mat] = sh->info;
    }
    __syncthreads();  // piv / perm / info read before the next matrix resets them
  }
}

template <typename T, class C, int RQ, int R, int MINB>
struct LuLeftGridTag {};

// Launches one configuration (the size bands: cuda/lu_blocked_left.cu).
template <typename T, class C, int RQ, int R, int MINB>
cudaError_t LuLeftLaunchCfg(cudaStream_t s, const LuArgs<T>& args) {
  auto kern = LuLeftKernel<T, C, RQ, R, MINB>;
  const int n = args.n;
  const size_t smem = LuLeftSmemBytes<T, C>(n);
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  unsigned grid = 0;
  e = PersistentGridKeyed<LuLeftGridTag<T, C, RQ, R, MINB>, C::kPass * RQ + 1>(kern, C::kNT, smem, args.batch, n,
                                                                                 &grid);
  if (e != cudaSuccess) return e;
  const bool vec = n % C::kV == 0 && reinterpret_cast<uintptr_t>(args.a) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(args.lu) % 16 == 0;
  kern<<<grid, C::kNT, smem, s>>>(args, vec);
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
