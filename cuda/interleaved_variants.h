// The kernel variants of the interleaved-layout solvers (issue 6): one description that the
// kernels (interleaved.cuh), the dispatch (interleaved_launch.cuh), the generated tuning table
// (interleaved_tuning.h) and the autotuner (bench/autotune_interleaved.*) all read, so no
// variant is spelled twice. Plain C++: the tuner's host code includes it too.
#pragma once

namespace batchla {
namespace il {

enum class Op : int { kPotrf = 0, kPotrs = 1, kPosv = 2, kTrsm = 3 };
constexpr int kNumOps = 4;

// kFull: template<int N>, the whole triangle in registers, every loop unrolled (small n only).
// kTile: template<int NB>, runtime n; NB x NB tiles in registers, the factor kept in global
//        memory (the output for potrf; for posv the library composes potrf + potrs instead) and
//        re-read from L1/L2.
// kShared: as kTile, but the thread's triangle is first staged into shared memory with cp.async
//        and factored/solved there in place: runtime n (pad 0), or compiled for a padded size
//        pad >= n (every loop unrolled, constant shared-memory offsets, one warp per block).
// kGroup: nb = G lanes share one matrix (rows dealt round-robin, the triangle in their registers,
//        shuffles within the group), compiled for the padded size pad (Q = ceil(pad / G) row
//        slots) and run for (Q - 1) G < n <= pad (GroupRuns; interleaved_group.cuh). Order
//        kRight: posv folds its first right-hand side into the factor; kLeft: it solves after
//        the factor (fewer registers).
// kBlock: one warp per matrix, a block's matrices staged in shared memory (every op;
//        interleaved_block.cuh), compiled for the padded size pad (a multiple of 8) and run for
//        pad - 8 < n <= pad; alt (BlockForm): registers capped or not, the update on DMMA (double,
//        the factoring ops), posv in registers, right-looking on DMMA (double, the factoring ops).
enum class Kind : int { kFull = 0, kTile = 1, kShared = 2, kGroup = 3, kBlock = 4 };

// The factorization's loop order (the solves have one order each):
// kRight: after each pivot update the whole trailing triangle (everything loaded up front);
// kLeft:  column (tile column) j is loaded, updated by the columns before it, then scaled;
// kTop:   row (tile row) i is loaded and solved against the rows above it.
// Tiled right-looking is not a variant: it rewrites the trailing matrix in global memory at
// every step (O(n^3 / NB) read-modify-writes), which the left/top orders never do.
enum class Order : int { kRight = 0, kLeft = 1, kTop = 2 };

struct Variant {
  Kind kind;
  Order order;
  int nb;     // tile size of kTile / kShared, lanes per matrix of kGroup (unused by kFull)
  int warps;  // warps per block
  int pad;    // kShared: the compile-time padded size (0: runtime n); kGroup: its padded size
  int alt = 0;  // kGroup: the form (interleaved_group.cuh, GroupLoad): 0 64-bit, 1 32-bit
                // offsets, 2 staged in shared memory, 3..7 staged under a register cap; + 8
                // (kGroupForms): the same with the factor's column through shared memory
};

// Largest n with a kFull variant in the library and in the tuner's search space.
constexpr int kMaxFullN = 24;
// Largest n the tuning table covers; larger n use kTileDefault.
constexpr int kTunedMaxN = 64;
// kShared configurations the tuner may pick: at most this much shared memory per block, the
// opt-in limit of sm_80, so the one table serves sm_80 and sm_90 alike.
constexpr int kSharedPortableBytes = 163 * 1024;
// Tile sizes the kTile and kShared variants come in.
constexpr int kTileSizes[] = {2, 4, 8};
// Padded sizes the compiled kShared variants come in (the tuner tries the smallest pad >= n).
constexpr int kSharedPads[] = {16, 20, 24, 28, 32, 40, 48};

// kGroup shapes: G lanes per matrix, padded size pad in Q = ceil(pad / G) row slots of G rows; the
// last slot may be partial (pad % G != 0: its lanes past pad hold rows that take no part), so a
// shape can be compiled for any n. Built for every pad in [kGroupMinPad, kTunedMaxN] whose lane
// triangle (the registers of a lane's rows) fits kGroupMaxRegs 32-bit registers (past that ptxas
// spills; the tuner prunes what still does).
constexpr int kGroupLanes[] = {4, 8, 16, 32};
constexpr int kGroupForms = 8;                 // load forms of kGroup (GroupLoad)
constexpr int kGroupLoads = 2 * kGroupForms;  // Variant::alt values: each form, then with kGroupBcast
constexpr int kGroupMinPad = 12;
constexpr int kGroupMaxRegs = 200;
constexpr int GroupSlots(int g, int pad) { return (pad + g - 1) / g; }
// The elements a lane keeps: slot q holds columns [0, min((q + 1) G, pad)).
constexpr int GroupLaneElems(int g, int pad) {
  const int q = GroupSlots(g, pad);
  return g * (q - 1) * q / 2 + pad;
}
constexpr bool GroupShapeBuilt(int g, int pad, int word_bytes) {
  return pad >= g && pad >= kGroupMinPad && pad <= kTunedMaxN &&
         GroupLaneElems(g, pad) * (word_bytes / 4) <= kGroupMaxRegs;
}
// Whether shape (g, pad) runs n: the rows past n (the padding, the identity) must all sit in the
// last slot, i.e. (Q - 1) G < n <= pad.
constexpr bool GroupRuns(int g, int pad, int n) { return (GroupSlots(g, pad) - 1) * g < n && n <= pad; }

// kBlock: the padded sizes built (multiples of 8), its forms (Variant::alt), and the padded size for n.
constexpr int kBlockMinPad = 16;
constexpr int kBlockForms = 8;  // BlockForm: capped or not; DMMA update, posv in registers, right-looking
constexpr int BlockPad(int n) { return (n + 7) / 8 * 8; }
// Warps per block (= matrices per wave): one 32 B sector per element of the wave.
constexpr int BlockWarps(int word_bytes) { return 32 / word_bytes; }
// Whether form `alt` exists for op at padded size pad: the DMMA forms (2, 3) and the
// right-looking forms (6, 7) factor, in double only; the register forms (4, 5) are posv's. Both
// register kinds from pad 24 (smaller matrices fit the lane groups, which measured faster up to
// pad 32).
constexpr int kBlockRegsMinPad = 24;
constexpr int kBlockFirstRegsForm = 4;   // BlockForm kBlockRegs (interleaved_block.cuh)
constexpr int kBlockFirstRightForm = 6;  // BlockForm kBlockRight
constexpr bool BlockFormBuilt(Op op, int alt, int word_bytes, int pad) {
  const bool factors = op == Op::kPotrf || op == Op::kPosv;
  if (alt >= kBlockFirstRightForm) return word_bytes == 8 && factors && pad >= kBlockRegsMinPad;
  if (alt >= kBlockFirstRegsForm) return op == Op::kPosv && pad >= kBlockRegsMinPad;
  return alt < 2 || (word_bytes == 8 && factors);
}

}  // namespace il
}  // namespace batchla

namespace batchla {
namespace il {

// Short spellings for the generated table (interleaved_tuning.h).
constexpr Variant Full(Order order, int warps) { return Variant{Kind::kFull, order, 0, warps, 0}; }
constexpr Variant Tile(int nb, Order order, int warps) { return Variant{Kind::kTile, order, nb, warps, 0}; }
constexpr Variant Shared(int nb, Order order, int warps) { return Variant{Kind::kShared, order, nb, warps, 0}; }
constexpr Variant SharedPad(int pad, int nb, Order order) {
  return Variant{Kind::kShared, order, nb, 1, pad};
}
constexpr Variant Group(int lanes, int pad, Order order, int warps, int alt) {
  return Variant{Kind::kGroup, order, lanes, warps, pad, alt};
}
constexpr Variant Block(int pad, int alt) { return Variant{Kind::kBlock, Order::kLeft, 8, 0, pad, alt}; }

}  // namespace il
}  // namespace batchla
