// Interleaved-layout Cholesky solvers, G LANES PER MATRIX (Kind::kGroup; issue 6, n ~ 15..64).
//
// One thread per matrix (interleaved.cuh) runs out of registers past n ~ 20 and becomes a long
// serial chain with few warps per SM. Here G consecutive lanes share one matrix, so a warp holds
// 32 / G consecutive matrices of a chunk: every load or store instruction touches G rows of those
// matrices, and each row is 32 / G consecutive words (a whole 32 B sector for f32 G = 4, f64
// G = 4). Row i belongs to lane i % G of the group, as its row q = i / G; the lane keeps columns
// [0, (q + 1) G) of it, so every register index is a compile-time constant whichever lane it is
// (entries right of the diagonal are never read as results).
//
// Compiled for a padded size NP in Q = ceil(NP / G) row slots (every loop unrolled) and run for
// any n in ((Q - 1) G, NP]: rows and columns n..NP-1 are the identity, which the factorization and
// the solves keep exact (pivots 1, zero off-diagonal), so no step tests n. Where G does not divide
// NP the last slot is partial, so a shape can be compiled for any n (NP - n steps and columns fewer
// than the next multiple of G): posv keeps that slot's E real rows transposed across the group
// where GroupTail says so (the tail, kTail below); otherwise the slot's lanes past row NP - 1 hold
// a zero row with no column of its own ("ghost" rows: never a pivot, their y and x stay 0).
//
// The triangle reaches the registers in one of the forms of GroupLoad: each lane loads its rows
// from global memory (il::Kernel), or staged: each warp copies its next wave of matrices into a
// stage in shared memory with cp.async while it factors the current one (RunStaged, in
// il::StagedKernel, optionally under a register cap for more resident warps). At each factor
// step the lanes need column k of their matrix from the lanes that own its rows: by shuffles
// (NP - k - 1 a step), or, in the broadcast forms (Variant::alt + kGroupBcast), through a buffer
// of the warp in shared memory, a 16-byte granule of the column per load.
#pragma once

#include <cstdint>
#include <type_traits>
#include <cuda_runtime.h>

#include "cuda/interleaved.cuh"

#ifndef BATCHLA_IL_GROUP_F64_RSQRT
#define BATCHLA_IL_GROUP_F64_RSQRT 1
#endif

// The broadcast column's granules as one ld.shared each (Vec16::LoadSharedWhole) instead of plain
// loads: 0 never; 1 in the uncapped broadcast forms of groups of 8, float at every pad and double
// to pad 32 (GroupBody::kWholeLoads); 2 in every broadcast form (A/Bs). Measured (bench/NOTES.md
// "Lane-group broadcast loads kept whole" and "... in the library"): groups of 8 uncapped 2-5 %
// faster at f32 n = 41 / 44 / 50 and f64 n = 28 / 29, 16 % at f32 n = 52, even elsewhere; f64
// n = 35 (pad 35) 7 % slower, hence the pad limit; groups of 4 uncapped even; capped alt 15 3-4 %
// faster, alt 13 (f32 n = 23..28) 1-3 % slower.
#ifndef BATCHLA_IL_BCAST_WHOLE_LOADS
#define BATCHLA_IL_BCAST_WHOLE_LOADS 1
#endif

// 1: the uncapped staged forms of the factoring ops in float issue the next wave's copies a row
// slot at a time across the factor's first steps (StageHook) instead of all at once before it,
// where the burst filled the load queue. Measured (bench/NOTES.md "Lane groups: the next wave's
// copies spread over the factor"): f32 posv pad 32 3-9 % faster, the capped forms 10-20 % slower,
// double ~1 % slower; so only those forms take it.
#ifndef BATCHLA_IL_SPREAD_COPIES
#define BATCHLA_IL_SPREAD_COPIES 1
#endif

// 1: groups of 8 space their matrices' broadcast columns 2 mod 8 granules apart (GroupBody::
// kBcastStride), which removes the stores' bank conflicts; 0: an odd number, as groups of 4.
// Measured (bench/NOTES.md "Lane groups of 8: the broadcast column's store conflicts"): 0-1 %
// faster at f64 pads 28 / 32 and f32 pads 40..52, under what a rebuilt table would be worth: off.
#ifndef BATCHLA_IL_BCAST_STRIDE2
#define BATCHLA_IL_BCAST_STRIDE2 0
#endif

// 1: the staged forms use what their launch guarantees (Fits): the chunk's offsets fit 32 bits,
// and only the last row slot holds padding rows (NP - G < n). Each copy's source is then one
// 32-bit multiply-add and one wide add (the 64-bit form spent ~9 integer instructions a copy,
// ~7 % of the f64 NP = 32 G = 8 kernel's instructions), and the fill of the other slots needs no
// padding selects.
#ifndef BATCHLA_IL_STAGE_LEAN
#define BATCHLA_IL_STAGE_LEAN 1
#endif

// 1: posv factors A = L D Lᵀ with a unit L (no square roots) instead of L Lᵀ: each step
// broadcasts column k UNSCALED, so its stores and loads (or shuffles) no longer wait for the
// pivot's reciprocal; the rows scale their own entry by 1 / d_k, and the solves divide by D once.
// Same info (the first d_k not > 0), so the same NaN results; potrf keeps L Lᵀ (its output).
#ifndef BATCHLA_IL_GROUP_LDL
#define BATCHLA_IL_GROUP_LDL 1
#endif

// 1: the broadcast forms of float groups of 8 solve Lᵀ x = y in blocks of G rows (BackwardBlocked):
// one reduce-scatter a block and a short chain per row inside it, instead of a G-lane butterfly on
// every row's chain. 2: double's groups of 8 too (for A/Bs: f64 pad 32 spills 40-100 B with it).
#ifndef BATCHLA_IL_GROUP_BLOCKED_BACKWARD
#define BATCHLA_IL_GROUP_BLOCKED_BACKWARD 1
#endif

// 1: posv with a partial last row slot keeps that slot's rows transposed across the group (the
// tail, GroupBody::kTail) where GroupTail says so, instead of in one lane each beside G - E idle
// ghost rows. 0: ghost rows always; 2: the tail for every partial shape (both for A/Bs; potrf,
// potrs and trsm always use ghost rows).
#ifndef BATCHLA_IL_GROUP_TAIL
#define BATCHLA_IL_GROUP_TAIL 1
#endif

// 1: the tail keeps its entries in the main columns unscaled (a = L d) and the solves multiply by
// the column's 1 / d, instead of the owner of column k storing L(kNM + e, k) at every step (E
// selects a step, on every lane). A/B: bench/NOTES.md "the tail unscaled".
#ifndef BATCHLA_IL_TAIL_UNSCALED
#define BATCHLA_IL_TAIL_UNSCALED 1
#endif

