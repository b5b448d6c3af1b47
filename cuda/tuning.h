// The ONE table of size thresholds for the batched kernels. Every number here is a crossover
// measured on the H200 (sm_90) and recorded, with the measurement that justifies it, in
// bench/NOTES.md (sections "potrf" and "posv"). Change a number only together with its note.
#pragma once

namespace batchla {
namespace tuning {

// ---- potrf / posv size classes (bench/NOTES.md, "potrf") --------------------------------------
// tiny:   n <= kPotrfTinyMaxN      thread per matrix, template<int N>, matrix in registers
// small:  n <= kPotrfSmallMaxN     16- or 32-lane group per matrix, lane per row, template<int N>
// wide:   n <= kPotrfWideMaxN      64-thread block per matrix, lane per row, runtime n (N = 64)
// medium: n <= PotrfMediumMaxN<T>  block per matrix, whole matrix in shared memory, runtime n
// large:  otherwise                block per matrix, blocked right-looking in global memory
constexpr int kPotrfTinyMaxN = 8;
constexpr int kPotrfSmallMaxN = 32;  // must stay <= 32 (one lane per row)
constexpr int kPotrfWideMaxN = 64;   // must stay 64 (two warps, lane per row)
// Largest n whose padded matrix (n x (n|1)) plus the blocked kernel's scratch (~17 KB float64,
// ~8.5 KB float32) fits in the 227 KB (232,448 B) of shared memory of one block:
// 160 * 161 * 8 B = 206,080 B (float64); 232 * 233 * 4 B = 216,224 B (float32).
constexpr int kSmemMaxNF64 = 160;
constexpr int kSmemMaxNF32 = 232;
// medium -> large crossover for potrf (the fused posv always uses the shared-memory path).
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

// ---- LU family (bench/NOTES.md, "getrf") -------------------------------------------------------
// small:   n <= kLuSmallMaxN: lanes per matrix, lane per row, template<int N> (cuda/lu_small*.cu)
// blocked: otherwise (cuda/lu_blocked*.cu): matrix in shared memory while it fits (every output
//          kind), else blocked in global memory (factor only)
constexpr int kLuSmallMaxN = 32;  // must stay <= 32 (one lane per row)

}  // namespace tuning
}  // namespace batchla
