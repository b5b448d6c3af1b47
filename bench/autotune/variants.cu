// The whole search space of one (dtype, op) of the interleaved solvers, registered with the
// autotuner. Compiled once per pair and part (the unrolled padded kernels are slow to compile,
// so they are spread over parts that build in parallel): -DIL_DTYPE=float|double -DIL_OP=0..3
// (il::Op) -DIL_PART=0 (register, tile, runtime-n shared), 1 (pads <= 28), 2 (pads >= 32),
// 3 (lane groups), 4 (warp per matrix from shared memory).
#include <utility>

#include "bench/autotune/registry.h"
#include "cuda/interleaved.cuh"
#include "cuda/interleaved_block.cuh"
#include "cuda/interleaved_group.cuh"

namespace {

using namespace batchla::il;
using T = IL_DTYPE;
constexpr Op kOp = Op(IL_OP);
[[maybe_unused]] constexpr bool kFactors = kOp == Op::kPotrf || kOp == Op::kPosv;  // only these have loop orders

template <class Body>
cudaError_t LaunchBody(cudaStream_t stream, const void* args, int warps) {
  return Launch<T, Body>(stream, *static_cast<const Args<T>*>(args), warps);
}

template <class Body>
size_t SharedBytes(int n, int threads) {
  return SharedBytesOf<Body>::Get(n, threads);
}

template <class Body>
void Add(Kind kind, Order order, int nb, int n, int pad = 0, int alt = 0) {
  iltune::Registry().push_back({int(kOp), sizeof(T) == 4 ? 0 : 1, kind, order, nb, n, pad, alt,
                                reinterpret_cast<const void*>(KernelOf<T, Body>()), &SharedBytes<Body>,
                                &LaunchBody<Body>});
}

// Register variants past these n spill in every order (ptxas, H200 run of 2026-11-22): not built.
[[maybe_unused]] constexpr int kFullSearchMaxN = sizeof(T) == 4 ? 22 : 16;

template <int N>
void AddFull() {
  if constexpr (N <= kFullSearchMaxN) {
    Add<FullBody<T, kOp, N, Order::kRight>>(Kind::kFull, Order::kRight, 0, N);
    if constexpr (kFactors) {
      Add<FullBody<T, kOp, N, Order::kLeft>>(Kind::kFull, Order::kLeft, 0, N);
      Add<FullBody<T, kOp, N, Order::kTop>>(Kind::kFull, Order::kTop, 0, N);
    }
    AddFull<N + 1>();
  }
}

template <int I = 0>
void AddTiles() {
  if constexpr (I < int(sizeof(kTileSizes) / sizeof(kTileSizes[0]))) {
    constexpr int kNB = kTileSizes[I];
    Add<TileBody<T, kOp, kNB, Order::kLeft>>(Kind::kTile, Order::kLeft, kNB, 0);
    Add<SharedBody<T, kOp, kNB, Order::kLeft>>(Kind::kShared, Order::kLeft, kNB, 0);
    if constexpr (kFactors) {
      Add<TileBody<T, kOp, kNB, Order::kTop>>(Kind::kTile, Order::kTop, kNB, 0);
      Add<SharedBody<T, kOp, kNB, Order::kTop>>(Kind::kShared, Order::kTop, kNB, 0);
    }
    AddTiles<I + 1>();
  }
}

// Shared memory compiled for padded sizes: those above the register kind's reach that fit one
// warp's matrices in a block.
template <int I = 0>
void AddPadded() {
  constexpr int kCount = int(sizeof(kSharedPads) / sizeof(kSharedPads[0]));
  if constexpr (I < kCount) {
    constexpr int kPad = kSharedPads[I];
    constexpr bool kPart = IL_PART == (kPad <= 28 ? 1 : 2);
    constexpr bool kUseful = kPart && kPad > kFullSearchMaxN - 6 &&
                             32 * (kPad * (kPad + 1) / 2 + kPad) * sizeof(T) <= size_t(kSharedPortableBytes);
    if constexpr (kUseful) {
      Add<SharedBody<T, kOp, 4, Order::kLeft, kPad>>(Kind::kShared, Order::kLeft, 4, 0, kPad);
      Add<SharedBody<T, kOp, 8, Order::kLeft, kPad>>(Kind::kShared, Order::kLeft, 8, 0, kPad);
      if constexpr (kFactors) {
        Add<SharedBody<T, kOp, 4, Order::kTop, kPad>>(Kind::kShared, Order::kTop, 4, 0, kPad);
        Add<SharedBody<T, kOp, 8, Order::kTop, kPad>>(Kind::kShared, Order::kTop, 8, 0, kPad);
      }
    }
    AddPadded<I + 1>();
  }
}

// One group shape in one load form (alt, GroupLoad); posv also with and without its first rhs
// folded into the factor (order kRight / kLeft); the factoring ops also with the column broadcast
// through shared memory (kGroupBcast; -DIL_GROUP_BCAST=0 leaves those out).
// -DIL_GROUP_ALT_MASK: only the alts whose bit is set (an A/B of a few table rows' forms).
#ifndef IL_GROUP_BCAST
#define IL_GROUP_BCAST 1
#endif
#ifndef IL_GROUP_ALT_MASK
#define IL_GROUP_ALT_MASK 0xffff
#endif
template <int kLanes, int kPad, int kAlt>
void AddGroupAlt() {
  if constexpr ((IL_GROUP_ALT_MASK >> kAlt) & 1) {
    Add<GroupBody<T, kOp, kPad, kLanes, true, kAlt>>(Kind::kGroup, Order::kRight, kLanes, 0, kPad, kAlt);
    if constexpr (kOp == Op::kPosv)
      Add<GroupBody<T, kOp, kPad, kLanes, false, kAlt>>(Kind::kGroup, Order::kLeft, kLanes, 0, kPad, kAlt);
  }
}
template <int kLanes, int kPad, int kLoad>
void AddGroup() {
  AddGroupAlt<kLanes, kPad, kLoad>();
  if constexpr (IL_GROUP_BCAST && (kOp == Op::kPotrf || kOp == Op::kPosv))
    AddGroupAlt<kLanes, kPad, kLoad + kGroupBcast>();
}

// Lane groups: every (G, pad) shape GroupShapeBuilt admits, or (for a quick A/B built off the
// device) those within -DIL_GROUP_LANES_MIN/MAX and -DIL_GROUP_PAD_MIN/MAX.
#ifndef IL_GROUP_LANES_MIN
#define IL_GROUP_LANES_MIN 1
#endif
#ifndef IL_GROUP_LANES_MAX
#define IL_GROUP_LANES_MAX 32
#endif
#ifndef IL_GROUP_PAD_MIN
#define IL_GROUP_PAD_MIN 1
#endif
#ifndef IL_GROUP_PAD_MAX
#define IL_GROUP_PAD_MAX kTunedMaxN
#endif
#ifndef IL_GROUP_CAPPED_LANES  // the group size the capped staged forms are built for
#define IL_GROUP_CAPPED_LANES 4
#endif
// -DIL_GROUP_PAD_STEP: the pads tried come in this step (4: the table's pads until 2026-11-29 g);
// -DIL_GROUP_PARTIAL=1 also builds the shapes whose last row slot is partial (pad % G != 0).
#ifndef IL_GROUP_PAD_STEP
#define IL_GROUP_PAD_STEP 4
#endif
#ifndef IL_GROUP_PARTIAL
#define IL_GROUP_PARTIAL 0
#endif
constexpr int kGroupLaneCounts = int(sizeof(kGroupLanes) / sizeof(kGroupLanes[0]));
constexpr int kGroupPadCount = kTunedMaxN / IL_GROUP_PAD_STEP;
// posv's partial shapes that keep their last slot's E rows transposed (GroupTail): E Q elements a
// lane for them, not pad; the others keep ghost rows (GroupShapeBuilt's count).
constexpr bool ShapeBuilt(int g, int pad, int word_bytes) {
  if (kOp != Op::kPosv || !GroupTail(g, pad, word_bytes))
    return GroupShapeBuilt(g, pad, word_bytes);
  return pad >= kGroupMinPad && pad <= kTunedMaxN && GroupTailLaneElems(g, pad) * (word_bytes / 4) <= kGroupMaxRegs;
}
template <int I>
void AddGroupShape() {
  constexpr int kLanes = kGroupLanes[I / kGroupPadCount];
  constexpr int kPad = IL_GROUP_PAD_STEP * (I % kGroupPadCount + 1);
  if constexpr (ShapeBuilt(kLanes, kPad, int(sizeof(T))) && (IL_GROUP_PARTIAL || kPad % kLanes == 0) &&
                kLanes >= IL_GROUP_LANES_MIN && kLanes <= IL_GROUP_LANES_MAX && kPad >= IL_GROUP_PAD_MIN &&
                kPad <= IL_GROUP_PAD_MAX) {
    AddGroup<kLanes, kPad, kLoad64>();
    AddGroup<kLanes, kPad, kLoad32>();
    AddGroup<kLanes, kPad, kLoadStaged>();
    if constexpr (kLanes == IL_GROUP_CAPPED_LANES) {  // the capped staged forms: where staging won (2026-11-24)
      AddGroup<kLanes, kPad, kLoadStaged224>();
      AddGroup<kLanes, kPad, kLoadStaged200>();
      AddGroup<kLanes, kPad, kLoadStaged168>();
      AddGroup<kLanes, kPad, kLoadStaged152>();
      AddGroup<kLanes, kPad, kLoadStaged144>();
    }
  }
}
template <int... I>
void AddGroupShapes(std::integer_sequence<int, I...>) {  // a fold, not a recursion: 256 shapes at step 1
  (AddGroupShape<I>(), ...);
}
void AddGroups() { AddGroupShapes(std::make_integer_sequence<int, kGroupLaneCounts * kGroupPadCount>{}); }

// Warp per matrix: every padded size from kBlockMinPad, every form (BlockForm; the DMMA and
// right-looking forms for the factoring ops in double only, the register forms posv's).
// -DIL_BLOCK_ALT_MASK: only the forms whose bit is set (an A/B of a few forms).
#ifndef IL_BLOCK_ALT_MASK
#define IL_BLOCK_ALT_MASK 0xffff
#endif
template <int kPad, int kForm = 0>
void AddBlockForms() {
  if constexpr (kForm < kBlockForms) {
    if constexpr (BlockFormBuilt(kOp, kForm, int(sizeof(T)), kPad) && ((IL_BLOCK_ALT_MASK >> kForm) & 1))
      Add<BlockBody<T, kOp, kPad, kForm>>(Kind::kBlock, Order::kLeft, 8, 0, kPad, kForm);
    AddBlockForms<kPad, kForm + 1>();
  }
}
#ifndef IL_BLOCK_PAD_MIN  // as IL_GROUP_PAD_MIN, for the warp-per-matrix pads
#define IL_BLOCK_PAD_MIN 1
#endif
#ifndef IL_BLOCK_PAD_MAX
#define IL_BLOCK_PAD_MAX 1024
#endif
template <int kPad = kBlockMinPad>
void AddBlocks() {
  if constexpr (kPad <= kTunedMaxN) {
    if constexpr (kPad >= IL_BLOCK_PAD_MIN && kPad <= IL_BLOCK_PAD_MAX) AddBlockForms<kPad>();
    AddBlocks<kPad + 8>();
  }
}

// Only this part's kinds are instantiated (a runtime choice would compile every kind in every part).
bool RegisterPart() {
  if constexpr (IL_PART == 0) {
    AddFull<1>();
    AddTiles();
  } else if constexpr (IL_PART == 3) {
    AddGroups();
  } else if constexpr (IL_PART == 4) {
    AddBlocks();
  } else {
    AddPadded();
  }
  return true;
}
[[maybe_unused]] const bool registered = RegisterPart();

}  // namespace