namespace batchla {
namespace il {

// Whether posv's shape (G, NP) keeps its partial last slot transposed (GroupBody::kTail). Measured
// (bench/NOTES.md "Lane groups: the transposed tail"): it wins where at most a quarter of the
// slot's lanes hold real rows (E <= G / 4: the ghost rows waste three quarters of the slot or
// more), is even at E = 2 of 4 and loses 5-25 % from E = 3 (E shuffles and selects a step); and
// it fits registers where the ghost rows would not (f64 G 4 pads 25, 26).
constexpr bool GroupTail(int g, int pad, int word_bytes) {
  const int e = pad % g;
  if (BATCHLA_IL_GROUP_TAIL != 1) return BATCHLA_IL_GROUP_TAIL == 2 && e != 0;
  return e != 0 && (4 * e <= g || GroupLaneElems(g, pad) * (word_bytes / 4) > kGroupMaxRegs);
}
// The elements a lane keeps where the tail is transposed: the full slots' triangle, and E per slot
// for the tail (GroupLaneElems counts the ghost-row layout).
constexpr int GroupTailLaneElems(int g, int pad) {
  const int q = GroupSlots(g, pad);
  return g * (q - 1) * q / 2 + pad % g * q;
}

// 1 / d for the L D Lᵀ pivots: no range-check branch on the chain (ApproxRcp); a positive
// subnormal d, which f64's .ftz reciprocal would flush, takes IEEE division instead. A d that is
// not > 0 sets info, as RsqrtPivot does.
template <typename T>
__device__ __forceinline__ T LdlPivot(T d, int index, int& info) {
  if (!(d > T(0)) && info == 0) info = index + 1;
  T dinv = detail::ApproxRcp(d);
  if constexpr (std::is_same_v<T, double>)
    if (d > 0.0 && d < Scalar<double>::kMinNormal) dinv = 1.0 / d;
  return dinv;
}

// The forms of a group variant (Variant::alt): how the triangle reaches the registers and, for the
// staged forms, a register cap (fewer registers, more resident warps: the staged kernel is
// latency-bound at 8 warps / SM, bench/NOTES.md).
enum GroupLoad : int {
  kLoad64 = 0,         // LoadTriangle64: 64-bit addresses, any chunk
  kLoad32 = 1,         // LoadTriangle32: 32-bit offsets within a chunk
  kLoadStaged = 2,     // the warp's matrices staged in shared memory with cp.async (RunStaged)
  kLoadStaged224 = 3,  // as kLoadStaged, at most 224 registers (9 warps / SM)
  kLoadStaged200 = 4,  // 200 registers (10 warps / SM)
  kLoadStaged168 = 5,  // 168 registers (12 warps / SM)
  kLoadStaged152 = 6,  // 152 registers (13 warps / SM)
  kLoadStaged144 = 7,  // 144 registers (14 warps / SM)
};
// Variant::alt = a GroupLoad, plus kGroupBcast where the factor's column reaches the group through
// shared memory instead of shuffles (GroupBody::kBcast; which wins depends on the shape).
constexpr int kGroupBcast = kGroupForms;
constexpr int GroupForm(int alt) { return alt % kGroupForms; }
constexpr bool GroupBcast(int alt) { return alt >= kGroupBcast; }
constexpr int GroupMaxRegs(int alt) {
  constexpr int kCaps[] = {255, 255, 255, 224, 200, 168, 152, 144};  // by GroupLoad
  static_assert(sizeof(kCaps) / sizeof(kCaps[0]) == kGroupForms, "a cap for every GroupLoad");
  return kCaps[GroupForm(alt)];
}

// FOLD (posv only; the variant's order kRight): the first right-hand side is eliminated inside
// the factor, off the solve's dependency chain, at the price of kQ registers live throughout.
// LOAD: the form (Variant::alt): how the triangle reaches the registers (GroupLoad), and kGroupBcast.
template <typename T, Op OP, int NP, int G, bool FOLD = true, int LOAD = kLoad64>
struct GroupBody {
  static_assert(32 % G == 0 && NP >= G, "a group divides the warp");
  static constexpr bool OFF32 = GroupForm(LOAD) == kLoad32;
  static constexpr bool kStaged = GroupForm(LOAD) >= kLoadStaged;
  static constexpr int kMaxRegs = GroupMaxRegs(LOAD);  // il::StagedKernel's cap
  static constexpr int kThreadsPerMatrix = G;
  static constexpr int kQ = GroupSlots(G, NP);  // rows per lane (row slots)
  static constexpr int kRows = kQ * G;         // rows NP.. kRows - 1: the ghost rows of a partial last slot
  // The tail (posv, L D Lᵀ, a partial last slot): its E = NP % G rows kNM + e are kept TRANSPOSED:
  // lane sub holds A(kNM + e, t G + sub) in x[e][t], for t < kQM the columns of its own main rows
  // (so a step's update of the tail needs no exchange: a(t G + sub, k) is the lane's own), for
  // t = kQM column kNM + sub of the tail's own block (used for sub <= e). Each lane then pays
  // ~E (kNM - k) / G FMAs a step for the tail, where the ghost-row form pays NP - k in every lane
  // of the last slot, and keeps E (kQM + 1) registers for it instead of NP. After the factor the
  // main columns hold L(kNM + e, j) d_j (kTailUnscaled; the solves scale them by the lane's own
  // 1 / d_j), the tail block L. The tail's y (then x) and 1 / d are kept by every lane alike. The
  // other rows: kQM full slots, kNM = kQM G.
  static constexpr int kE = NP % G;
  static constexpr bool kTail = BATCHLA_IL_GROUP_LDL && OP == Op::kPosv && GroupTail(G, NP, int(sizeof(T)));
  static constexpr bool kTailUnscaled = BATCHLA_IL_TAIL_UNSCALED;
  static constexpr int kQM = kTail ? kQ - 1 : kQ;   // row slots kept row-wise
  static constexpr int kNM = kTail ? kQM * G : NP;  // their rows and columns
  struct Tail {  // one dummy element where !kTail (never read, so never allocated)
    T x[kTail ? kE : 1][kQM + 1];
    T y[kTail ? kE : 1];  // the tail rows' y, then x
    T r[kTail ? kE : 1];  // 1 / d of the tail's pivots
  };
  static constexpr unsigned kAll = 0xffffffffu;  // every lane runs the body (il::Kernel)
  static constexpr int kMats = 32 / G;  // matrices per warp
  static constexpr bool kStageLean = BATCHLA_IL_STAGE_LEAN && kStaged;

  // Whether a launch fits the variant (else the launcher runs the kLoad64 form): OFF32 needs the
  // offsets within one chunk below 2^31; staging copies whole 16-byte granules of the warp's
  // kMats consecutive matrices, so a chunk must hold whole warps and the buffers be aligned, and
  // it reads one triangle only (no symmetrize).
  static bool ChunkOffsetsFit32(const Args<T>& g) { return int64_t(g.n) * g.n * g.c < (int64_t(1) << 31); }
  static bool Fits(const Args<T>& g) {
    if (OFF32) return ChunkOffsetsFit32(g);
    if (kStaged)
      return g.c % kMats == 0 && g.mode != kSymmetrize && reinterpret_cast<uintptr_t>(g.a) % 16 == 0 &&
             reinterpret_cast<uintptr_t>(g.b) % 16 == 0 &&
             (!kStageLean || (GroupRuns(G, NP, g.n) && ChunkOffsetsFit32(g)));
    return true;
  }

