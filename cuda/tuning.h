// The ONE table of size thresholds for the batched kernels. Every number here is a crossover
// measured on the H200 (sm_90) and recorded, with the measurement that justifies it, in
// bench/NOTES.md (sections "potrf" and "posv"). Change a number only together with its note.
#pragma once

namespace batchla {
namespace tuning {

// A threshold tuned per scalar type; Of(f64) picks one. Overridden gives a benchmark variant's
// -D value (-1: none) to both types.
struct PerDtype {
  int f32, f64;
  constexpr int Of(bool is_f64) const { return is_f64 ? f64 : f32; }
};
constexpr PerDtype Overridden(int both, PerDtype tuned) { return both < 0 ? tuned : PerDtype{both, both}; }

// ---- potrf / posv size classes (bench/NOTES.md, "potrf") --------------------------------------
// tiny:   n <= kPotrfTinyMaxN      thread per matrix, template<int N>, matrix in registers
// small:  n <= kPotrfSmallMaxN     16- or 32-lane group per matrix, lane per row, template<int N>
// wide:   n <= kPotrfWideMaxN      64-thread block per matrix, lane per row, runtime n (N = 64)
// left:   potrf, PotrfLeftMinN<T>..512: left-looking 32-column panels from L read back via L2
// grid:   potrf, kPotrfGridMinN..PotrfGridMaxN<T> (below the left class): matrix in registers of
//         an 8 x 16 thread grid
// medium: n <= PotrfMediumMaxN<T>  block per matrix, whole matrix in shared memory, runtime n
// large:  otherwise (potrf n > 512) block per matrix, blocked right-looking in global memory
constexpr int kPotrfTinyMaxN = 8;
constexpr int kPotrfSmallMaxN = 32;  // must stay <= 32 (one lane per row)
constexpr int kPotrfWideMaxN = 64;   // must stay 64 (two warps, lane per row)
// Largest n whose padded matrix (n x (n|1)) plus the blocked kernel's scratch (~17 KB float64,
// ~8.5 KB float32) fits in the 227 KB (232,448 B) of shared memory of one block:
// 160 * 161 * 8 B = 206,080 B (float64); 232 * 233 * 4 B = 216,224 B (float32).
constexpr int kSmemMaxNF64 = 160;
constexpr int kSmemMaxNF32 = 232;
// grid (potrf only, not posv): kPotrfGridMinN <= n <= PotrfGridMaxN<T> (instantiated for 65..128),
// ahead of the medium class. Measured (bench/NOTES.md, "Grid class"): f32 n = 96 0.28 vs 0.17 of
// the roofline, n = 128 0.19 vs 0.18; f64 n = 96 0.27 vs 0.20, n = 128 0.10 vs 0.17 (one 4-warp
// block per SM: the medium class stays there). -D overrides are for benchmark variants only.
#ifdef BATCHLA_POTRF_GRID_MINN
constexpr int kPotrfGridMinN = BATCHLA_POTRF_GRID_MINN;
#else
constexpr int kPotrfGridMinN = 65;
#endif
#ifdef BATCHLA_POTRF_GRID_MAXN
constexpr int kPotrfGridMaxNF32 = BATCHLA_POTRF_GRID_MAXN;
constexpr int kPotrfGridMaxNF64 = BATCHLA_POTRF_GRID_MAXN;
#else
constexpr int kPotrfGridMaxNF32 = 128;
constexpr int kPotrfGridMaxNF64 = 96;
#endif
static_assert(kPotrfGridMinN > 64 && kPotrfGridMaxNF32 <= 128 && kPotrfGridMaxNF64 <= 128,
              "the grid class is instantiated for n = 65..128");
// left (potrf only, not posv): PotrfLeftMinN<T> <= n <= 512 (cuda/potrf_left.cuh), ahead of the
// grid, medium and large classes (bench/NOTES.md, "Left-looking class"). Measured against the grid
// class (its first version; symmetrize read): f32 n = 72 / 80 / 96 0.17 / 0.19 / 0.22 vs 0.21 /
// 0.24 / 0.28, so f32 keeps the grid class to 96; f64 n = 80 0.25 vs 0.26, 96 0.31 vs 0.27.
#ifdef BATCHLA_POTRF_LEFT_MINN
constexpr int kPotrfLeftMinNF32 = BATCHLA_POTRF_LEFT_MINN;
constexpr int kPotrfLeftMinNF64 = BATCHLA_POTRF_LEFT_MINN;
#else
constexpr int kPotrfLeftMinNF32 = 97;
constexpr int kPotrfLeftMinNF64 = 81;
#endif
static_assert(kPotrfLeftMinNF32 > 32 && kPotrfLeftMinNF64 > 32, "the left class needs n > 32");
// medium -> large crossover for potrf (the fused posv always uses the shared-memory path). With
// the left class on (the default) potrf reaches neither the grid class above PotrfLeftMinN<T> - 1
// nor the medium class at all (large only above 512); these limits still set the dispatch of the
// A/B build with the left class off (-DBATCHLA_POTRF_LEFT_MINN=100000, bench/potrf_left_device_run.sh).
constexpr int kPotrfMediumMaxNF64 = 160;
constexpr int kPotrfMediumMaxNF32 = 232;

// Threads per block of the tiny / small staging kernels and of the blocked kernels.
constexpr int kTinyThreads = 128;
constexpr int kSmallThreads = 128;
constexpr int kBlockedThreads = 256;  // 16 x 16, each thread a 4 x 4 tile of the trailing update
constexpr int kBlockedNB = 32;        // panel width (one warp factors the diagonal block)

// ---- trsm / potrs (bench/NOTES.md, "trsm" and "potrs") ----------------------------------------
// tiny:  k == 1 and n <= kTrsmTinyMaxNF32 / F64: thread per matrix, template<int N> (cuda/trsm_tiny.cuh),
//        persistent blocks, chunks double-buffered in shared memory (kTrsmTinyStageBytes per stage)
// small: n <= kTrsmSmallMaxN and one padded matrix + its rhs <= kTrsmSmallMaxMatrixBytes: chunk of
//        matrices staged in shared memory, n-lane group per (matrix, rhs column)
// tile:  otherwise, warp per (matrix, kTrsmTileCols rhs columns), A streamed in 32 x 32 tiles
// tiny -> small crossovers (also the largest N instantiated). Measured (run 4): tiny wins for every
// n <= 16 f32 (0.83-0.96 vs 0.37-0.66) and n <= 14 f64; f64 n = 15, 16 drop to 0.45 (one 70 KB stage
// pair per SM: a single warp) vs 0.9 for the group kernel. f32 17..20 fit 2 blocks/SM like f64 13/14.
// BATCHLA_TRSM_TINY_MAXN overrides both (benchmark variants only; 0 = no tiny class).
#ifdef BATCHLA_TRSM_TINY_MAXN
constexpr int kTrsmTinyMaxNF32 = BATCHLA_TRSM_TINY_MAXN;
constexpr int kTrsmTinyMaxNF64 = BATCHLA_TRSM_TINY_MAXN;
#else
constexpr int kTrsmTinyMaxNF32 = 20;
constexpr int kTrsmTinyMaxNF64 = 14;
#endif
constexpr int kTrsmTinyStageBytes = 24 * 1024;
constexpr int kTrsmSmallMaxN = 32;                  // must stay <= 32 (one lane per row)
constexpr int kTrsmSmallThreads = 128;
constexpr int kTrsmSmallChunkBytes = 20 * 1024;     // target shared memory per block (k = 1)
constexpr int kTrsmSmallMaxMatrixBytes = 48 * 1024; // per block, without the opt-in
// Tiles in flight per warp (ring depth; 2 when n <= 64). A lone warp is latency-bound per tile,
// so fewer stages = more warps per SM wins: 6/4 -> 3/2 took n = 64..256 from 0.6-0.8 to 1.2-1.4.
constexpr int kTrsmTileStagesF32 = 3;
constexpr int kTrsmTileStagesF64 = 2;
constexpr int kTrsmTileCols = 8;                    // rhs columns per warp when k > 1

// ---- LU family (bench/NOTES.md, "getrf small" and "getrf blocked") ---------------------------
// small:   n <= kLuSmallMaxN (cuda/lu_small*.cu), template<int N>: tiny (thread per matrix) up to
//          kLuTinyMaxN, then lane groups (lanes own rows of the unmoved matrix)
// blocked: otherwise (cuda/lu_blocked*.cu): getrf on the left-looking class from kLuLeftMinN
//          (below); warp class for n <= 64 (matrix in registers; f32 every output, f64 inverse and
//          gesv k <= 1: cuda/lu_blocked.cu LuWarpLu), medium (matrix in shared memory, every output
//          kind) while it fits, else large (global memory, factor only)
constexpr int kLuSmallMaxN = 32;  // must stay <= 32 (lanes own rows)
// -D overrides are for benchmark variants only.
// tiny (thread per matrix) for n <= kLuTinyMaxN, lane groups above. Measured (v2): tiny 0.7-0.94 of
// the roofline at n <= 8 for every output vs 0.4-0.75 (getrf) / 0.25-0.65 (others) for the group
// kernel at the same n.
#ifdef BATCHLA_LU_TINY_MAXN
constexpr int kLuTinyMaxN = BATCHLA_LU_TINY_MAXN;
#else
constexpr int kLuTinyMaxN = 8;
#endif
#ifdef BATCHLA_LU_SMALL_THREADS
constexpr int kLuSmallThreads = BATCHLA_LU_SMALL_THREADS;
#else
constexpr int kLuSmallThreads = 128;      // threads per block of the group kernel (256: same speed)
#endif
// Threads per block of v1 in float (n = 17..32 outside the wide form): 128, the group kernel's.
// 64 / 32 measured 0.83-1.04x / 0.47-0.86x (H100, bench/NOTES.md 2026-12-07): each block stages a
// chunk of >= 4 matrices, so smaller blocks run fewer warps a SM, not more. A/B knob:
// -DBATCHLA_LU_SMALL_V1_THREADS_F32=32 | 64.
#ifdef BATCHLA_LU_SMALL_V1_THREADS_F32
constexpr int kLuSmallV1ThreadsF32 = BATCHLA_LU_SMALL_V1_THREADS_F32;
#else
constexpr int kLuSmallV1ThreadsF32 = kLuSmallThreads;
#endif
static_assert(kLuSmallV1ThreadsF32 % 32 == 0 && kLuSmallV1ThreadsF32 >= 32, "v1 needs whole warps");
#ifdef BATCHLA_LU_SMALL_STAGE_BYTES
constexpr int kLuSmallStageBytes = BATCHLA_LU_SMALL_STAGE_BYTES;
#else
constexpr int kLuSmallStageBytes = 8192;  // ~bytes of matrices per stage (16 KB: same or worse)
#endif
// Group kernels of f64 n >= kLuSmallCapMinNF64 ask for 3 blocks per SM (__launch_bounds__: at most
// 168 registers): without it f64 n = 32 gesv k = 1 took 178 -> 2 blocks, 8 warps per SM (424 vs
// 304 us with the cap). Not below: there ptxas alone stays lower (f64 n = 18..22 gesv 128 registers
// vs 132-140 when asked for 3 blocks, 8 % slower; f32 n = 32 96 vs 109, getrf 8 % slower).
constexpr int kLuSmallCapMinNF64 = 25;
// Below that, f64 v1 (n = 17..24) asks for more blocks than ptxas' choice (gesv 150, getrf 154
// registers at n = 24: 3 blocks of 128 threads a SM), by output (LuOutput order: factor, solve,
// inverse, slogdet): getrf / slogdet 5 blocks (96 registers; spills of 4-28 B, 0.3-0.6 KB at
// n = 22..24), gesv 4 (128 registers, <= 24 B), the inverse none (at 96 registers it spilled 1.9 KB and ran 0.44-0.73x).
// Measured (H200, check_lu_small --timing-only, best of two rounds against ptxas' choice; bench/NOTES.md
// "LU small class: more blocks a SM"): gesv n = 23 / 24 1.10 / 1.13x (n = 17..22 1.00x: already
// <= 128 registers), getrf n = 17..22 1.01-1.08x, slogdet 1.06-1.11x (n = 24 1.19x). f32 gained
// nowhere (6 or 8 blocks: 0.8-1.05x, large spills at 8). BATCHLA_LU_SMALL_V1_F64_BLOCKS=0: none.
#ifndef BATCHLA_LU_SMALL_V1_F64_BLOCKS
#define BATCHLA_LU_SMALL_V1_F64_BLOCKS 1
#endif
// gesv k = 1 (the fold, one right-hand-side column at a time: kc == 1) asks for 5 blocks up to
// n = kLuSmallFoldFiveBlocksMaxNF64: measured against 4 (H100, bench/NOTES.md 2026-12-06 e) 1.02-1.10x
// at n = 17..23 (96 registers; spills of 8-48 B to n = 20, 0.3-0.5 KB at 21..23), 0.89x at n = 24.
// Checked on the device 2026-12-06 f (full check, sanitizers, tests/test_lu.py); library solve f64
// n = 17 / 18 348 / 355 -> 322 / 327 us (H100). A/B knob: -DBATCHLA_LU_FOLD_F64_5BLOCKS_MAXN=N (16: off).
#ifdef BATCHLA_LU_FOLD_F64_5BLOCKS_MAXN
constexpr int kLuSmallFoldFiveBlocksMaxNF64 = BATCHLA_LU_FOLD_F64_5BLOCKS_MAXN;
#else
constexpr int kLuSmallFoldFiveBlocksMaxNF64 = 23;
#endif
constexpr int LuSmallV1MinBlocksF64(int out, int n, int kc) {
  constexpr int kByOutput[4] = {5, 4, 0, 5};
  if (!BATCHLA_LU_SMALL_V1_F64_BLOCKS) return 0;
  return out == 1 /* the solve */ && kc == 1 && n <= kLuSmallFoldFiveBlocksMaxNF64 ? 5 : kByOutput[out];
}
// v1 (n = 17..32) update without the `if (eliminated)` branch (every lane runs the FMAs with l = 0
// for the other rows) for f32 and for f64 n >= this (bench/NOTES.md, "getrf small" v7: f64 n = 30..32
// getrf / gesv k = 1 / slogdet 3-11 % faster, n = 17..25 3-19 % slower; f32 -1..-12 % mostly).
constexpr int kLuSmallBranchFreeMinNF64 = 26;
constexpr int kLuSmallMaxStages = 40 * 1024;  // v2 group blocks shrink to keep both stages under this
// Group-kernel variant per size (bench/NOTES.md, "getrf small", v2):
//   v2 (n <= kLuSmallV2MaxN): R = 2 rows per lane (one pivot-row shuffle serves two rows), shuffle
//      argmax with a ballot fast path, argmax of step j+1 overlapped with step j's FMAs.
//      Beats v1 at n = 9..16 (f32 0.44-0.53 vs 0.28-0.39).
//   v1 (above): one row per lane, full-warp groups, redux argmax at the top of each step. At n >= 17
//      v2 measured slower (f32 0.24-0.33 vs 0.34-0.43, with shuffles 0.28 at n = 32, f64 0.16);
//      v2 with one row per lane did not unroll.
constexpr int kLuSmallV2MaxN = 16;  // >= 16: v1 needs full-warp groups (static_assert)
// v2 on groups of 8 lanes (four matrices a warp, ceil(n / 8) rows a lane) for float n = 17..this.
// Measured against v1 (H100, bench/NOTES.md 2026-12-06 d): n = 17..20 7-22 % faster (every
// output), 21..23 even, 24 13-23 % slower (shared memory leaves 10 warps a SM), 25..32 (four rows a
// lane, 6-8 warps a SM) 1.3-3.3x slower. A/B knob: -DBATCHLA_LU_V2_WIDE_MAXN=N.
#ifdef BATCHLA_LU_V2_WIDE_MAXN
constexpr int kLuSmallV2WideMaxN = BATCHLA_LU_V2_WIDE_MAXN;
#else
constexpr int kLuSmallV2WideMaxN = 20;
#endif
// v2 on groups of 16 lanes (two matrices a warp, two rows a lane) for float n = kLuSmallV2WideMaxN + 1
// ..this: the per-step argmax and pivot-row broadcast serve two matrices. Measured against v1 (H100,
// bench/NOTES.md 2026-12-06 f): 0.68-0.91x at n = 21..32 with 0.84-0.91x the instructions (a warp
// issues in order, so two matrices in one warp wait on each other's stalls; 2026-12-07 measured
// the same for v1 with two matrices a warp): off. A/B knob: -DBATCHLA_LU_V2_HALF_MAXN=N.
#ifdef BATCHLA_LU_V2_HALF_MAXN
constexpr int kLuSmallV2HalfMaxN = BATCHLA_LU_V2_HALF_MAXN;
#else
constexpr int kLuSmallV2HalfMaxN = kLuSmallV2WideMaxN;  // off
#endif
// Double: the inverse (Gauss-Jordan) only, n = 17..kLuSmallV2WideMaxNF64Inverse. Measured against v1
// (H100, bench/NOTES.md 2026-12-06 e): inverse n = 17 / 18 / 19 1.25 / 1.22 / 1.11x, n = 20 0.95x;
// getrf / gesv k = 1 / slogdet 0.95-1.06x at 17..19, 0.82-0.90x at 20 (8-10 warps a SM by
// registers). A/B knob for every output: -DBATCHLA_LU_V2_WIDE_MAXN_F64=N.
#ifdef BATCHLA_LU_V2_WIDE_MAXN_F64
constexpr int kLuSmallV2WideMaxNF64 = BATCHLA_LU_V2_WIDE_MAXN_F64;
constexpr int kLuSmallV2WideMaxNF64Inverse = BATCHLA_LU_V2_WIDE_MAXN_F64;
#else
constexpr int kLuSmallV2WideMaxNF64 = kLuSmallV2MaxN;  // off
constexpr int kLuSmallV2WideMaxNF64Inverse = 19;
#endif
// blocked classes (bench/NOTES.md, "getrf blocked"):
constexpr int kLuNB = 32;               // panel width (rows of a panel live in 32 registers)
constexpr int kLuMediumMaxNF64 = 160;   // matrix (n x (n|1)) + scratch fits 227 KB of shared memory
constexpr int kLuMediumMaxNF32 = 232;
constexpr int kLuLargeThreads = 256;    // large class: block per matrix
constexpr int kLuLargeRows = 2;         // panel rows per thread in the large class
constexpr int kLuLargeMaxN = kLuLargeThreads * kLuLargeRows;  // 512
constexpr int kLuLargeStrip = 256;      // U12 columns staged in shared memory per GEMM strip
// Medium blocks per SM (register budget, LuMediumRun in cuda/lu_blocked_medium.cuh): f32 8 / 3 / 1,
// f64 5 / 2 / 1 for n <= 64 / 128 / larger. getrf medium -> large crossover: the medium class
// while it fits (BATCHLA_LU_FACTOR_MEDIUM_MAXN_F32 / _F64 override it, cuda/lu_blocked.cu).
// (f64 n = 97..128 with 256 threads instead of 128, still one block per SM by shared memory:
// 3-5 % slower, bench/NOTES.md "Warp class v4".)
// warp class (n <= 64, cuda/lu_blocked_warp.cuh): global loads in flight per thread when a group
// stages its matrix. f32: 8 (f32 n = 64 check timing: gesv 852 vs 1574 us, inverse 955 vs 1656 us
// with 32); f64: 32 (faster than 8 for f64, bench/NOTES.md "getrf blocked", warp class).
template <typename T>
constexpr int LuWarpCopyLoads() { return sizeof(T) == 4 ? 8 : 32; }
// warp class at N = 128 (f32, n = 65..kLuWarpWideMaxNF32; bench/NOTES.md "Warp class at N = 128"):
// Gauss-Jordan outputs (inverse, gesv k <= 1) over the whole range (inverse n = 128 8.6 -> 1.75 ms,
// n = 96 4.4 -> 2.15 ms); LU outputs (getrf, slogdet) from kLuWarpWideLuMinN (getrf n = 128
// 2.16 -> 1.50 ms; at n = 96 v2 measured 2.22 ms vs the medium class's 2.16: medium).
#ifdef BATCHLA_LU_WARP_WIDE_MAXN
constexpr int kLuWarpWideMaxNF32 = BATCHLA_LU_WARP_WIDE_MAXN;
#else
constexpr int kLuWarpWideMaxNF32 = 128;
#endif
#ifdef BATCHLA_LU_WARP_WIDE_LU_MINN
constexpr int kLuWarpWideLuMinN = BATCHLA_LU_WARP_WIDE_LU_MINN;
#else
constexpr int kLuWarpWideLuMinN = 113;
#endif
// f64 at N = 128 (two threads per row, 8 warps per matrix, one matrix per SM; bench/NOTES.md "Warp
// class at f64 N = 128") up to kLuWarpWideMaxNF64, from these n per output (medium class below):
// inverse n = 128 6.48 -> 2.73 ms, 96 5.63 -> 3.55, 72 a tie; gesv k = 1 n = 128 3.13 -> 2.61, 96
// 2.01 -> 3.42 (crossover ~117, batch x n scaling); getrf / slogdet slower at every n (n = 128 2.77
// -> 3.19, 2.65 -> 3.41): off (> kLuWarpWideMaxNF64).
#ifdef BATCHLA_LU_WARP_WIDE_MAXN_F64
constexpr int kLuWarpWideMaxNF64 = BATCHLA_LU_WARP_WIDE_MAXN_F64;
#else
constexpr int kLuWarpWideMaxNF64 = 128;
#endif
constexpr int kLuWarpWideInvMinNF64 = 80;
constexpr int kLuWarpWideSolveMinNF64 = 120;
#ifdef BATCHLA_LU_WARP_WIDE_LU_MINN_F64
constexpr int kLuWarpWideLuMinNF64 = BATCHLA_LU_WARP_WIDE_LU_MINN_F64;
#else
constexpr int kLuWarpWideLuMinNF64 = 129;
#endif

// left-looking class (getrf only, cuda/lu_blocked_left.cuh; bench/NOTES.md "getrf left-looking
// class"): from these n up to kLuLeftMaxN, ahead of the warp / medium / large classes (faster at
// every n measured from 72: f32 72 1.76 vs 2.88 ms, 96 1.25 vs 2.13; f64 72 1.47 vs 2.36).
// BATCHLA_LU_LEFT_MINN overrides both (benchmark variants; > 512: off).
#ifndef BATCHLA_LU_LEFT_MINN
#define BATCHLA_LU_LEFT_MINN -1
#endif
constexpr PerDtype kLuLeftMinN = Overridden(BATCHLA_LU_LEFT_MINN, {65, 65});
constexpr int kLuLeftMaxN = 512;
// inverse as getrf (the tile class where it takes the factor, else the left class) + getri
// (cuda/lu_blocked_getri.cuh: U^-1 and L^-1 in shared memory, then their product; bench/NOTES.md
// "getri") from kLuGetriMinN to kLuGetriMaxN, ahead of the fused Gauss-Jordan kernels
// (LuGetriLaunch takes 64 < n <= 128). Measured with the left class's getrf (H100, check timings,
// inverse us, fused -> getri): f64 every n from 65 (65 5346 -> 2526, 96 3591 -> 1458, 128 2760 ->
// 1677); f32 (FMA form, no exact f32 tensor-core MMA) n = 73..96 (80 2539 -> 2345, 96 2193 -> 1847;
// 72 a tie, 65 3067 -> 3432, 104 2066 -> 2754, 128 1782 -> 1989). The tile class's getrf saves
// 0.4-0.8 ms of that at n = 65..96 (f32 72: 1368 -> 571 us), so f32 takes getri from 65 too.
// BATCHLA_LU_GETRI_MINN overrides both minimums (benchmark variants; > 128: off).
#ifndef BATCHLA_LU_GETRI_MINN
#define BATCHLA_LU_GETRI_MINN -1
#endif
constexpr PerDtype kLuGetriMinN = Overridden(BATCHLA_LU_GETRI_MINN, {65, 65});
constexpr PerDtype kLuGetriMaxN{96, 128};
// Where the left class factors, getrf + getrs (solve, inverse with n columns) from these n
// instead of the fused on-chip kernels (the Python lowerings ask LuFusedWins): f32 n = 128 getrf
// 1.09 ms vs fused gesv k = 1 1.62; f64 n = 128 0.99 vs 2.61. The inverse stays fused through
// n = 128 (the warp class's Gauss-Jordan; library bench, f64 n = 128: 2.77 ms fused vs 3.19 getrf +
// getrs with 128 columns; bench/NOTES.md, "getrf left-looking class"). slogdet is never composed:
// there the left class itself writes it (LuSlogdetOnLeft; the on-chip kernels took 1.50 / 2.68 ms at
// n = 128 against getrf's 1.09 / 0.99).
constexpr int kLuComposedMinNF32[4] = {0, 65, 129, 1 << 30};  // by LuOutput: -, solve, inverse, slogdet
constexpr int kLuComposedMinNF64[4] = {0, 65, 129, 1 << 30};

// tile class (cuda/lu_blocked_tile.cuh: a warp per matrix, the matrix in shared memory, left-looking
// in 8-column tiles; bench/NOTES.md "getrf tile class"): getrf, slogdet and gesv with one
// right-hand side, ahead of the small, warp and left classes: above kLuSmallMaxN for every n up to
// kLuTileMaxN* (the warp class is 1.8-3.4x slower at n = 40..64, H100 check timings), and at n <=
// kLuSmallMaxN for the n in kLuTileSmallNs* (bit n - 1, by LuOutput). There the tile class costs
// about the same per matrix for every n of a tile-column count while the small class grows with n,
// so each wins on its own n. Measured (H200, both classes at every n = 17..32, bench/NOTES.md "LU
// n = 17..32: the class chosen per n"), tile >= 3 % faster: f64 getrf n = 24 (347 -> 300 us) and
// 32 (319 -> 272), f64 slogdet 24 (321 -> 268), 31 and 32, f32 getrf 32 (321 -> 296); within 2 %:
// f64 getrf 31 (kept on the tile class) and f64 getrf / slogdet 30 (kept on the small class);
// gesv k = 1 and f32 slogdet: small at every n (tile 0.41-0.85x).
// BATCHLA_LU_TILE_MINN / _MAXN: benchmark variants (MINN: every n from there, every output).
template <typename... Ns>
constexpr unsigned LuNs(Ns... n) {
  return (0u | ... | (1u << (n - 1)));
}
constexpr unsigned LuNsFrom(int lo) {
  return lo > kLuSmallMaxN ? 0u : ~0u << (lo < 1 ? 0 : lo - 1);
}
#ifdef BATCHLA_LU_TILE_MINN
constexpr int kLuTileMinN = BATCHLA_LU_TILE_MINN;
constexpr unsigned kLuTileFromMinN = LuNsFrom(kLuTileMinN);
constexpr unsigned kLuTileSmallNsF32[4] = {kLuTileFromMinN, kLuTileFromMinN, 0, kLuTileFromMinN};
constexpr unsigned kLuTileSmallNsF64[4] = {kLuTileFromMinN, kLuTileFromMinN, 0, kLuTileFromMinN};
#else
constexpr int kLuTileMinN = kLuSmallMaxN + 1;
constexpr unsigned kLuTileSmallNsF32[4] = {LuNs(32), 0, 0, 0};  // by LuOutput: factor, solve, inverse, slogdet
constexpr unsigned kLuTileSmallNsF64[4] = {LuNs(24, 31, 32), 0, 0, LuNs(24, 31, 32)};
#endif
// Up to these n (by LuOutput): getrf and slogdet on three rows a lane from n = 65, ahead of the
// left class where it measured faster (H100, bench/NOTES.md "Tile class on three rows a lane"):
// f32 to 96 (getrf n = 72 1368 -> 571 us, 96 1004 -> 706); f64 getrf to 80 (72 1075 -> 712, 80
// 942 -> 758; 88 943 vs the left class's 903), f64 slogdet to 80 (H200, 2026-11-29 b, against the
// left class with its split panel and factors by input row: tile / left 640 / 749 us at 80, 901 /
// 692 at 84, 801 / 630 at 88; it had been 88). gesv k = 1 stays at 64: its composition getrf +
// getrs was not timed against the tile class past 64.
// -D BATCHLA_LU_TILE_MAXN caps every output (A/B builds; 0: off).
#ifdef BATCHLA_LU_TILE_MAXN
constexpr int kLuTileMaxNF32[4] = {BATCHLA_LU_TILE_MAXN, BATCHLA_LU_TILE_MAXN < 64 ? BATCHLA_LU_TILE_MAXN : 64, 0,
                                   BATCHLA_LU_TILE_MAXN};
constexpr int kLuTileMaxNF64[4] = {BATCHLA_LU_TILE_MAXN, BATCHLA_LU_TILE_MAXN < 64 ? BATCHLA_LU_TILE_MAXN : 64, 0,
                                   BATCHLA_LU_TILE_MAXN};
#else
constexpr int kLuTileMaxNF32[4] = {96, 64, 0, 96};
constexpr int kLuTileMaxNF64[4] = {80, 64, 0, 80};
#endif
// Tile kernel blocks (one warp, one matrix each) per SM for its register budget: about what shared
// memory allows at the largest n of each rows-per-lane instantiation (n <= 32: f32 4.6 KB, f64
// 8.7 KB a matrix, + 1.6 KB scratch; n <= 64: 17.4 / 33.8 KB); the solve kernel (8 x 8 blocks in
// registers) gets more registers where n <= 32. The f64 factor kernel at n <= 32 asks for the SM's
// 32 blocks (64 registers, 12 B of spill), more than n = 32's shared memory allows (~22), because
// its step chain wants every warp it can get at smaller n: measured against 20 (96 registers; H200,
// check_lu_blocked time, bench/NOTES.md "LU: the pivot's reciprocal ahead ... measured") getrf n =
// 24 299 -> 266 us, slogdet 268 -> 239, n = 31 / 32 1.02x; 28 blocks (72 registers) 270 / 242 at
// n = 24. BATCHLA_LU_TILE_MIN_BLOCKS_F64 overrides it (A/B builds).
#ifndef BATCHLA_LU_TILE_MIN_BLOCKS_F64
#define BATCHLA_LU_TILE_MIN_BLOCKS_F64 32
#endif
// The tile scratch without a separate solved block and, at one row a lane, with 32 positions
// (cuda/lu_blocked_tile.cuh, LuTileScratch): f64 n = 24 30 -> 32 blocks a SM, n = 31 / 32 21 / 20
// -> 22. Measured (H200, check_lu_blocked time, against 0; bench/NOTES.md "LU tile scratch"):
// getrf f64 n = 31 1.02x, 32 1.01x, 24 1.00x, f32 n = 64 1.03x (slogdet 1.04x), f64 n = 40 0.99x,
// the rest within 1 %. 0: the two blocks and 64 positions (A/B builds).
#ifndef BATCHLA_LU_TILE_COMPACT_SCRATCH
#define BATCHLA_LU_TILE_COMPACT_SCRATCH 1
#endif
template <typename T>
constexpr int LuTileMinBlocks(int rows_per_lane, bool solve) {
  if (rows_per_lane == 1) return sizeof(T) == 8 ? (solve ? 16 : BATCHLA_LU_TILE_MIN_BLOCKS_F64) : (solve ? 24 : 32);
  if (rows_per_lane == 2) return sizeof(T) == 8 ? 6 : 18;  // f32: 113 registers (at 12 ptxas took 140: n = 40 0.48 -> 0.56 ms)
  return sizeof(T) == 8 ? 4 : 8;  // n = 65..96: f32 n = 96 40 KB a matrix, f64 n = 72 44 KB
}

// ---- getrs (bench/NOTES.md, "getrs") ----------------------------------------------------------
// tiny / small / tile classes as trsm's (limits above); panel: a block of warps per matrix.
// small class sweep: GroupSweep (unrolled, pass at compile time) for float32, trsm's SweepGroup for
// float64 (run 2: f32 n = 20..28 0.45-0.52 vs 0.38-0.46; f64 n = 16..32 0.54-0.64 vs 0.67-0.74).
template <typename T>
constexpr bool GetrsSmallUnrolledSweep() { return sizeof(T) == 4; }
// tile -> panel (run 3, bench/NOTES.md, "getrs"). A tile item (matrix, column chunk) is one warp's
// serial chain; a panel item is 8 warps with a chain of one update + one diagonal sweep per step,
// but only 1-2 items per SM. So panel wins when the items do not fill the SMs with warps:
//   k == 1 and n >= kGetrsPanelMinN (256 MiB batches: n = 384 0.54 / 0.53 vs tile 0.48 / 0.35,
//   n = 512 0.68 / 0.68 vs 0.29 / 0.21 (f32 / f64); n = 256 tile 0.76 / 0.63 vs 0.45 / 0.46), or
//   n >= kGetrsPanelFewItemsMinN and items <= kGetrsPanelItemsPerSm * SMs (66 matrices: panel
//   1.4x / 2.2x / 3x faster at n = 128 / 256 / 384, a tie at 64). k = n with many items: tile
//   (n = 512: 0.15 vs panel 0.09; n = 64, 128: 0.12-0.13 vs 0.02-0.04).
constexpr int kGetrsPanelMinN = 384;
constexpr int kGetrsPanelFewItemsMinN = 128;
constexpr int kGetrsPanelItemsPerSm = 2;
constexpr int kGetrsPanelWarps = 8;       // warps per block of the panel class
// Update-tile ring depth per warp (f32: 2 blocks of 110 KB per SM; f64: 1 block of 209 KB; the
// launcher lowers it while the ring + rhs block exceed 227 KB).
constexpr int kGetrsPanelStagesF32 = 3;
constexpr int kGetrsPanelStagesF64 = 3;

// ---- QR family (cuda/qr_dispatch.h) ----------------------------------------------------------------
constexpr int kQrMaxM = 4096;      // QrSupported: n <= m <= kQrMaxM, n <= kQrMaxN
constexpr int kQrMaxN = 512;
constexpr int kQrSmallMaxM = 64;     // small class: a lane per column, m rows in registers
constexpr int kQrSmallMaxCols = 64;  // ... ncols <= 32 in a warp, up to 64 in a pair of warps
constexpr int kQrSmallThreads = 128;  // threads per block of the small class (cuda/qr_small.cuh)
// Padded row counts M >= this re-read the reflector from shared memory for the update pass
// instead of keeping it in registers (benchmark override: BATCHLA_QR_SMALL_RELOAD_MIN_M).
// Measured (check_qr_small, 256 MiB kR): re-reading from M = 16 gave f32 n = 16 / 32 0.36 / 0.22
// vs 0.37 / 0.24 keeping u in registers, f64 0.44 / 0.25 vs 0.46 / 0.25; so off (64 > any M).
// Blocks per SM the M = 64 small-QR kernels are compiled for (__launch_bounds__' second
// argument; benchmark override BATCHLA_QR_SMALL_M64_MIN_BLOCKS): 1 leaves ptxas up to 255
// registers (f64: ~230, no spills), 3 caps them at 168 (f64 then spills up to 44 B stores /
// 320 B loads). Measured (check_qr_small, 256 MiB, H200), f64 n = 64 kQr / kR: 283 / 351-368
// GB/s with 1, 389 / 382 with 3 (n = 48 kR 313 vs 403); f32 the same either way. So 3: the
// spills are outside the per-reflector loop's hot path and cost less than the lost occupancy.
#ifdef BATCHLA_QR_SMALL_M64_MIN_BLOCKS
constexpr int kQrSmallM64MinBlocks = BATCHLA_QR_SMALL_M64_MIN_BLOCKS;
#else
constexpr int kQrSmallM64MinBlocks = 3;
#endif
#ifdef BATCHLA_QR_SMALL_RELOAD_MIN_M
constexpr int kQrSmallReloadMinM = BATCHLA_QR_SMALL_RELOAD_MIN_M;
#else
constexpr int kQrSmallReloadMinM = 64;
#endif
// Padded row counts M >= this call dlarfg's rare (rescaling) branch out of line for the outputs
// that never show v (cuda/qr_small.cuh, QrSmallRescue); below it the branch is inlined. Measured
// (check_qr_small, 256 MiB kR, H100, 2026-11-27 h): out of line everywhere, M = 32 f32 / f64 0.546
// / 0.621 -> 0.470 / 0.423 ms (the kernels' code 161 / 256 -> 96 / 115 KB: instruction fetch), M =
// 16 0.300 / 0.284 -> 0.283 / 0.258, but M = 4 f32 0.208 -> 0.240 ms (the call's ABI: 48 -> 56
// registers, one block a SM fewer; its code is 21 KB either way). Override:
// BATCHLA_QR_SMALL_RESCUE_CALL_MIN_M.
#ifdef BATCHLA_QR_SMALL_RESCUE_CALL_MIN_M
constexpr int kQrSmallRescueCallMinM = BATCHLA_QR_SMALL_RESCUE_CALL_MIN_M;
#else
constexpr int kQrSmallRescueCallMinM = 16;
#endif
// Tile class (cuda/qr_tile.cuh): kR for kQrTileMinN <= n <= m <= kQrTileMaxM, a 2 x (L / 2) lane
// grid per matrix, L = kQrTileLanes lanes (32: a warp; 16: two matrices a warp). Measured (H100,
// check_qr_small --timing-only, kR, ms, best of two; bench/NOTES.md "QR tile class"), small class
// / tile L = 32 / tile L = 16: f32 n = 20 0.666 / 0.815 / 0.457, 24 0.515 / 0.616 / 0.366, 28 0.569 /
// 0.649 / 0.473, 32 0.471 / 0.514 / 0.397; f64 n = 20 0.536 / 0.627 / 0.394, 32 0.427 / 0.401 /
// 0.375. Below n = 17 (tile M = 16; H200, 2026-11-28 b, after the last-column fix): f32 n = 12 /
// 16 0.419 / 0.287 against the small class's 0.376 / 0.268, but f64 0.298 / 0.212 against 0.366
// / 0.250. With four matrices a warp at M = 16 / 20 (kQrTileLanesLow 8) and the M = 20 / 28
// instances (H200, 2026-11-28 c, bench/NOTES.md "QR tile: four matrices a warp"), small class ->
// tile, ms: f32 n = 12 0.376 -> 0.277, 16 0.270 -> 0.201, 20 0.355 -> 0.260, 28 0.396 -> 0.354;
// f64 12 0.301 -> 0.223, 16 0.213 -> 0.181, 20 0.328 -> 0.223, 28 0.391 -> 0.370; so both dtypes
// start at n = 9 (9..11 checked; n = 10 only timed in the library: f32 0.36, f64 0.46 of the
// roofline, the small class there not timed). Benchmark overrides: BATCHLA_QR_TILE_MINN
// (33: off), BATCHLA_QR_TILE_LANES, BATCHLA_QR_TILE_MIN_BLOCKS_F32 / _F64 (__launch_bounds__'
// second argument; 0 = ptxas' choice; f32 5 / f64 3 measured 1 % faster at f32 n = 20 / 24, 5-10 %
// slower at n = 28 / 32).
constexpr int kQrTileThreads = 128;
constexpr int kQrTileMaxM = 32;
#ifndef BATCHLA_QR_TILE_MINN
#define BATCHLA_QR_TILE_MINN -1
#endif
#ifndef BATCHLA_QR_TILE_LANES
#define BATCHLA_QR_TILE_LANES -1
#endif
#ifndef BATCHLA_QR_TILE_MIN_BLOCKS_F32
#define BATCHLA_QR_TILE_MIN_BLOCKS_F32 0
#endif
#ifndef BATCHLA_QR_TILE_MIN_BLOCKS_F64
#define BATCHLA_QR_TILE_MIN_BLOCKS_F64 0
#endif
constexpr PerDtype kQrTileMinN = Overridden(BATCHLA_QR_TILE_MINN, {9, 9});
constexpr PerDtype kQrTileLanes = Overridden(BATCHLA_QR_TILE_LANES, {16, 16});
// Lanes a matrix of the M = 16 and M = 20 instances; 8: four matrices a warp (2 x 4 grid).
#ifndef BATCHLA_QR_TILE_LANES_LOW
#define BATCHLA_QR_TILE_LANES_LOW -1
#endif
constexpr PerDtype kQrTileLanesLow = Overridden(BATCHLA_QR_TILE_LANES_LOW, {8, 8});
// M = 20 and 28 instances (rows padded to 20 / 28, not 24 / 32): n = 20 1.15x (f32) / 1.21x
// (f64), n = 28 1.09x / 1.05x on L = 16 alone (H200, 2026-11-28 c); 0: off.
#ifndef BATCHLA_QR_TILE_EXACT_M
#define BATCHLA_QR_TILE_EXACT_M 1
#endif
constexpr bool kQrTileExactM = BATCHLA_QR_TILE_EXACT_M != 0;
// An M = 12 instance for m = 9..12 (else padded to 16). Measured (H200, 2026-11-28 d, check_qr_small
// --timing-only, kR, ms; bench/NOTES.md "QR tile: M = 12, and 8 lanes at M = 28 — measured"): M = 16
// -> 12: f32 n = 10 0.350 -> 0.278, 12 0.281 -> 0.220; f64 10 0.269 -> 0.197, 12 0.225 -> 0.165.
// 0: off.
#ifndef BATCHLA_QR_TILE_M12
#define BATCHLA_QR_TILE_M12 1
#endif
constexpr bool kQrTileM12 = BATCHLA_QR_TILE_M12 != 0;
// Lanes a matrix of the M = 28 instance (8: four matrices a warp). Measured (H200, 2026-11-28 d,
// same A/B), L = 16 -> 8, kR n = 28: f64 0.363 -> 0.336 ms (1.08x, with ptxas' 196 B of spill),
// f32 0.355 -> 0.348 (1.02x, within the run's noise, under the 168-register cap below; without the
// cap 0.91x, 2026-11-28 c; 0.98x on the ftz / one-chain step); n = 24 / 32 slower on 8 lanes.
// With the bulk stage below (H100, 2026-12-07 d, check_qr_small --time-one 28 f32, two rounds
// alternating): f32 16 lanes unstaged 0.347 / 0.351 ms -> 8 lanes staged 0.321 / 0.329 (1.07x), so
// both dtypes on 8 lanes.
#ifndef BATCHLA_QR_TILE_LANES_M28
#define BATCHLA_QR_TILE_LANES_M28 -1
#endif
constexpr PerDtype kQrTileLanesM28 = Overridden(BATCHLA_QR_TILE_LANES_M28, {8, 8});
// __launch_bounds__' blocks a SM of the f32 M = 28 instance on 8 lanes (3: at most 168 registers;
// without it ptxas takes 189).
#ifndef BATCHLA_QR_TILE_M28_L8_MIN_BLOCKS_F32
#define BATCHLA_QR_TILE_M28_L8_MIN_BLOCKS_F32 3
#endif
constexpr int kQrTileM28L8MinBlocksF32 = BATCHLA_QR_TILE_M28_L8_MIN_BLOCKS_F32;
// Independent FMA chains of each dot product of a tile step (1, 2 or 4; the norm keeps 4): the NT
// column slots' dots already run side by side, and fewer chains save the FADDs that join them.
// Measured with kQrDlarfgFtz (H200, 2026-11-28 d, check_qr_small --timing-only, kR; bench/NOTES.md
// "QR tile: the step's instructions — measured"), over 4 chains without ftz: 4 / 2 / 1 chains f32
// n = 32 1.07x / 1.11x / 1.15x, 24 1.07 / 1.08 / 1.10x, 10 1.09 / 1.10 / 1.12x; f64 n = 28 1.04 /
// 1.05 / 1.08x, 32 1.00 / 0.98 / 1.02x.
#ifndef BATCHLA_QR_TILE_DOT_CHAINS
#define BATCHLA_QR_TILE_DOT_CHAINS 1
#endif
constexpr int kQrTileDotChains = BATCHLA_QR_TILE_DOT_CHAINS;
static_assert(kQrTileDotChains == 1 || kQrTileDotChains == 2 || kQrTileDotChains == 4, "1, 2 or 4");
// The same for the norm of a step's column (on the step's chain, the reflector waits for it).
// Measured 2 / 1 (H200, 2026-11-28 d, bench/NOTES.md "QR tile: the norm's chains"): 0.97-1.05x,
// inside the run's noise; 4 kept.
#ifndef BATCHLA_QR_TILE_NORM_CHAINS
#define BATCHLA_QR_TILE_NORM_CHAINS 4
#endif
constexpr int kQrTileNormChains = BATCHLA_QR_TILE_NORM_CHAINS;
static_assert(kQrTileNormChains == 1 || kQrTileNormChains == 2 || kQrTileNormChains == 4, "1, 2 or 4");
// dlarfg's usual case in the tile and panel QR classes on the .ftz rcp / rsqrt (cuda/qr_dlarfg.cuh;
// f32: no denormal fix-up around each MUFU, ~10 instructions a column fewer; its arguments are
// normal there). Measured (same A/B): tile f32 1.03-1.09x alone; panel f32 qr_r n = 72..160
// 1.01-1.02x (check_qr --time, 1.210 -> 1.194 ms at n = 128). 0: off.
#ifndef BATCHLA_QR_DLARFG_FTZ
#define BATCHLA_QR_DLARFG_FTZ 1
#endif
constexpr bool kQrDlarfgFtz = BATCHLA_QR_DLARFG_FTZ != 0;
constexpr PerDtype kQrTileMinBlocks{BATCHLA_QR_TILE_MIN_BLOCKS_F32, BATCHLA_QR_TILE_MIN_BLOCKS_F64};
// Tile instances with M >= this take each step's dots before its reflector (cuda/qr_tile.cuh; they
// overlap dlarfg's chain, at the cost of registers); 33: none. Measured (H200, 2026-11-28 e,
// check_qr_small --timing-only, kR; bench/NOTES.md "QR tile: the dots before the reflector"): f64
// M = 32 (2 warps a scheduler, latency-bound) 0.319 -> 0.296 ms; every other instance 0-13 %
// slower (f32 n = 28 0.323 -> 0.353, f64 n = 28 0.324 -> 0.341), so f64 M = 32 only.
#ifndef BATCHLA_QR_TILE_EARLY_DOTS_MIN_M
#define BATCHLA_QR_TILE_EARLY_DOTS_MIN_M -1
#endif
constexpr PerDtype kQrTileEarlyDotsMinM = Overridden(BATCHLA_QR_TILE_EARLY_DOTS_MIN_M, {33, 32});
// Tile instances with M >= this get a twin for matrices of exactly M x M, m and n folded (the
// launch picks it); 33: none. Measured (same call, "QR tile: an exact-square instance"): f64 M = 32
// with the early dots 0.301 -> 0.280 ms; elsewhere ptxas schedules the branch-free steps into
// more registers (f32 M = 32 127 -> 190), and capped at the old blocks a SM it spills: up to 24 %
// more time (f32 n = 28 0.329 -> 0.351, f64 n = 28 0.315 -> 0.390 ms).
#ifndef BATCHLA_QR_TILE_SQUARE_MIN_M
#define BATCHLA_QR_TILE_SQUARE_MIN_M -1
#endif
constexpr PerDtype kQrTileSquareMinM = Overridden(BATCHLA_QR_TILE_SQUARE_MIN_M, {33, 32});
// Tile instances with kQrTileBulkStageMinM <= M <= kQrTileBulkStageMaxM read each chunk of their
// block's matrices from a stage in shared memory that one bulk copy (sm_90) filled while the
// previous chunk was factored, instead of from global memory (cuda/qr_tile.cuh). It pays where an
// instance runs few warps a SM (8-12: f64 M = 28 / 32, f32 M = 28 on 8 lanes), not at 16. Measured
// (H100, 2026-12-07 d, check_qr_small --timing-only, kR, ms; bench/NOTES.md "QR tile: the next
// chunk staged by one bulk copy"): f64 n = 28 / 32 0.333 / 0.320 -> 0.290 / 0.278; f32 on 16
// lanes (16 warps) 0.93-1.07x, n = 28 / 32 0.98 / 0.96x; f32 n = 28 on 8 lanes (12 warps) above.
// Overrides: BATCHLA_QR_TILE_BULK_STAGE_MIN_M / _MAX_M (both dtypes; a minimum of 33: none).
#ifndef BATCHLA_QR_TILE_BULK_STAGE_MIN_M
#define BATCHLA_QR_TILE_BULK_STAGE_MIN_M -1
#endif
#ifndef BATCHLA_QR_TILE_BULK_STAGE_MAX_M
#define BATCHLA_QR_TILE_BULK_STAGE_MAX_M -1
#endif
constexpr PerDtype kQrTileBulkStageMinM = Overridden(BATCHLA_QR_TILE_BULK_STAGE_MIN_M, {28, 28});
constexpr PerDtype kQrTileBulkStageMaxM = Overridden(BATCHLA_QR_TILE_BULK_STAGE_MAX_M, {28, 32});
// QR engine panel widths (reflectors per compact-WY panel) of the block shapes that
// cuda/qr_engine_launch.cuh picks by height. Measured (H100, check_qr --time, 256 MiB, GB/s,
// bench/NOTES.md "engine panel widths"): medium (m <= 160) NB 4 / 8 / 16: qr_r f32 n = 128 172 /
// 135 / 62, n = 96 192 / 121 / 55 (f64 alike); tall f32 geqrf NB 8 / 16 / 32: n = 256 64.5 /
// 60.3 / 55.6, n = 512 22.0 / 33.1 / 39.1; tall f64 geqrf NB 8 / 16 / 32: n = 192 74.6 / 88.6 /
// 65.9, n = 256 54.7 / 85.5 / 59.3, n = 512 16.4 / 31.6 / 40.1. So matrices of more than
// kQrEngineHugeMinCols columns (m >= n > 256: the trailing update is wide) take the "huge" shape
// with 32, both dtypes. Benchmark overrides: BATCHLA_QR_MEDIUM_NB, BATCHLA_QR_TALL_NB_F32,
// BATCHLA_QR_TALL_NB_F64, BATCHLA_QR_HUGE_NB.
#ifdef BATCHLA_QR_MEDIUM_NB
constexpr int kQrEngineMediumNB = BATCHLA_QR_MEDIUM_NB;
#else
constexpr int kQrEngineMediumNB = 4;
#endif
#ifdef BATCHLA_QR_TALL_NB_F32
constexpr int kQrEngineTallNBF32 = BATCHLA_QR_TALL_NB_F32;
#else
constexpr int kQrEngineTallNBF32 = 8;
#endif
#ifdef BATCHLA_QR_TALL_NB_F64
constexpr int kQrEngineTallNBF64 = BATCHLA_QR_TALL_NB_F64;
#else
constexpr int kQrEngineTallNBF64 = 16;
#endif
#ifdef BATCHLA_QR_HUGE_NB
constexpr int kQrEngineHugeNB = BATCHLA_QR_HUGE_NB;
#else
constexpr int kQrEngineHugeNB = 32;
#endif
constexpr int kQrEngineHugeMinCols = 256;
// Panel class (cuda/qr_panel.cuh): kR and kGeqrf for kQrPanelMinM < m <= kQrPanelMaxM (the
// small class keeps m <= 64; kQrPanelCapM bounds the range: 5 panel rows a lane, the tau array).
// float64 starts later: its block is alone on a SM (a 128 x 128 matrix fills the shared memory)
// and the engine's medium shape is as fast up to m = 100 (H100, check_qr --time qr_r, ms engine /
// panel class v8: n = 97 2.95 / 3.01, 100 2.80 / 2.81, 104 2.75 / 2.65, 108 2.68 / 2.49, 112
// 2.76 / 2.40); float32 wins from m = 65 (n = 72 3.17 / 1.64 ms). bench/NOTES.md "Panel class".
// Benchmark overrides: BATCHLA_QR_PANEL_MINM (both types), BATCHLA_QR_PANEL_MAXM (0: off).
constexpr int kQrPanelCapM = 160;
#ifndef BATCHLA_QR_PANEL_MINM
#define BATCHLA_QR_PANEL_MINM -1
#endif
constexpr PerDtype kQrPanelMinM = Overridden(BATCHLA_QR_PANEL_MINM, {64, 100});
#ifdef BATCHLA_QR_PANEL_MAXM
constexpr int kQrPanelMaxM = BATCHLA_QR_PANEL_MAXM;
#else
constexpr int kQrPanelMaxM = 160;
#endif
static_assert(kQrPanelMaxM <= kQrPanelCapM, "panel class range");
// Columns per lane of the small QR class for M <= 32 (warp units; lstsq and M = 64 keep one):
// a lane owning two adjacent columns shares the per-reflector overhead (the dlarfg branch, the
// slot store, the sync, the u loads) between twice the work, and puts twice the matrices in a
// warp. It pays where that overhead dominates and registers stay low: float32 R / geqrf for
// M <= 16 (H100, check_qr_small, 256 MiB, kR fraction of 4.2 TB/s: n = 2 0.37 -> 0.48, 4 0.43 ->
// 0.61, 12 0.26 -> 0.33, 16 0.37 -> 0.43; geqrf n = 16 0.35 -> 0.40). It loses for Q formation
// (f32 qr n = 8 0.51 -> 0.40), for float64 (n = 4 0.64 -> 0.38, 16 0.45 -> 0.42) and at M = 32
// (152 registers: 12 warps a SM instead of 20; f32 n = 32 0.24 -> 0.20, capped at 128 registers
// it spills: 0.16). bench/NOTES.md, "two columns per lane". Benchmark override:
// BATCHLA_QR_SMALL_CPL (1 or 2 for every M and output).
constexpr int QrSmallColumnsPerLane(bool f64, int m_padded, bool forms_q) {
#ifdef BATCHLA_QR_SMALL_CPL
  return (void)f64, (void)m_padded, (void)forms_q, BATCHLA_QR_SMALL_CPL;
#else
  return !f64 && m_padded <= 16 && !forms_q ? 2 : 1;
#endif
}

}  // namespace tuning
}  // namespace batchla