  // Whether the shape holds an n x n matrix at all (the launcher checks; the table gives each n a
  // shape that runs it, GroupRuns, and only the lean staged forms need the padding in the last slot).
  static bool Holds(int n) { return n >= 1 && n <= NP; }

  // Element (row q of this lane, column s) is kept for s < kCols(q).
  static constexpr int kCols(int q) { return (q + 1) * G < NP ? (q + 1) * G : NP; }

  // Entry (i, s) of the padded triangle from the value v read for it: the identity past n (and
  // trsm's unit diagonal), zero right of the diagonal.
  static __device__ __forceinline__ T Padded(T v, int i, int s, int n, bool unit) {
    const bool real = i < n;
    return (s == i && (unit || !real)) ? T(1) : (s <= i && real) ? v : T(0);
  }

  // The tail's entries (Tail) through load(ir, sc), the element (ir, sc) of an always valid pair
  // (row clamped to n - 1, column to the row's diagonal), as the row-wise loads do.
  template <class Load>
  static __device__ __forceinline__ void FillTail(Tail& tl, int sub, int n, const Load& load) {
    if constexpr (kTail) {
#pragma unroll
      for (int e = 0; e < kE; ++e) {
        const int i = kNM + e, ir = i < n ? i : n - 1;
#pragma unroll
        for (int t = 0; t <= kQM; ++t) {
          const int s = t * G + sub;
          tl.x[e][t] = Padded(load(ir, s < ir ? s : ir), i, s, n, false);
        }
      }
    }
  }

  // The lower triangle of the padded matrix: a's (i, s) for s <= i < n, identity past n.
  // Branch-free: every element is one load from a clamped, always valid address (row n - 1,
  // column min(s, i): L1 hits) and a select. (Predicated loads compiled to one branch each, and
  // a predicated-off consumer, symmetrize's add, still waited for its load: every load became
  // a full memory round trip in the first version.) Two forms, the tuner picks per n (alt):
  // alt 0: 64-bit addresses, every element clamped and tested against the diagonal;
  // alt 1: 32-bit offsets within the chunk (a launch whose n^2 c reaches 2^31 runs alt 0
  //   instead: Fits) and no clamp or test left of the lane's block: ~15 % fewer instructions and fewer registers,
  //   but ptxas then sinks many loads into the factor next to their first use (SASS), which
  //   puts memory latency on the factor's chain: faster at some n, slower at others.
  template <bool SYM>
  static __device__ __forceinline__ void LoadTriangle32(T (&l)[kQM][kNM], const T* p, int rs, int cs, int sub,
                                                        int n, bool unit) {
#pragma unroll
    for (int q = 0; q < kQM; ++q) {
      const int i = q * G + sub;
      const bool real = i < n;
      const int ir = real ? i : n - 1;
      const int row = ir * rs, col = ir * cs;  // (ir, s) at p[row + s cs]; (s, ir) at p[col + s rs]
#pragma unroll
      for (int s = 0; s < kCols(q); ++s) {
        // Columns left of the lane's block are left of the diagonal (ir >= q G, also for the
        // padding rows, which all sit in the last block): no clamp, no diagonal test. Entries
        // right of the diagonal keep whatever was loaded: nothing reads them as a result.
        const bool left = s < q * G;
        const int sc = left || s < ir ? s : ir;
        T v = __ldg(p + (row + sc * cs));
        if constexpr (SYM) v = (v + __ldg(p + (col + sc * rs))) * T(0.5);
        l[q][s] = left ? (real ? v : T(0)) : (s == i && (unit || !real)) ? T(1) : (real ? v : T(0));
      }
    }
  }

  template <bool SYM>
  static __device__ __forceinline__ void LoadTriangle64(T (&l)[kQM][kNM], const T* p, int64_t rs, int64_t cs,
                                                        int sub, int n, bool unit) {
#pragma unroll
    for (int q = 0; q < kQM; ++q) {
      const int i = q * G + sub;
      const bool real = i < n;
      const int ir = real ? i : n - 1;
      const T* row = p + ir * rs;  // (ir, s) at row + s * cs; (s, ir) at col + s * rs
      const T* col = p + ir * cs;
#pragma unroll
      for (int s = 0; s < kCols(q); ++s) {
        const int sc = s < ir ? s : ir;
        T v = __ldg(row + sc * cs);
        if constexpr (SYM) v = (v + __ldg(col + sc * rs)) * T(0.5);
        l[q][s] = Padded(v, i, s, n, unit);
      }
    }
  }

  // posv's factor is L D Lᵀ (BATCHLA_IL_GROUP_LDL): rinv / InvDiag then hold 1 / d_k, L is unit.
  static constexpr bool kLdl = BATCHLA_IL_GROUP_LDL && OP == Op::kPosv;

  // Step k's pivot (RsqrtPivot). BATCHLA_IL_GROUP_F64_RSQRT=0: double through IEEE sqrt and a
  // divide (il::Pivot), as before 2026-11-28 i, for A/Bs.
  static __device__ __forceinline__ void StepPivot(T& d, T& r, int k, int& info) {
    if constexpr (std::is_same_v<T, double> && !BATCHLA_IL_GROUP_F64_RSQRT) Pivot(d, r, k, info);
    else RsqrtPivot(d, r, k, info);
  }

  // One column step of y := L⁻¹ y: x_k (known to every lane) becomes the owner's y_k, and each
  // lane updates its rows below k.
  static __device__ __forceinline__ void Eliminate(const T (&l)[kQM][kNM], T (&y)[kQM], int k, T xk, int sub) {
    const int qk = k / G, owner = k % G;
    if (sub == owner) y[qk] = xk;
#pragma unroll
    for (int q = qk; q < kQM; ++q)
      if (q > qk || sub > owner) y[q] -= l[q][k] * xk;
  }

  // 1 / L(k, k), as row k's owner holds it: in rinv, or, for float posv under a register cap
  // (posv never outputs L), in the factor's diagonal, kQ registers fewer: it let NP = 32 G = 4 fit
  // 200 registers. Uncapped it made ptxas spill more (f64 NP = 32 G = 8: 0 -> 68-116 bytes); the
  // float64 capped forms (NP = 16-20) were tuned and measured without it, so they keep rinv.
  static constexpr bool kInvInDiagonal = OP == Op::kPosv && kMaxRegs < 255 && sizeof(T) == 4;
  static __device__ __forceinline__ T InvDiag(const T (&l)[kQM][kNM], const T (&rinv)[kQM], int k) {
    if constexpr (kInvInDiagonal) return l[k / G][k];
    else return rinv[k / G];
  }

  // Right-looking Cholesky in place (posv: L D Lᵀ, kLdl); 1 / L(i, i) (kLdl: 1 / d_i) of the lane's
  // rows where InvDiag reads it. Returns LAPACK's
  // info (the first pivot that is not > 0, NaN included); the caller NaNs the whole result.
  // RHS: y := L⁻¹ y on the way (posv's first column), off the solve's own dependency chain.
  // hook.Step(k) runs at the top of step k (the staged forms' next copies, StageHook).
  template <bool RHS, class Hook>
  static __device__ __forceinline__ int Factor(T (&l)[kQM][kNM], T (&rinv)[kQM], T (&y)[kQM], Tail& tl, int sub,
                                               T* bcast, const Hook& hook) {
    int info = 0;
#pragma unroll
    for (int k = 0; k < kNM; ++k) {
      hook.Step(k);
      const int qk = k / G, owner = k % G;
      T d = __shfl_sync(kAll, l[qk][k], owner, G);
      // Column k through the warp's buffer (kBcast): each lane stores its rows' entries, then
      // reads rows k + 1.. of its matrix a granule (kV entries) per load. ping-pong: a step's
      // stores never meet the last one's loads.
      T* col = bcast + (k & 1) * kBcastBuf;
      T a[kQM];  // L D Lᵀ: column k as it stands, sent to the group before the pivot's reciprocal
      if constexpr (kLdl) {
#pragma unroll
        for (int q = qk; q < kQM; ++q) a[q] = l[q][k];
        if constexpr (kBcast) {
#pragma unroll
          for (int q = qk; q < kQM; ++q) col[q * G + sub] = a[q];
          __syncwarp();
        }
      }
      T r;  // 1 / L(k, k), or 1 / d_k (kLdl)
      if constexpr (kLdl) r = LdlPivot(d, k, info);
      else StepPivot(d, r, k, info);
      if (!kInvInDiagonal && sub == owner) rinv[qk] = r;
      // The diagonal is read again only as potrf's output, or as 1 / L(k, k) (InvDiag).
      const bool diagonal = sub == owner;
#pragma unroll
      for (int q = qk; q < kQM; ++q)
        l[q][k] = (kInvInDiagonal && q == qk && diagonal) ? r
                  : (OP == Op::kPotrf && q == qk && diagonal) ? d : l[q][k] * r;
      T yk = T(0);
      if constexpr (RHS) {
        yk = __shfl_sync(kAll, y[qk], owner, G);
        Eliminate(l, y, k, kLdl ? yk : yk * r, sub);  // L D Lᵀ: L is unit
      }
      if constexpr (kTail) TailStep<RHS>(tl, a, r, yk, k, sub);
      if constexpr (kBcast) {
        if constexpr (!kLdl) {
#pragma unroll
          for (int q = qk; q < kQM; ++q) col[q * G + sub] = l[q][k];
          __syncwarp();
        }
        T v[kV];  // (the shuffle loop's shape: a j0 / e nest here was not unrolled at NP = 32)
#pragma unroll
        for (int j = k + 1; j < kNM; ++j) {
          if (j == k + 1 || j % kV == 0) LoadGranule(col + j / kV * kV, v);
#pragma unroll
          for (int q = j / G; q < kQM; ++q) l[q][j] -= l[q][k] * v[j % kV];
        }
      } else {
#pragma unroll
        for (int j = k + 1; j < kNM; ++j) {
          const T ljk = __shfl_sync(kAll, kLdl ? a[j / G] : l[j / G][k], j % G, G);
#pragma unroll
          for (int q = j / G; q < kQM; ++q) l[q][j] -= l[q][k] * ljk;
        }
      }
    }
    if constexpr (kTail) TailFactor<RHS>(tl, sub, info);
    return info;
  }

  // Main step k's update of the tail (kTail): L(kNM + e, k) = a(kNM + e, k) / d_k from the
  // owner of column k, then every lane's columns t G + sub > k with its own rows' a(t G + sub, k),
  // and the tail block's column kNM + sub with tail row sub's a; y_tail -= L y_k (RHS).
  template <bool RHS>
  static __device__ __forceinline__ void TailStep(Tail& tl, const T (&a)[kQM], T r, T yk, int k, int sub) {
    const int qk = k / G, owner = k % G;
    T ak[kE], lt[kE], amine = T(0);
#pragma unroll
    for (int e = 0; e < kE; ++e) {
      ak[e] = __shfl_sync(kAll, tl.x[e][qk], owner, G);  // before r: off the pivot's chain
      lt[e] = ak[e] * r;
      if (!kTailUnscaled && sub == owner) tl.x[e][qk] = lt[e];  // else the solves scale it
      if (sub == e) amine = ak[e];
    }
#pragma unroll
    for (int e = 0; e < kE; ++e) {
#pragma unroll
      for (int t = qk; t < kQM; ++t)
        if (t > qk || sub > owner) tl.x[e][t] -= lt[e] * a[t];
      tl.x[e][kQM] -= lt[e] * amine;
      if constexpr (RHS) tl.y[e] -= lt[e] * yk;
    }
  }

  // The tail block's own L D Lᵀ (steps kNM .. NP - 1): pivot k of it in lane k.
  template <bool RHS>
  static __device__ __forceinline__ void TailFactor(Tail& tl, int sub, int& info) {
#pragma unroll
    for (int k = 0; k < kE; ++k) {
      const T d = __shfl_sync(kAll, tl.x[k][kQM], k, G);
      T ak[kE], amine = T(0);
#pragma unroll
      for (int e = k + 1; e < kE; ++e) {
        ak[e] = __shfl_sync(kAll, tl.x[e][kQM], k, G);
        if (sub == e) amine = ak[e];
      }
      const T r = LdlPivot(d, kNM + k, info);
      tl.r[k] = r;
#pragma unroll
      for (int e = k + 1; e < kE; ++e) {
        const T lt = ak[e] * r;
        if (sub == k) tl.x[e][kQM] = lt;
        else if (sub > k) tl.x[e][kQM] -= lt * amine;  // columns left of k are final
        if constexpr (RHS) tl.y[e] -= lt * tl.y[k];
      }
    }
  }

  // L(kNM + e, t G + sub) = x[e][t] / d (kTailUnscaled) times v: the lane's own column's 1 / d.
  static __device__ __forceinline__ T TailScaled(const T (&l)[kQM][kNM], const T (&rinv)[kQM], int t, int sub, T v) {
    return kTailUnscaled ? v * OwnInvDiag(l, rinv, t, sub) : v;
  }

  // y_tail := the tail rows of L⁻¹ y, after Forward gave the main rows'.
  static __device__ __forceinline__ void ForwardTail(const T (&l)[kQM][kNM], const T (&rinv)[kQM], Tail& tl,
                                                     const T (&y)[kQM], int sub) {
    T ys[kQM];  // y_j / d_j (kTailUnscaled) for the lane's rows j = t G + sub
#pragma unroll
    for (int t = 0; t < kQM; ++t) ys[t] = TailScaled(l, rinv, t, sub, y[t]);
#pragma unroll
    for (int e = 0; e < kE; ++e) {
      T p = T(0);  // Σ over the lane's columns t G + sub of L(kNM + e, .) y
#pragma unroll
      for (int t = 0; t < kQM; ++t) p = fma(tl.x[e][t], ys[t], p);
#pragma unroll
      for (int w = G / 2; w > 0; w /= 2) p += __shfl_xor_sync(kAll, p, w, G);
      tl.y[e] -= p;
    }
#pragma unroll
    for (int k = 0; k < kE; ++k)
#pragma unroll
      for (int e = k + 1; e < kE; ++e) tl.y[e] -= __shfl_sync(kAll, tl.x[e][kQM], k, G) * tl.y[k];
  }

  // x_tail := the tail rows of D⁻¹ L⁻ᵀ y (first: nothing below them), then c[t] = Σ_e L(kNM + e,
  // t G + sub) x_e, the tail's term in row t G + sub's backward sum (its owner adds it).
  static __device__ __forceinline__ void BackwardTail(const T (&l)[kQM][kNM], const T (&rinv)[kQM], Tail& tl,
                                                      T (&c)[kQM], int sub) {
#pragma unroll
    for (int k = kE - 1; k >= 0; --k) {
      T p = T(0);  // lane k: Σ_{e > k} L(kNM + e, kNM + k) x_e
#pragma unroll
      for (int e = k + 1; e < kE; ++e) p = fma(tl.x[e][kQM], tl.y[e], p);
      tl.y[k] = __shfl_sync(kAll, fma(tl.y[k], tl.r[k], -p), k, G);
    }
#pragma unroll
    for (int t = 0; t < kQM; ++t) {
      c[t] = T(0);
#pragma unroll
      for (int e = 0; e < kE; ++e) c[t] = fma(tl.x[e][t], tl.y[e], c[t]);
      c[t] = TailScaled(l, rinv, t, sub, c[t]);
    }
  }

  // kBcast: each warp's two column buffers in shared memory, after the stages (if any). Matrix
  // mat's column at mat * kBcastStride, s 16-byte granules apart: s odd, so the warp's kMats
  // granule loads (one address per group) fall on distinct bank groups (8 granules of 16 B). For
  // groups of 4 that also spreads the groups' column stores evenly; for groups of 8 an odd s
  // overlaps neighbouring groups' stores (f64 4-way, f32 2-way; ncu 2026-12-07), which
  // BATCHLA_IL_BCAST_STRIDE2 removes (s = 2 mod 8) for 0-1 %, so it is off.
  static constexpr bool kBcast = GroupBcast(LOAD);
  static_assert(!kBcast || OP == Op::kPotrf || OP == Op::kPosv, "the broadcast is the factor's");
  static constexpr int kV = 16 / int(sizeof(T));  // elements per granule
  static constexpr int kBcastLeast = (kRows * int(sizeof(T)) + 15) / 16;  // granules a column needs
  static constexpr int kBcastStride =
      (BATCHLA_IL_BCAST_STRIDE2 && kMats == 4 ? kBcastLeast + ((2 - kBcastLeast) % 8 + 8) % 8 : kBcastLeast | 1) * kV;
  static constexpr int kBcastBuf = kMats * kBcastStride;
  static constexpr int kBcastElems = kBcast ? 2 * kBcastBuf : 0;  // per warp

  // A granule of the broadcast column (shared memory). The first granule of a step is partly dead
  // (rows <= k): a plain load of it compiles to 16-byte, 8-byte or scalar loads, differently from
  // one compile to the next (bench/NOTES.md "Lane-group broadcast loads kept whole").
  static constexpr bool kWholeLoads =
      BATCHLA_IL_BCAST_WHOLE_LOADS == 2 ||
      (BATCHLA_IL_BCAST_WHOLE_LOADS == 1 && G == 8 && kMaxRegs == 255 && (sizeof(T) == 4 || NP <= 32));
  static __device__ __forceinline__ void LoadGranule(const T* p, T (&v)[kV]) {
    if constexpr (kWholeLoads) detail::Vec16<T>::LoadSharedWhole(p, v);
    else detail::Vec16<T>::Load(p, v);
  }

  // y := L⁻¹ y (column-oriented: x_k is broadcast, every lane updates its rows below k).
  static __device__ __forceinline__ void Forward(const T (&l)[kQM][kNM], const T (&rinv)[kQM], T (&y)[kQM], int sub) {
#pragma unroll
    for (int k = 0; k < kNM; ++k) {
      const T yk = kLdl ? y[k / G] : y[k / G] * InvDiag(l, rinv, k);  // L D Lᵀ: L is unit
      Eliminate(l, y, k, __shfl_sync(kAll, yk, k % G, G), sub);
    }
  }

  // y := L⁻ᵀ y (row-oriented: x_k = (y_k - Σ_{i>k} L(i, k) x_i) / L(k, k), the sum reduced over
  // the group; only the owner of row k keeps the result).
  static __device__ __forceinline__ void BackwardT(const T (&l)[kQM][kNM], const T (&rinv)[kQM], T (&y)[kQM],
                                                   const T (&ct)[kQM], int sub) {
#pragma unroll
    for (int k = kNM - 1; k >= 0; --k) {
      const int qk = k / G, owner = k % G;
      T p = T(0);
      if constexpr (kTail) p = sub == owner ? ct[qk] : T(0);  // the tail rows' term (BackwardTail)
#pragma unroll
      for (int q = qk; q < kQM; ++q)
        if (q > qk || sub > owner) p += l[q][k] * y[q];
#pragma unroll
      for (int w = G / 2; w > 0; w /= 2) p += __shfl_xor_sync(kAll, p, w, G);
      if (sub == owner) y[qk] = kLdl ? fma(y[qk], InvDiag(l, rinv, k), -p)  // x_k = y_k / d_k - p
                                     : (y[qk] - p) * InvDiag(l, rinv, k);
    }
  }

  // The diagonal entry of the lane's row in slot q (its column depends on the lane).
  static __device__ __forceinline__ T LaneDiagonal(const T (&l)[kQM][kNM], int q, int sub) {
    T d = T(1);  // a ghost row's (no column of its own): 1
#pragma unroll
    for (int s = 0; s < G; ++s)
      if (sub == s && q * G + s < kNM) d = l[q][q * G + s];
    return d;
  }

  // BackwardT in blocks of G rows, for the broadcast forms (their column buffers, free after the
  // factor, hold each matrix's G x G diagonal block): block b is slot b, row b G + s in lane s.
  //   1. each lane sums the block's columns over its solved rows (slots above b): G partials;
  //   2. one reduce-scatter over the group leaves lane s the sum for row b G + s (log2 G shuffle
  //      rounds in all, not log2 G per row);
  //   3. the diagonal block goes through shared memory so that lane s holds column s of it;
  //   4. rows b G + G - 1 .. b G in turn: the owner finishes x, one shuffle sends it, the lanes
  //      above it in the block take its term.
  // Measured (bench/NOTES.md "the backward solve in blocks"): float groups of 8 5-10 % faster;
  // groups of 4 within +-3 %, and double's registers spill (f64 G 4 pad 24 0.76x): those keep BackwardT.
  static constexpr bool kBlockedBackward = BATCHLA_IL_GROUP_BLOCKED_BACKWARD && kBcast && G == 8 &&
                                           (std::is_same_v<T, float> || BATCHLA_IL_GROUP_BLOCKED_BACKWARD == 2) &&
                                           G * G <= 2 * kBcastStride;
  // The lane's own 1 / L(i, i) (or 1 / d_i) of slot b (InvDiag with a lane-dependent column).
  static __device__ __forceinline__ T OwnInvDiag(const T (&l)[kQM][kNM], const T (&rinv)[kQM], int b, int sub) {
    if constexpr (kInvInDiagonal) return LaneDiagonal(l, b, sub);
    else return rinv[b];
  }
  static __device__ __forceinline__ void BackwardBlocked(const T (&l)[kQM][kNM], const T (&rinv)[kQM], T (&y)[kQM],
                                                         const T (&ct)[kQM], int sub, T* blk) {
#pragma unroll
    for (int b = kQM - 1; b >= 0; --b) {
      T v[G];  // 1. Σ over the lane's rows i in slots above b of L(i, b G + t) x_i
#pragma unroll
      for (int t = 0; t < G; ++t) {
        v[t] = T(0);
#pragma unroll
        for (int q = b + 1; q < kQM; ++q) v[t] = fma(l[q][b * G + t], y[q], v[t]);
      }
      // 3. (issued first: its round trip overlaps 2) row b G + sub of the diagonal block
      __syncwarp();  // the previous block's (or the factor's) reads of blk are done
#pragma unroll
      for (int c = 0; c < G; ++c) blk[sub * G + c] = b * G + c < kNM ? l[b][b * G + c] : T(0);
      // 2. reduce-scatter: at distance w a lane keeps the rows whose bit w matches its own
#pragma unroll
      for (int w = G / 2; w >= 1; w /= 2) {
        const bool hi = sub & w;
#pragma unroll
        for (int i = 0; i < w; ++i) {
          const T send = hi ? v[i] : v[i + w];
          v[i] = (hi ? v[i + w] : v[i]) + __shfl_xor_sync(kAll, send, w, G);
        }
      }
      __syncwarp();
      T col[G];  // col[t] = L(b G + t, b G + sub), used for t > sub
#pragma unroll
      for (int t = 0; t < G; ++t) col[t] = blk[t * G + sub];
      // 4. x_k = y_k / d_k - p_k (L D Lᵀ), else (y_k - p_k) / L(k, k)
      const T inv = OwnInvDiag(l, rinv, b, sub);
      T acc = kTail ? v[0] + ct[b] : v[0], x = y[b];  // (+ the tail rows' term, BackwardTail)
#pragma unroll
      for (int t = G - 1; t >= 0; --t) {
        const T mine = kLdl ? fma(y[b], inv, -acc) : (y[b] - acc) * inv;  // lane t's is final now
        const T xt = __shfl_sync(kAll, mine, t, G);
        x = sub == t ? xt : x;
        acc = fma(col[t], xt, acc);  // rows above b G + t take its term (rows below: done, acc unread)
      }
      y[b] = x;
    }
  }

  // 1 / L(i, i) of the lane's rows of a given factor (the diagonal column depends on the lane).
  static __device__ __forceinline__ void DiagonalInverse(const T (&l)[kQM][kNM], T (&rinv)[kQM], int sub, bool unit) {
#pragma unroll
    for (int q = 0; q < kQM; ++q) rinv[q] = unit ? T(1) : T(1) / LaneDiagonal(l, q, sub);
  }

  // Right-hand side column col of thread t's matrix into y and the tail's (rows past n: 0).
  static __device__ __forceinline__ void LoadRhs(const Args<T>& g, int64_t t, int col, T (&y)[kQM], Tail& tl) {
    const int sub = int(t % G), n = g.n;
    const int64_t m = t / G;
    // right-hand sides: (chunks, n, k, c); column col of row i at b + i * row + col * c
    const T* b = g.b + (m / g.c) * int64_t(n) * g.k * g.c + m % g.c;
    const int64_t row = int64_t(g.k) * g.c;
#pragma unroll
    for (int q = 0; q < kQM; ++q) {
      const int i = q * G + sub;
      const T v = __ldg(b + (i < n ? i : n - 1) * row + col * g.c);  // clamped: no branch
      y[q] = i < n ? v : T(0);
    }
    if constexpr (kTail) {
#pragma unroll
      for (int e = 0; e < kE; ++e) {
        const int i = kNM + e;
        const T v = __ldg(b + (i < n ? i : n - 1) * row + col * g.c);
        tl.y[e] = i < n ? v : T(0);
      }
    }
  }

  // The kLoad64 / kLoad32 forms: thread t loads its rows of the triangle straight from global
  // memory (and posv's first rhs when folded), then finishes.
  static __device__ __forceinline__ void Run(const Args<T>& g, int64_t t, bool live) {
    const int sub = int(t % G);
    const int64_t m = t / G, chunk = m / g.c, lane = m % g.c;
    const int n = g.n;
    const T* a = g.a + chunk * int64_t(n) * n * g.c + lane;
    const TriangleStrides st(g.mode, n, g.c);  // (r, s) of the op's triangle at a[r rs + s cs]
    const int64_t rs = st.rs, cs = st.cs;
    const bool unit = OP == Op::kTrsm && g.unit;
    T l[kQM][kNM], y[kQM];
    Tail tl;
    const bool sym = OP == Op::kPotrf && g.mode == kSymmetrize;
    if constexpr (OFF32) {
      if (sym) LoadTriangle32<true>(l, a, int(rs), int(cs), sub, n, unit);
      else LoadTriangle32<false>(l, a, int(rs), int(cs), sub, n, unit);
      FillTail(tl, sub, n, [&](int ir, int sc) { return __ldg(a + (ir * int(rs) + sc * int(cs))); });
    } else {
      if (sym) LoadTriangle64<true>(l, a, rs, cs, sub, n, unit);
      else LoadTriangle64<false>(l, a, rs, cs, sub, n, unit);
      FillTail(tl, sub, n, [&](int ir, int sc) { return __ldg(a + (ir * rs + sc * cs)); });
    }
    constexpr bool kFolded = OP == Op::kPosv && FOLD;
    if constexpr (kFolded) LoadRhs(g, t, 0, y, tl);
    Finish<kFolded>(g, t, live, l, y, tl);
  }

  // ---- kLoadStaged ------------------------------------------------------------------------------
  // Each warp owns a stage in shared memory and runs a persistent loop over waves of its kMats
  // matrices: the next wave's cp.async copies are in flight while this wave is factored and
  // solved, so no global load sits on the factor's dependency chain (the kLoad32 form lost to
  // ptxas sinking its loads next to their first use, bench/NOTES.md).
  // Stage layout: slot (q, s, sub), s < kCols(q), holds element (q G + sub, s) at
  // ((Tri(q) + s) G + sub) kMats; the first rhs column follows, row i at (kTriSlots + i) kMats.
  // A slot holds that element of the warp's kMats matrices side by side, as global memory does,
  // so a copy moves whole 16-byte granules and the register fill reads 32 consecutive words.
  static constexpr bool kRhs = OP != Op::kPotrf;
  static constexpr int kSlotBytes = kMats * int(sizeof(T));
  static constexpr int kPieceBytes = kSlotBytes < 16 ? kSlotBytes : 16;  // one cp.async
  static constexpr int kPieceElems = kPieceBytes / int(sizeof(T));
  static constexpr int kPieces = kSlotBytes / kPieceBytes;  // per slot
  static constexpr int kPairsPerCopy = 32 / (G * kPieces);  // (q, s) pairs one warp-wide copy moves
  static_assert(G * kPieces <= 32 && G % kPairsPerCopy == 0, "a copy covers whole (q, s) pairs");
  // Columns of slot q in the stage: a partial last slot's rounded up to whole copies (the extra
  // ones are copied, never read).
  static constexpr int kStageExtra = (kPairsPerCopy - NP % kPairsPerCopy) % kPairsPerCopy;  // the last slot's
  static constexpr int kStageCols(int q) { return kCols(q) + (q == kQ - 1 ? kStageExtra : 0); }
  static constexpr int Tri(int q) { return G * q * (q + 1) / 2; }  // (q', s) pairs with q' < q <= kQ - 1
  static constexpr int kTriSlots = G * (Tri(kQ - 1) + kStageCols(kQ - 1));
  static constexpr int kStageElems = (kTriSlots + (kRhs ? NP : 0)) * kMats;

  static constexpr int kStageStride = kStaged ? detail::RoundUp(kStageElems, kV) : 0;  // per warp, whole granules
  static constexpr bool kSpreadCopies = BATCHLA_IL_SPREAD_COPIES && std::is_same_v<T, float> &&
                                        GroupForm(LOAD) == kLoadStaged && (OP == Op::kPotrf || OP == Op::kPosv);

  static size_t SharedBytes(int, int threads) {
    return size_t(threads / 32) * (kStageStride + kBcastElems) * sizeof(T);
  }

  // The dynamic shared memory: the warps' stages, then their column buffers.
  static __device__ __forceinline__ T* Shared() {
    extern __shared__ __align__(16) unsigned char il_group_shared[];
    return reinterpret_cast<T*>(il_group_shared);
  }
  // This matrix's G x G block in the warp's column buffers (BackwardBlocked).
  static __device__ __forceinline__ T* BcastBlock() {
    const int warp = threadIdx.x / 32, mat = (threadIdx.x & 31) / G;
    return Shared() + (blockDim.x / 32) * kStageStride + warp * kBcastElems + mat * G * G;
  }
  // This warp's column buffer (kBcast), its matrix's column in it.
  static __device__ __forceinline__ T* BcastColumn() {
    const int warp = threadIdx.x / 32, mat = (threadIdx.x & 31) / G;
    return Shared() + (blockDim.x / 32) * kStageStride + warp * kBcastElems + mat * kBcastStride;
  }

  // Starts the copies of the wave whose first thread index is w0 (a multiple of 32) into stage.
  // Rows past n and entries right of the diagonal copy a clamped, valid element (FillFromStage
  // replaces them).
  // Parts p0 .. p1 of them: part q < kQ is row slot q, part kQ the first rhs column and the commit
  // (the whole stage: 0 .. kQ; StageHook issues one part at a time).
  static __device__ __forceinline__ void IssueStage(const Args<T>& g, int64_t w0, T* stage, int p0 = 0,
                                                    int p1 = kQ) {
    // The lane index through an opaque move: else ptxas hoists every copy's (loop-invariant)
    // source offset out of RunStaged's loop and keeps them all live, ~70 registers (ptxas -v).
    int lane;
    asm volatile("mov.b32 %0, %1;" : "=r"(lane) : "r"(int(threadIdx.x & 31)));
    const int n = g.n;
    const int64_t m0 = w0 / G, chunk = m0 / g.c, first = m0 % g.c;
    const T* a = g.a + chunk * int64_t(n) * n * g.c + first;
    const TriangleStrides st(g.mode, n, g.c);
    // Offsets within the chunk: 32-bit where Fits guarantees they fit (kStageLean).
    using Off = std::conditional_t<kStageLean, int, int64_t>;
    const Off rs = Off(st.rs), cs = Off(st.cs);
    const int pair = lane / (G * kPieces), sub = lane / kPieces % G, piece = lane % kPieces;
#pragma unroll
    for (int q = 0; q < kQ; ++q) {
      if (q < p0 || q > p1) continue;
      // Padding rows (clamped to row n - 1) sit in the last slot only when kStageLean.
      const int i = q * G + sub, ir = (kStageLean && q < kQ - 1) || i < n ? i : n - 1;
      const Off row = ir * rs + piece * kPieceElems;
      T* dst = stage + ((Tri(q) + pair) * G + sub) * kMats + piece * kPieceElems;
#pragma unroll
      for (int s0 = 0; s0 < kStageCols(q); s0 += kPairsPerCopy) {
        // every lane's column s left of the slot's diagonal block: left of its row's diagonal
        const bool left = kStageLean && s0 + kPairsPerCopy <= q * G;
        const int s = s0 + pair, sc = left || s < ir ? s : ir;
        CopyAsync<kPieceBytes>(static_cast<unsigned>(__cvta_generic_to_shared(dst + s0 * G * kMats)), a + (row + sc * cs));
      }
    }
    if (p1 < kQ) return;
    if constexpr (kRhs) {
      const T* b = g.b + chunk * int64_t(n) * g.k * g.c + first;
      const int64_t row = int64_t(g.k) * g.c;
      T* rhs = stage + kTriSlots * kMats;
#pragma unroll
      for (int p0 = 0; p0 < NP * kPieces; p0 += 32) {
        const int p = p0 + lane, i = p / kPieces, pc = p % kPieces;
        if (p < NP * kPieces)
          CopyAsync<kPieceBytes>(static_cast<unsigned>(__cvta_generic_to_shared(rhs + i * kMats + pc * kPieceElems)),
                                 b + (i < n ? i : n - 1) * row + pc * kPieceElems);
      }
    }
    __pipeline_commit();
  }

  // The lane's rows from the stage (Padded, as LoadTriangle64); y: the
  // first rhs column.
  static __device__ __forceinline__ void FillFromStage(const T* stage, T (&l)[kQM][kNM], T (&y)[kQM], Tail& tl,
                                                       int n, bool unit) {
    const int lane = threadIdx.x & 31, sub = lane % G, mat = lane / G;
#pragma unroll
    for (int q = 0; q < kQM; ++q) {
      const int i = q * G + sub;
      const bool real = (kStageLean && q < kQ - 1) || i < n;
#pragma unroll
      for (int s = 0; s < kCols(q); ++s) {
        const T v = stage[((Tri(q) + s) * G + sub) * kMats + mat];
        if constexpr (kStageLean) {  // right of the diagonal left as copied (never read as a result)
          const T w = OP == Op::kTrsm && unit && s == i ? T(1) : v;
          l[q][s] = real ? w : s == i ? T(1) : T(0);
        } else {
          l[q][s] = Padded(v, i, s, n, unit);
        }
      }
      if constexpr (kRhs) y[q] = real ? stage[(kTriSlots + i) * kMats + mat] : T(0);
    }
    if constexpr (kTail) {  // slot kQM of the stage, read across (its row e at e, column sc at Tri(kQM) + sc)
      FillTail(tl, sub, n, [&](int ir, int sc) {
        return stage[((Tri(kQM) + sc) * G + (ir >= kNM ? ir - kNM : 0)) * kMats + mat];
      });
#pragma unroll
      for (int e = 0; e < kE; ++e) tl.y[e] = kNM + e < n ? stage[(kTriSlots + kNM + e) * kMats + mat] : T(0);
    }
  }

  // Factor hooks: none (the direct forms, or the copies issued before the factor), or the next
  // wave's copies a row slot every kSpread steps from step 0 (kSpreadCopies).
  struct NoHook {
    __device__ __forceinline__ void Step(int) const {}
    __device__ __forceinline__ void Done() const {}
  };
  struct StageHook {
    static constexpr int kSpread = G / 2 > 0 ? G / 2 : 1;  // the copies done by step NP / 2
    const Args<T>& g;
    int64_t w0;
    T* stage;
    bool on;  // warp-uniform: there is a next wave
    __device__ __forceinline__ void Step(int k) const {
      if (on && k % kSpread == 0 && k / kSpread < kQ) IssueStage(g, w0, stage, k / kSpread, k / kSpread);
    }
    __device__ __forceinline__ void Done() const {  // after the factor: the rhs and the commit
      if (on) IssueStage(g, w0, stage, kQ, kQ);
    }
  };

  // The persistent loop (il::StagedKernel). Its trip count is block-uniform
  // (see il::Kernel); a chunk holds whole warps (Fits), so warps are live or dead as a whole, and
  // a dead warp redoes wave 0 without storing.
  static __device__ void RunStaged(const Args<T>& g) {
    T* stage = Shared() + (threadIdx.x / 32) * kStageStride;
    const int64_t total = g.chunks * g.c * G;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    const int64_t warp = threadIdx.x & ~31;
    auto first = [&](int64_t base) { return base + warp < total ? base + warp : int64_t(0); };
    int64_t base = int64_t(blockIdx.x) * blockDim.x;
    if (base < total) IssueStage(g, first(base), stage);
    for (; base < total; base += stride) {
      T l[kQM][kNM], y[kQM];
      Tail tl;
      __pipeline_wait_prior(0);
      __syncwarp();  // every lane's copies visible to the warp
      FillFromStage(stage, l, y, tl, g.n, OP == Op::kTrsm && g.unit);
      __syncwarp();  // the stage is free for the next wave
      if constexpr (kSpreadCopies) {
        Finish<kRhs>(g, first(base) + (threadIdx.x & 31), base + warp < total, l, y, tl,
                     StageHook{g, first(base + stride), stage, base + stride < total});
      } else {
        if (base + stride < total) IssueStage(g, first(base + stride), stage);
        Finish<kRhs>(g, first(base) + (threadIdx.x & 31), base + warp < total, l, y, tl);
      }
    }
  }

  // Factor (or take the given factor), then potrf's store or the solves. Y0: y already holds the
  // first rhs column.
  template <bool Y0, class Hook = NoHook>
  static __device__ __forceinline__ void Finish(const Args<T>& g, int64_t t, bool live, T (&l)[kQM][kNM],
                                                T (&y)[kQM], Tail& tl, const Hook& hook = {}) {
    static_assert(Y0 || !(OP == Op::kPosv && FOLD), "the folded factor needs the first rhs");
    const int sub = int(t % G);
    const int64_t m = t / G, chunk = m / g.c, lane = m % g.c;
    const int n = g.n;
    const bool unit = OP == Op::kTrsm && g.unit;
    T rinv[kQM];
    int info = 0;
    if constexpr (OP == Op::kPosv && FOLD) {
      info = Factor<true>(l, rinv, y, tl, sub, BcastColumn(), hook);
    } else if constexpr (OP == Op::kPotrf || OP == Op::kPosv) {
      info = Factor<false>(l, rinv, y, tl, sub, BcastColumn(), hook);
    } else {
      static_assert(std::is_same_v<Hook, NoHook>, "the copies ride on a factor's steps");
      DiagonalInverse(l, rinv, sub, unit);
    }
    hook.Done();

    if constexpr (OP == Op::kPotrf) {
      T* out = g.out + chunk * int64_t(n) * n * g.c + lane;
#pragma unroll
      for (int q = 0; q < kQM; ++q) {
        const int i = q * G + sub;
        if (i >= n) break;
#pragma unroll
        for (int s = 0; s < kNM; ++s) {
          if (s >= n) break;
          T v = T(0);
          if (s < kCols(q) && s <= i) v = info ? Scalar<T>::NaN() : l[q][s];
          if (live) out[(int64_t(i) * n + s) * g.c] = v;
        }
      }
      if (live && sub == 0) g.info[m] = info;
      return;
    }
    // trsm solves forward when op(A) is lower: A lower and not transposed, or upper transposed.
    const bool forward = OP != Op::kTrsm || ((g.mode == kReadLower) != g.trans);
    const bool backward = OP != Op::kTrsm || !forward;
    const int64_t row = int64_t(g.k) * g.c;
    T* x = g.out + chunk * int64_t(n) * g.k * g.c + lane;
    for (int col = 0; col < g.k; ++col) {
      const bool forward_done = OP == Op::kPosv && FOLD && col == 0;  // in the factor
      if (!(Y0 && col == 0)) LoadRhs(g, t, col, y, tl);
      if (forward && !forward_done) {
        Forward(l, rinv, y, sub);
        if constexpr (kTail) ForwardTail(l, rinv, tl, y, sub);
      }
      T c[kQM];  // the tail rows' terms of the main rows' backward sums
      if constexpr (kTail) BackwardTail(l, rinv, tl, c, sub);
      if constexpr (kBlockedBackward) BackwardBlocked(l, rinv, y, c, sub, BcastBlock());
      else if (backward) BackwardT(l, rinv, y, c, sub);
#pragma unroll
      for (int q = 0; q < kQM; ++q) {
        const int i = q * G + sub;
        if (live && i < n) x[i * row + col * g.c] = info ? Scalar<T>::NaN() : y[q];
      }
#pragma unroll
      for (int e = 0; e < kE * kTail; ++e) {  // tail row kNM + e from lane e
        const int i = kNM + e;
        if (live && i < n && sub == e) x[i * row + col * g.c] = info ? Scalar<T>::NaN() : tl.y[e];
      }
    }
    if constexpr (OP == Op::kPosv)
      if (live && sub == 0) g.info[m] = info;
  }
};

}  // namespace il
}  // namespace batchla
