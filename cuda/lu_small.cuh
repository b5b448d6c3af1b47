// Batched LU (getrf) and its fused outputs (gesv, inverse, slogdet): SMALL class, n = 1..32.
//
// Storage: ROW-MAJOR (launch.h): element (i, j) of matrix b at b*n*n + i*n + j, int64_t offsets.
// Pivoting is LAPACK getf2's: at step j the pivot is the FIRST row (current order) of largest |a|,
// compared on the |x| bit pattern (NaN ranks above inf, so a NaN column still yields a valid row).
//
// Two kernels (size split and every threshold in cuda/tuning.h, block "LU family"; measurements in
// bench/NOTES.md, "getrf small"):
// tiny  (n <= kLuTinyMaxN): a THREAD per matrix, a[i][c] in registers, rows swapped physically by
//   selects on the runtime pivot index; no cross-lane traffic. Inverse = U^-1 L^-1 column by
//   column, scattered to the permuted column in shared memory.
// group (above): lanes own ROWS of the ORIGINAL matrix: lane r of a group holds rows r + s*L
//   (s < R rows per lane) in registers, row[s][c] = A(r + s*L, c). Rows never move: pos[s] is the
//   row's current position (final-destination pivoting); at step j the rows with pos >= j offer
//   |row[j]|, the lanes at pos j and at the winner's pos exchange positions, pivots[j] = the
//   winner's pos, perm[pos] = its row at the end, and each row is written once, at its final
//   position. Two variants:
//     v2 (n <= kLuSmallV2MaxN: R = 2; above, "wide", R = ceil(n / 8) on groups of 8 lanes for
//        float n <= kLuSmallV2WideMaxN and the double inverse n <= kLuSmallV2WideMaxNF64Inverse:
//        the choice is per output, LuV2Wide; an A/B form, off, R = 2 on groups of 16: LuV2Half):
//        argmax by shuffle butterfly (redux.sync with per-group masks serializes per group) + one
//        ballot when the maximum is unique, issued right after
//        column j+1 is updated so it overlaps the rest of step j; the pivot row reaches the group
//        by shuffles from the winner's lane;
//     v1 (above): R = 1, full-warp groups, redux max over the key words then redux min over pos;
//        the winner writes its row (16-byte stores) into a two-row ping-pong buffer, and after
//        __syncwarp every lane reads it back with broadcast vector loads.
//   Factor / solve / slogdet: right-looking getf2 (L kept in row[c < pos], U in row[c >= pos]).
//   Inverse: in-place Gauss-Jordan on the same pivot sequence (every lane updates its whole row
//   each step: n^2 FMAs per step with all lanes busy, vs the triangular solves against I); the
//   inverse's columns come out permuted by the pivot order and are scattered on write-back.
//   Solve, k = 1: b is an extra column of the rows, and the factor eliminates above the pivot too
//   (Gauss-Jordan on [A | b], no triangular solves); k > 1: forward + back substitution after the
//   factor, KC right-hand-side columns at a time in registers. The entry solved at each step is broadcast
//   by shuffle from the lane that holds it.
// Global I/O (both): persistent blocks, double-buffered; each chunk (consecutive matrices = one
// contiguous range) is copied with 16-byte cp.async into a shared layout equal to the global one
// except for padding that keeps the per-lane 16-byte accesses of 8 lanes on distinct banks (group:
// rows, tiny: matrices padded to an odd number of granules); LU / inverse leave the same way.
// Unaligned pointers fall back to element-sized copies (same kernels).
// Failure: no control flow depends on the data; a zero, NaN or Inf matrix only produces inf/NaN in
// its own outputs, and every pivot index is a valid row.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>
#include <type_traits>
#include <utility>

#include "cuda/common.cuh"
#include "cuda/lu_dispatch.h"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {

// Size thresholds of this class: cuda/tuning.h, block "LU family".
using tuning::kLuSmallMaxStages;
using tuning::kLuSmallStageBytes;
using tuning::kLuSmallThreads;
using tuning::kLuSmallV2MaxN;
using tuning::kLuTinyMaxN;

// ---- scalar helpers ------------------------------------------------------------------------------
template <typename T>
struct LuScalar;
template <>
struct LuScalar<float> : Vec16<float> {  // the 16-byte vector mapping, and:
  __device__ static float Rcp(float x) { return __frcp_rn(x); }
  // __frcp_rn's own fast path (MUFU.RCP, then the Newton step nvcc emits: the same correctly
  // rounded result) where that path holds: kSfmin <= |x| < kRcpFastMax.
  static constexpr bool kHasRcpFast = true;
  static constexpr float kRcpFastMax = 8.50705917e37f;  // 2^126
  __device__ static float RcpFast(float x) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return fmaf(r, -fmaf(x, r, -1.0f), r);
  }
  __device__ static float Log(float x) { return logf(x); }
  static constexpr float kSfmin = 1.17549435e-38f;  // LAPACK slamch('S'): 1/sfmin does not overflow
  __device__ static unsigned Key(float x) { return __float_as_uint(x) & 0x7fffffffu; }  // |x| bits: NaN > inf
};
template <>
struct LuScalar<double> : Vec16<double> {
  __device__ static double Rcp(double x) { return __drcp_rn(x); }
  static constexpr bool kHasRcpFast = false;  // (__drcp_rn's fast path is not one Newton step)
  __device__ static double Log(double x) { return log(x); }
  static constexpr double kSfmin = 2.2250738585072014e-308;
  __device__ static unsigned long long Key(double x) {
    return static_cast<unsigned long long>(__double_as_longlong(x)) & 0x7fffffffffffffffull;
  }
};

// ---- group argmax ------------------------------------------------------------------------------
// The group's pivot at a step: largest |x| over the active rows, smallest pos on ties (LAPACK's
// first max in the current row order); always a valid position (some row is active). Every lane of
// the warp must call these (full-warp ballots / shuffles inside).
template <int L>
__device__ __forceinline__ unsigned LuMaxReduce(unsigned v, unsigned gmask) {
  if constexpr (L == 32) {
    return __reduce_max_sync(gmask, v);
  } else {  // sub-warp group: shuffle butterfly (redux.sync with per-group masks serializes)
#pragma unroll
    for (int o = L / 2; o > 0; o /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, o, L));
    return v;
  }
}
template <int L>
__device__ __forceinline__ unsigned LuMinReduce(unsigned v, unsigned gmask) {
  if constexpr (L == 32) {
    return __reduce_min_sync(gmask, v);
  } else {
#pragma unroll
    for (int o = L / 2; o > 0; o /= 2) v = min(v, __shfl_xor_sync(0xffffffffu, v, o, L));
    return v;
  }
}
// The pivot of one step: its current position, whether this lane holds it, and the (warp) lane that
// holds it (source of v2's pivot-row shuffles; v1 broadcasts through shared memory, so its argmax
// leaves src 0: nvcc does not drop an unused ballot).
struct LuPivot {
  unsigned pos;
  bool mine;
  int src;
};
// The lane of the group that holds the pivot (exactly one lane has mine set).
__device__ __forceinline__ int LuPivotLane(bool mine, unsigned gmask) {
  return __ffs(__ballot_sync(0xffffffffu, mine) & gmask) - 1;
}
// c: this lane's best row is a (so far) maximal candidate; pos: that row's position (~0u when the
// lane has no active row). Resolves the remaining levels of the key (f64: the low word) and the
// tie-break by pos. Usual case (one candidate per group): a ballot names the pivot's lane at once;
// its pos follows by one shuffle, off the critical path.
template <int L>
__device__ __forceinline__ LuPivot LuPickPivot(bool c, const unsigned* lower, int nlower, unsigned pos,
                                               unsigned gmask) {
  const unsigned cand = __ballot_sync(0xffffffffu, c) & gmask;
  bool ties;
  if constexpr (L == 32) ties = __popc(cand) > 1;  // warp-uniform already
  else ties = __any_sync(0xffffffffu, __popc(cand) > 1);
  if (!ties) {
    const int lane = __ffs(cand) - 1;
    return {__shfl_sync(0xffffffffu, pos, lane), int(threadIdx.x & 31) == lane, lane};
  }
  for (int w = 0; w < nlower; ++w) {
    const unsigned m = LuMaxReduce<L>(c ? lower[w] : 0u, gmask);
    c = c && lower[w] == m;
  }
  const unsigned pm = LuMinReduce<L>(c ? pos : 0xffffffffu, gmask);
  return {pm, pos == pm, LuPivotLane(pos == pm, gmask)};
}
// Pivot over the group's rows: x[s], active[s], pos[s] for the lane's R rows. FAST: the ballot
// path above (v2); else (v1, one row per lane, full-warp groups only) redux max over the key
// levels, then redux min over pos.
template <int L, bool FAST, typename T, int R>
__device__ __forceinline__ LuPivot LuGroupPivot(const T (&x)[R], const bool (&active)[R], const unsigned (&pos)[R],
                                                unsigned gmask) {
  if constexpr (!FAST) {
    static_assert(R == 1 && L == 32, "the v1 argmax is for full-warp groups, one row per lane");
    if constexpr (sizeof(T) == 4) {
      const unsigned key = active[0] ? LuScalar<float>::Key(x[0]) : 0u;
      const unsigned kmax = __reduce_max_sync(gmask, key);
      const unsigned pm = __reduce_min_sync(gmask, (active[0] && key == kmax) ? pos[0] : 0xffffffffu);
      return {pm, pos[0] == pm, 0};
    } else {
      const unsigned long long bits = LuScalar<double>::Key(x[0]);
      const unsigned hi = active[0] ? unsigned(bits >> 32) : 0u, lo = unsigned(bits);
      const unsigned hmax = __reduce_max_sync(gmask, hi);  // every lane: no short-circuit around a sync
      const bool cand = active[0] && hi == hmax;
      const unsigned lmax = __reduce_max_sync(gmask, cand ? lo : 0u);
      const unsigned pm = __reduce_min_sync(gmask, (cand && lo == lmax) ? pos[0] : 0xffffffffu);
      return {pm, pos[0] == pm, 0};
    }
  } else {
    using K = decltype(LuScalar<T>::Key(T(0)));
    K key = 0;
    unsigned bpos = 0xffffffffu;
#pragma unroll
    for (int s = 0; s < R; ++s) {  // the lane's own best: larger key, then smaller pos
      const K k = active[s] ? LuScalar<T>::Key(x[s]) : K(0);
      if (active[s] && (k > key || (k == key && pos[s] < bpos))) key = k, bpos = pos[s];
    }
    if constexpr (sizeof(K) == 4) {
      const unsigned kmax = LuMaxReduce<L>(key, gmask);
      return LuPickPivot<L>(bpos != 0xffffffffu && key == kmax, nullptr, 0, bpos, gmask);
    } else {
      const unsigned hi = unsigned(key >> 32), lo = unsigned(key);
      const unsigned hmax = LuMaxReduce<L>(hi, gmask);
      return LuPickPivot<L>(bpos != 0xffffffffu && hi == hmax, &lo, 1, bpos, gmask);
    }
  }
}

// ---- compile-time configuration (read by kernel and launcher) ------------------------------------
// v2 on groups of 8 lanes above n = 16 (tuning.h: the largest n per dtype and output).
template <typename T>
constexpr bool LuV2Wide(int n, LuOutput out) {
  const int max_n = sizeof(T) == 4                ? tuning::kLuSmallV2WideMaxN
                    : out == LuOutput::kInverse ? tuning::kLuSmallV2WideMaxNF64Inverse
                                                : tuning::kLuSmallV2WideMaxNF64;
  return n > kLuSmallV2MaxN && n <= max_n;
}
// v2 on groups of 16 lanes, two rows a lane (float, above the wide form's n; tuning.h).
template <typename T>
constexpr bool LuV2Half(int n, LuOutput) {
  return sizeof(T) == 4 && n > tuning::kLuSmallV2WideMaxN && n <= tuning::kLuSmallV2HalfMaxN && n > kLuSmallV2MaxN;
}
template <typename T>
constexpr int LuRowsPerLane(int n, LuOutput out) {
  return n <= 2 ? 1 : n <= kLuSmallV2MaxN || LuV2Half<T>(n, out) ? 2 : LuV2Wide<T>(n, out) ? (n + 7) / 8 : 1;
}

template <typename T, int N, LuOutput OUT>
struct LuSmallCfg {
  static constexpr int kN = N;
  static constexpr bool kFast = N <= kLuSmallV2MaxN || LuV2Wide<T>(N, OUT) || LuV2Half<T>(N, OUT);  // v2 (else v1)
  static constexpr int kRows = LuRowsPerLane<T>(N, OUT);          // rows per lane
  static constexpr int kNL = (N + kRows - 1) / kRows;             // lanes with a row
  static constexpr int kLanes = kNL <= 1 ? 1 : kNL <= 2 ? 2 : kNL <= 4 ? 4 : kNL <= 8 ? 8 : kNL <= 16 ? 16 : 32;
  static constexpr int kV = LuScalar<T>::kN;                      // elements per 16-byte granule
  static constexpr int kNN = N * N;
  static constexpr bool kRowVec = N % kV == 0;                    // rows are whole granules
  static constexpr int kRS = (N % (2 * kV) == 0) ? N + kV : N;    // shared row stride
  static constexpr bool kDense = kRS == N;                        // shared layout == global layout
  static constexpr int kMS = N * kRS;                             // shared matrix stride
  static constexpr bool kSwizzle = false;                         // (the tiny class's layout)
  static constexpr int kMatBytes = kNN * int(sizeof(T));
  // v2: fewer threads when one matrix per group would make the two stages exceed
  // kLuSmallMaxStages bytes (f64 n >= 14): occupancy is then set by shared memory anyway.
  static constexpr int kStageMat = 2 * kMS * int(sizeof(T));     // both stages, per group
  static constexpr bool kFits128 = kLuSmallThreads / kLanes * kStageMat <= kLuSmallMaxStages;
  static constexpr bool kFits64 = kLuSmallThreads / 2 / kLanes * kStageMat <= kLuSmallMaxStages;
  // v1 float: its own block size (tuning.h, kLuSmallV1ThreadsF32)
  static constexpr int kThreads = !kFast && sizeof(T) == 4                        ? tuning::kLuSmallV1ThreadsF32
                                  : (!kFast || kFits128 || kLuSmallThreads <= 32) ? kLuSmallThreads
                                  : (kFits64 || kLuSmallThreads <= 64)            ? kLuSmallThreads / 2
                                                                                  : kLuSmallThreads / 4;
  // __launch_bounds__ blocks per SM with KC right-hand-side columns at a time (tuning.h,
  // kLuSmallCapMinNF64 and LuSmallV1MinBlocksF64); 0: none, ptxas picks
  static constexpr int MinBlocks(int kc) {
    return sizeof(T) != 8 ? 0
           : N >= tuning::kLuSmallCapMinNF64 ? 3
           : kFast ? 0 : tuning::LuSmallV1MinBlocksF64(int(OUT), N, kc);
  }
  static constexpr int kGroups = kThreads / kLanes;               // matrices in flight per block
  static constexpr int kG0 = (kLuSmallStageBytes + kGroups * kMatBytes / 2) / (kGroups * kMatBytes);
  static constexpr int kGAlign = kGroups >= kV ? 1 : kV / kGroups;  // chunk stays 16-byte aligned
  static constexpr int kG = RoundUp(kG0 < 1 ? 1 : kG0, kGAlign);  // matrices per group per chunk
  static constexpr int kChunk = kGroups * kG;
  static_assert(kChunk % kV == 0, "a chunk must start 16-byte aligned");
  static constexpr int kBuf = RoundUp(kChunk * kMS, kV);          // elements per stage
  // v1: broadcast rows through shared memory (columns 0..N, gesv's b included), 2 per group
  static constexpr int kTS = kFast ? 0 : RoundUp(N + 1, kV);
  static constexpr int kTb = kGroups * 2 * kTS;
  static constexpr size_t kSmem = (size_t(2) * kBuf + kTb) * sizeof(T) + size_t(kGroups) * N * sizeof(int);
};

// Shared offset of chunk element e (e = m * N * N + i * N + j) in config C's layout.
template <typename C>
__device__ __forceinline__ int LuAt(int e) {
  if constexpr (C::kSwizzle) {
    return e ^ C::GranuleXor(e / C::kNN);
  } else if constexpr (C::kDense) {
    return e;
  } else {
    const int m = e / C::kNN, rr = e - m * C::kNN;
    const int i = rr / C::kN, j = rr - i * C::kN;
    return m * C::kMS + i * C::kRS + j;
  }
}

// Copies `total` contiguous elements of a chunk between global and shared memory (block-wide).
// LOAD: cp.async global -> shared (caller commits); else plain stores shared -> global.
template <typename T, typename C, bool LOAD>
__device__ __forceinline__ void LuCopyChunk(T* smem, T* gmem, int total, bool vec) {
  using VT = typename LuScalar<T>::type;
  constexpr int V = C::kV;
  int done = 0;
  if (vec) {
    const int ng = total / V;
#pragma unroll 4
    for (int q = threadIdx.x; q < ng; q += C::kThreads) {
      if constexpr (LOAD)
        CpAsync<16>(smem + LuAt<C>(q * V), gmem + q * V);
      else
        *reinterpret_cast<VT*>(gmem + q * V) = *reinterpret_cast<const VT*>(smem + LuAt<C>(q * V));
    }
    done = ng * V;
  }
  for (int e = done + threadIdx.x; e < total; e += C::kThreads) {  // unaligned buffers / dense tail
    if constexpr (LOAD)
      CpAsync<sizeof(T)>(smem + LuAt<C>(e), gmem + e);
    else
      gmem[e] = smem[LuAt<C>(e)];
  }
}

// What one group's factorization leaves in each lane besides row[][] and pos[] (slot s: the lane's
// row r + s * L).
template <typename T, int R>
struct LuLaneState {
  int info = 0;         // 1-based first zero pivot (same in every lane)
  int parity = 0;       // # steps whose pivot row was not already in place (same in every lane)
  unsigned piv[R] = {};  // pivots[r + s * L]
  T inv[R] = {};         // 1 / U(pos, pos) (rounded reciprocal)
  T diag[R] = {};        // U(pos, pos)
};

// Factors the group's matrix in place (see the header comment). GJ: Gauss-Jordan inverse instead
// of getf2. NC > N columns (gesv k = 1: b in column N): Gauss-Jordan on [A | b] for the columns
// right of j: the rows above the pivot are eliminated too (with multipliers row[j] / pivot), so at
// the end row r holds only U(pos, pos) and b', and x(pos) = b' / U(pos, pos): no back substitution.
// Lanes are busy with their own row either way, so the extra rows cost no instructions; the
// unpivoted rows and pivots are getf2's, but row[c < N] no longer holds the LU factor.
// tb: v1's 2 x kTS broadcast rows; spl (or null): spl[j] = original row at j.
// The pivot row: v2 (sub-warp groups, 4 matrices per warp at n <= 16) by one shuffle per element
// (f64: two) from the pivot's lane: each shuffle serves all groups of the warp, and the pivot lanes'
// stores, the __syncwarp and the unused head of the first granule go away (+0-20 % measured). v1 (one
// matrix per warp) by the pivot lane's 16-byte stores + broadcast 16-byte loads: shuffles there cost
// 2-4x the instructions for one matrix and measured 5-15 % slower.
template <typename T, int N, int NC, int L, int R, bool GJ, bool FAST>
__device__ __forceinline__ void LuFactor(T (&row)[R][NC], unsigned (&pos)[R], int r, unsigned gmask, T* tb, int* spl,
                                         LuLaneState<T, R>& st) {
  using S = LuScalar<T>;
  using VT = typename S::type;
  constexpr int V = S::kN, TS = RoundUp(N + 1, V);
  static_assert(!GJ || NC == N, "Gauss-Jordan has no extra columns");
  constexpr bool kFoldGJ = NC > N;  // gesv k = 1: eliminate above the pivot too (see above)
  constexpr bool kBranchFree = sizeof(T) == 4 || N >= tuning::kLuSmallBranchFreeMinNF64;  // v1 update
  // v1, float: the pivot's reciprocal and getf2's scaling under ONE range test a step, and info
  // from the pivots once at the end (see v1's update). v2 and double as before: there the same
  // change raised registers (f32 n = 16 96 -> 118-128) or spills (ptxas, 2026-12-06 c).
  constexpr bool kOneTest = !FAST && !GJ && S::kHasRcpFast;
  // v2, float: the same branch-free update (2-17 % faster getrf, 10-24 % the fold at n = 9..16,
  // bench/NOTES.md 2026-12-06 d).
  constexpr bool kV2BranchFree = FAST && !GJ && sizeof(T) == 4;
  bool real[R];
#pragma unroll
  for (int s = 0; s < R; ++s) real[s] = r + s * L < N;
  // FAST: the argmax of step j + 1 is issued as soon as column j + 1 is updated, so its reductions
  // overlap the rest of step j's FMAs. Else it runs at the top of each step.
  LuPivot next{0u, false, 0};
  if constexpr (FAST) {
    T x[R];
#pragma unroll
    for (int s = 0; s < R; ++s) x[s] = row[s][0];
    next = LuGroupPivot<L, true>(x, real, pos, gmask);
  }
#pragma unroll
  for (int j = 0; j < N; ++j) {
    if constexpr (!FAST) {
      T x[R];
      bool act[R];
#pragma unroll
      for (int s = 0; s < R; ++s) x[s] = row[s][j], act[s] = real[s] && pos[s] >= unsigned(j);
      next = LuGroupPivot<L, false>(x, act, pos, gmask);
    }
    const unsigned pm = next.pos;
    bool is_piv[R];
#pragma unroll
    for (int s = 0; s < R; ++s) {
      is_piv[s] = next.mine && pos[s] == pm;
      if (spl && is_piv[s]) spl[j] = r + s * L;
    }
    T wp[NC];  // the pivot row, columns >= j (getf2) / all (Gauss-Jordan)
    if constexpr (!FAST) {  // v1: through shared memory (see above)
      T* t = tb + (j & 1) * TS;
      const int g0 = GJ ? 0 : (j / V) * V;  // getf2 needs columns >= j only
      if (is_piv[0]) {
#pragma unroll
        for (int kk = g0; kk < NC; kk += V) {
          T w[V];
#pragma unroll
          for (int e = 0; e < V; ++e) w[e] = kk + e < NC ? row[0][kk + e < NC ? kk + e : 0] : T(0);
          *reinterpret_cast<VT*>(t + kk) = S::Make(w);
        }
      }
      __syncwarp();
#pragma unroll
      for (int kk = g0; kk < NC; kk += V) {
        const VT v = *reinterpret_cast<const VT*>(t + kk);
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (kk + e < NC) wp[kk + e] = S::Get(v, e);
      }
    } else {
#pragma unroll
      for (int c = GJ ? 0 : j; c < (j + 1 < N || kFoldGJ ? NC : N); ++c) {  // last getf2 step: b not needed
        T v = row[0][c];
#pragma unroll
        for (int s = 1; s < R; ++s) v = is_piv[s] ? row[s][c] : v;  // matters in the pivot's lane only
        wp[c] = __shfl_sync(0xffffffffu, v, next.src);
      }
    }
    const T pv = wp[j];
    // kOneTest: sfmin <= |pv| < 2^126 (every pivot of a finite, not extremely scaled matrix) takes
    // __frcp_rn's fast path inline and the multiply; Rcp's own range test and getf2's sfmin test
    // were two branches a step (ncu f32 n = 24: 15 instructions from the pivot's load to l).
    T inv, l1 = T(0);  // kOneTest: l1 = row[0][j] scaled as getf2 scales it (inv and l1 under one test)
    if constexpr (kOneTest) {
      if (fabs(pv) >= S::kSfmin && fabs(pv) < S::kRcpFastMax) {
        inv = S::RcpFast(pv);
        l1 = row[0][j] * inv;
      } else {
        inv = S::Rcp(pv);
        l1 = fabs(pv) >= S::kSfmin || pv != pv ? row[0][j] * inv : pv != T(0) ? row[0][j] / pv : row[0][j];
      }
    } else {
      inv = S::Rcp(pv);
    }
    st.parity ^= int(pm != unsigned(j));
    if (!kOneTest && st.info == 0 && pv == T(0)) st.info = j + 1;
    bool below[R], elim[R];
#pragma unroll
    for (int s = 0; s < R; ++s) {
      // exchange positions j and pm (pm == j: nothing moves)
      if (pos[s] == unsigned(j)) pos[s] = pm;
      else if (is_piv[s]) pos[s] = j;
      if (r + s * L == j) st.piv[s] = pm;
      if (is_piv[s]) st.inv[s] = inv, st.diag[s] = pv;
      below[s] = real[s] && pos[s] > unsigned(j);  // rows below the pivot
      elim[s] = kFoldGJ ? real[s] && !is_piv[s] : below[s];  // rows updated this step
    }
    const int j1 = j + 1 < N ? j + 1 : j;  // column of the next argmax
    if constexpr (!FAST) {  // v1 update (one row per lane)
      if constexpr (GJ) {
        // pivot row: row *= 1/pv (as row + (inv - 1) * row); others: row -= (row[j] / pv) * pivot
        // row, and column j becomes the inverse's column (inv, resp. -row[j] / pv).
        const T m = is_piv[0] ? inv - T(1) : -(row[0][j] * inv);
#pragma unroll
        for (int c = 0; c < N; ++c)
          if (c != j) row[0][c] = fma(m, wp[c], row[0][c]);
        row[0][j] = is_piv[0] ? inv : m;
      } else if (kBranchFree || elim[0]) {
        // kBranchFree: rows not eliminated take l = 0 and run the same FMAs (no divergence; a
        // non-finite pivot row, only from a non-finite input, makes 0 * inf = NaN in that matrix's
        // earlier U rows, as in the warp class). The 1 / pivot choice is warp-uniform.
        T l = row[0][j] * inv;  // LAPACK: scale by 1/pv
        if (kOneTest) l = l1;
        else if (!(fabs(pv) >= S::kSfmin || pv != pv)) l = pv != T(0) ? row[0][j] / pv : row[0][j];  // tiny: divide
        if (elim[0]) row[0][j] = l;
        else l = T(0);
#pragma unroll
        for (int c = j + 1; c < NC; ++c) row[0][c] = fma(-l, wp[c], row[0][c]);
      }
    } else if constexpr (GJ) {
      T m[R];
#pragma unroll
      for (int s = 0; s < R; ++s) {
        m[s] = is_piv[s] ? inv - T(1) : -(row[s][j] * inv);
        if (j + 1 < N) row[s][j1] = fma(m[s], wp[j1], row[s][j1]);
      }
      if (j + 1 < N) {
        T x[R];
#pragma unroll
        for (int s = 0; s < R; ++s) x[s] = row[s][j1];
        next = LuGroupPivot<L, true>(x, below, pos, gmask);
      }
#pragma unroll
      for (int s = 0; s < R; ++s) {
#pragma unroll
        for (int c = 0; c < N; ++c)
          if (c != j && c != j + 1) row[s][c] = fma(m[s], wp[c], row[s][c]);
        row[s][j] = is_piv[s] ? inv : m[s];
      }
    } else {
      const bool mul = fabs(pv) >= S::kSfmin || pv != pv;  // LAPACK: scale by 1/pv
      T l[R];
      if constexpr (kV2BranchFree) {  // every row runs the FMAs, l = 0 where not eliminated (v1's kBranchFree)
        T ls[R];
#pragma unroll
        for (int s = 0; s < R; ++s) ls[s] = row[s][j] * inv;
        if (!mul) {  // tiny pivot: divide; zero: no scaling (warp-uniform within a group)
#pragma unroll
          for (int s = 0; s < R; ++s) ls[s] = pv != T(0) ? row[s][j] / pv : row[s][j];
        }
#pragma unroll
        for (int s = 0; s < R; ++s) {
          l[s] = elim[s] ? ls[s] : T(0);
          if (elim[s]) row[s][j] = ls[s];
          if (j + 1 < N) row[s][j1] = fma(-l[s], wp[j1], row[s][j1]);
        }
      } else {
#pragma unroll
        for (int s = 0; s < R; ++s) {
          l[s] = T(0);
          if (elim[s]) {
            if (mul) l[s] = row[s][j] * inv;
            else l[s] = pv != T(0) ? row[s][j] / pv : row[s][j];  // tiny pivot: divide; zero: no scaling
            row[s][j] = l[s];
            if (j + 1 < N) row[s][j1] = fma(-l[s], wp[j1], row[s][j1]);
          }
        }
      }
      if (j + 1 < N) {
        T x[R];
#pragma unroll
        for (int s = 0; s < R; ++s) x[s] = row[s][j1];
        next = LuGroupPivot<L, true>(x, below, pos, gmask);
      }
#pragma unroll
      for (int s = 0; s < R; ++s) {
        if (kV2BranchFree || elim[s]) {  // the last step has no column j + 1 < N: it starts at b (column N)
#pragma unroll
          for (int c = j + 1 < N ? j + 2 : j + 1; c < NC; ++c) row[s][c] = fma(-l[s], wp[c], row[s][c]);
        }
      }
    }
  }
  if constexpr (kOneTest) {  // info (LAPACK's first zero pivot) from each row's pivot, once
    unsigned zero = 0xffffffffu;
#pragma unroll
    for (int s = 0; s < R; ++s)
      if (real[s] && st.diag[s] == T(0)) zero = min(zero, pos[s]);
    zero = LuMinReduce<L>(zero, gmask);
    st.info = zero == 0xffffffffu ? 0 : int(zero) + 1;
  }
  __syncwarp();  // spl is read by every lane afterwards
}

// U x = y for the group's factored matrix (row[s][c < N] holds U at c >= pos), KC columns of y in
// registers. The entry of position j lives in lane spl[j] % L, slot spl[j] / L.
template <typename T, int N, int NC, int L, int R, int KC>
__device__ __forceinline__ void LuBackSolve(const T (&row)[R][NC], const unsigned (&pos)[R], const int* spl,
                                            const T (&inv)[R], T (&y)[R][KC]) {
#pragma unroll
  for (int j = N - 1; j >= 0; --j) {
    const int src = spl[j], sl = src / L;
#pragma unroll
    for (int q = 0; q < KC; ++q) {
      T v = T(0);
#pragma unroll
      for (int s = 0; s < R; ++s) {
        if (pos[s] == unsigned(j)) y[s][q] *= inv[s];
        v = sl == s ? y[s][q] : v;
      }
      const T xj = ShflIdx(v, src % L, L);
#pragma unroll
      for (int s = 0; s < R; ++s)
        if (pos[s] < unsigned(j)) y[s][q] = fma(-row[s][j], xj, y[s][q]);
    }
  }
}

// Solves A X = B for the group's factored matrix, KC columns at a time (b, x: this matrix's n x k).
// (k = 1 does not come here: b rides along the factor as column N, see the kernel.)
template <typename T, int N, int L, int R, int KC>
__device__ __forceinline__ void LuSolve(const T (&row)[R][N], const unsigned (&pos)[R], int r, const int* spl,
                                        const T (&inv)[R], const T* b, T* x, int k, bool live) {
  for (int c0 = 0; c0 < k; c0 += KC) {  // k is uniform: every lane runs every shuffle
    T y[R][KC];
#pragma unroll
    for (int s = 0; s < R; ++s)
#pragma unroll
      for (int q = 0; q < KC; ++q)
        y[s][q] = (live && r + s * L < N && c0 + q < k) ? b[int64_t(r + s * L) * k + c0 + q] : T(0);
#pragma unroll
    for (int j = 0; j + 1 < N; ++j) {  // L y = P b: position j's entry is final at step j
      const int src = spl[j], sl = src / L;
#pragma unroll
      for (int q = 0; q < KC; ++q) {
        T v = y[0][q];
#pragma unroll
        for (int s = 1; s < R; ++s) v = sl == s ? y[s][q] : v;
        const T yj = ShflIdx(v, src % L, L);
#pragma unroll
        for (int s = 0; s < R; ++s)
          if (pos[s] > unsigned(j)) y[s][q] = fma(-row[s][j], yj, y[s][q]);
      }
    }
    LuBackSolve<T, N, N, L, R, KC>(row, pos, spl, inv, y);
#pragma unroll
    for (int s = 0; s < R; ++s)
#pragma unroll
      for (int q = 0; q < KC; ++q)
        if (live && r + s * L < N && c0 + q < k) x[int64_t(pos[s]) * k + c0 + q] = y[s][q];
  }
}

// sign / logabsdet from the lanes' diagonal entries (jnp.linalg.slogdet's formula).
template <typename T, int N, int L, int R>
__device__ __forceinline__ void LuSlogdet(const LuLaneState<T, R>& st, int r, unsigned gmask, bool live, T* sign,
                                          T* logabsdet) {
  T la = T(0);
  int neg = 0;
  bool zero = false;
#pragma unroll
  for (int s = 0; s < R; ++s) {
    const bool real = r + s * L < N;
    if (real) la += LuScalar<T>::Log(fabs(st.diag[s]));
    neg += __popc(__ballot_sync(0xffffffffu, real && st.diag[s] < T(0)) & gmask);
    zero |= (__ballot_sync(0xffffffffu, real && st.diag[s] == T(0)) & gmask) != 0;
  }
#pragma unroll
  for (int o = L / 2; o > 0; o /= 2) la += ShflXor(la, o, L);
  if (live && r == 0) {
    const int odd = (st.parity + neg) & 1;
    *sign = zero ? T(0) : odd ? T(-1) : T(1);
    *logabsdet = zero ? -LuScalar<T>::Rcp(T(0)) : la;  // -inf
  }
}

template <typename T, int N, LuOutput OUT, int KC>
__global__ void __launch_bounds__(LuSmallCfg<T, N, OUT>::kThreads, LuSmallCfg<T, N, OUT>::MinBlocks(KC))
    LuSmallKernel(LuArgs<T> args, bool vec) {
  using C = LuSmallCfg<T, N, OUT>;
  using VT = typename LuScalar<T>::type;
  constexpr int L = C::kLanes, R = C::kRows, G = C::kGroups, CH = C::kChunk, RS = C::kRS, V = C::kV;
  constexpr bool kGJ = OUT == LuOutput::kInverse;
  constexpr bool kStoreMat = OUT == LuOutput::kFactor || OUT == LuOutput::kInverse;
  // gesv k <= 1 (KC == 1): b is column N of each lane's row, so the factor's elimination is the
  // forward substitution; only U x = y remains.
  constexpr bool kFold = OUT == LuOutput::kSolve && KC == 1;
  constexpr int NC = N + (kFold ? 1 : 0);
  // spl (position -> row) is read by the inverse's scatter and the k > 1 solves; the fold needs none.
  constexpr bool kSpl = OUT == LuOutput::kInverse || (OUT == LuOutput::kSolve && !kFold);
  extern __shared__ __align__(16) unsigned char lu_smem[];
  T* sm = reinterpret_cast<T*>(lu_smem);
  const int lane = threadIdx.x & 31, g = threadIdx.x / L, r = threadIdx.x % L;
  const unsigned gmask = L == 32 ? 0xffffffffu : ((1u << L) - 1u) << (lane & ~(L - 1));
  T* tb = sm + 2 * C::kBuf + g * 2 * C::kTS;
  int* spl = reinterpret_cast<int*>(sm + 2 * C::kBuf + C::kTb) + g * N;
  const int64_t batch = args.batch;
  const int64_t nchunk = CeilDiv(batch, CH);
  auto count = [&](int64_t c) { return static_cast<int>(batch - c * CH < CH ? batch - c * CH : CH); };
  int64_t ch = blockIdx.x;
  if (ch >= nchunk) return;
  LuCopyChunk<T, C, true>(sm, const_cast<T*>(args.a) + ch * CH * C::kNN, count(ch) * C::kNN, vec);
  CpAsyncCommit();
  for (int st = 0; ch < nchunk; ch += gridDim.x, st ^= 1) {
    const int64_t nxt = ch + gridDim.x;
    if (nxt < nchunk)
      LuCopyChunk<T, C, true>(sm + (st ^ 1) * C::kBuf, const_cast<T*>(args.a) + nxt * CH * C::kNN,
                              count(nxt) * C::kNN, vec);
    CpAsyncCommit();
    CpAsyncWait<1>();
    __syncthreads();
    const int64_t m0 = ch * CH;
    const int cnt = count(ch);
    T* bufc = sm + st * C::kBuf;
    for (int gi = 0; gi < C::kG && gi * G < cnt; ++gi) {  // block-uniform trip count
      const int mi = gi * G + g;
      const bool live = mi < cnt;
      const int64_t mat = m0 + mi;
      T* my = bufc + mi * C::kMS;
      T row[R][NC];
      unsigned pos[R];  // padding rows (>= N) keep pos >= N: never a candidate
#pragma unroll
      for (int s = 0; s < R; ++s) {
        const int ri = r + s * L;
        pos[s] = ri;
        if (ri < N) {
          if constexpr (C::kRowVec) {
#pragma unroll
            for (int kk = 0; kk < N; kk += V) {
              const VT v = *reinterpret_cast<const VT*>(my + ri * RS + kk);
#pragma unroll
              for (int e = 0; e < V; ++e) row[s][kk + e] = LuScalar<T>::Get(v, e);
            }
          } else {
#pragma unroll
            for (int c = 0; c < N; ++c) row[s][c] = my[ri * RS + c];
          }
        } else {
#pragma unroll
          for (int c = 0; c < N; ++c) row[s][c] = T(0);
        }
        if constexpr (kFold) row[s][N] = (live && ri < N && args.k == 1) ? args.b[mat * N + ri] : T(0);
      }
      LuLaneState<T, R> lst;
      LuFactor<T, N, NC, L, R, kGJ, C::kFast>(row, pos, r, gmask, tb, kSpl ? spl : nullptr, lst);
      if constexpr (OUT == LuOutput::kFactor) {
#pragma unroll
        for (int s = 0; s < R; ++s) {
          const int ri = r + s * L;
          if (ri < N) {  // the row lands at its final position (every row of `my` was read long ago)
            if constexpr (C::kRowVec) {
#pragma unroll
              for (int kk = 0; kk < N; kk += V)
                *reinterpret_cast<VT*>(my + pos[s] * RS + kk) = LuScalar<T>::Make(row[s] + kk);
            } else {
#pragma unroll
              for (int c = 0; c < N; ++c) my[pos[s] * RS + c] = row[s][c];
            }
            if (live) {
              args.pivots[mat * N + ri] = int32_t(lst.piv[s]);
              if (args.perm) args.perm[mat * N + pos[s]] = ri;
            }
          }
        }
        if (live && r == 0) args.info[mat] = lst.info;
      } else if constexpr (OUT == LuOutput::kInverse) {
        // inv(pos, spl[c]) = row[c]: Gauss-Jordan leaves the columns permuted by the pivot order.
#pragma unroll
        for (int s = 0; s < R; ++s) {
          if (r + s * L < N) {
#pragma unroll
            for (int c = 0; c < N; ++c) my[pos[s] * RS + spl[c]] = row[s][c];
          }
        }
        if (live && r == 0) args.info[mat] = lst.info;
      } else if constexpr (kFold) {
        if (args.k == 1) {  // uniform (k = 0: nothing to solve); Gauss-Jordan left b' = U(pos, pos) x
#pragma unroll
          for (int s = 0; s < R; ++s)
            if (live && r + s * L < N) args.x[mat * N + pos[s]] = row[s][N] * lst.inv[s];
        }
        if (live && r == 0) args.info[mat] = lst.info;
      } else if constexpr (OUT == LuOutput::kSolve) {
        const int64_t off = mat * N * static_cast<int64_t>(args.k);
        LuSolve<T, N, L, R, KC>(row, pos, r, spl, lst.inv, args.b + (live ? off : 0), args.x + (live ? off : 0),
                                args.k, live);
        if (live && r == 0) args.info[mat] = lst.info;
      } else {
        LuSlogdet<T, N, L, R>(lst, r, gmask, live, args.sign + (live ? mat : 0), args.logabsdet + (live ? mat : 0));
      }
      __syncwarp();  // tb / spl are reused by this group's next matrix
    }
    if constexpr (kStoreMat) {
      __syncthreads();
      LuCopyChunk<T, C, false>(bufc, (OUT == LuOutput::kFactor ? args.lu : args.inv) + m0 * C::kNN, cnt * C::kNN,
                               vec);
    }
    __syncthreads();  // this stage is refilled by the next iteration's copies
  }
}

// ================================================================================================
// tiny: a THREAD per matrix (n <= kLuTinyMaxN), a[i][c] in registers, rows swapped physically
// (selects on the runtime pivot index), so no cross-lane traffic at all. Same chunk staging as the
// group kernel; matrices padded to an odd number of 16-byte granules in shared memory so the
// per-thread vector loads of 8 threads hit distinct banks, or, where a matrix is a power-of-two
// number of granules (f64 n = 2, 4, 8; f32 n = 4, 8), stored densely with matrix m's granules
// permuted by XOR with GranuleXor(m): the contiguous staging copies and the per-thread loads are
// then both conflict-free, and the stage is a third smaller (f64 n = 2, padded: ncu saw 3.8-way
// conflicts and 7 blocks per SM, bound by shared memory). pivots / perm leave through shared
// memory too (coalesced).
// ================================================================================================
template <typename T, int N>
struct LuTinyCfg {
  static constexpr int kN = N;
  static constexpr int kV = LuScalar<T>::kN;
  static constexpr int kNN = N * N;
  static constexpr int kRS = N;
  static constexpr int kGranules = kNN % kV == 0 ? kNN / kV : 0;  // per matrix (0: not whole)
  static constexpr bool kSwizzle = kGranules >= 2 && (kGranules & (kGranules - 1)) == 0;
  static constexpr int kMS = !kSwizzle && kGranules % 2 == 0 && kGranules > 0 ? kNN + kV : kNN;
  static constexpr bool kDense = kMS == kNN;
  // Element offset XOR of matrix m (kSwizzle): granule k of m sits at k ^ f(m). Eight consecutive
  // matrices (one 128-byte phase of 16-byte loads) then cover all eight bank groups for every k.
  __device__ static int GranuleXor(int m) {
    if constexpr (!kSwizzle) {
      return 0;
    } else {
      constexpr int kSpan = kGranules >= 8 ? 1 : 8 / kGranules;  // matrices per 8 granules
      constexpr int kMask = (kGranules >= 8 ? 8 : kGranules) - 1;
      return ((m / kSpan) & kMask) * kV;
    }
  }
  static constexpr bool kVecLoad = kNN % kV == 0;  // each matrix is whole granules (16 B aligned)
  static constexpr int kM0 = kLuSmallStageBytes / (32 * kNN * int(sizeof(T)));
  static constexpr int kThreads = 32 * (kM0 < 1 ? 1 : kM0 > 4 ? 4 : kM0);
  static constexpr int kG0 = kLuSmallStageBytes / (kThreads * kNN * int(sizeof(T)));
  static constexpr int kG = kG0 < 1 ? 1 : kG0;  // matrices per thread per chunk
  static constexpr int kChunk = kThreads * kG;
  static constexpr int kBuf = RoundUp(kChunk * kMS, kV);
  static constexpr size_t kSmem = size_t(2) * kBuf * sizeof(T) + size_t(2) * kChunk * N * sizeof(int);
};

// getf2 with physical row swaps on a thread's registers. Returns info; piv[j] = LAPACK ipiv - 1,
// perm[i] = original row now in row i.
template <typename T, int N>
__device__ __forceinline__ int LuTinyFactor(T (&a)[N][N], int (&piv)[N], int (&perm)[N]) {
  using S = LuScalar<T>;
  int info = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) perm[i] = i;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    int p = j;
    auto best = S::Key(a[j][j]);
#pragma unroll
    for (int i = j + 1; i < N; ++i) {  // first max: strictly greater replaces
      const auto k = S::Key(a[i][j]);
      if (k > best) best = k, p = i;
    }
    piv[j] = p;
#pragma unroll
    for (int i = j + 1; i < N; ++i) {
      const bool sw = p == i;
#pragma unroll
      for (int c = 0; c < N; ++c) {
        const T t = a[j][c];
        a[j][c] = sw ? a[i][c] : t;
        a[i][c] = sw ? t : a[i][c];
      }
      const int t = perm[j];
      perm[j] = sw ? perm[i] : t;
      perm[i] = sw ? t : perm[i];
    }
    const T pv = a[j][j];
    if (info == 0 && pv == T(0)) info = j + 1;
    const T inv = S::Rcp(pv);
    const bool mul = fabs(pv) >= S::kSfmin || pv != pv;
#pragma unroll
    for (int i = j + 1; i < N; ++i) {
      T l;
      if (mul) l = a[i][j] * inv;
      else l = pv != T(0) ? a[i][j] / pv : a[i][j];
      a[i][j] = l;
#pragma unroll
      for (int c = j + 1; c < N; ++c) a[i][c] = fma(-l, a[j][c], a[i][c]);
    }
  }
  return info;
}

template <typename T, int N, LuOutput OUT>
__global__ void __launch_bounds__(LuTinyCfg<T, N>::kThreads) LuTinyKernel(LuArgs<T> args, bool vec) {
  using C = LuTinyCfg<T, N>;
  using VT = typename LuScalar<T>::type;
  constexpr int CH = C::kChunk, V = C::kV;
  constexpr bool kStoreMat = OUT == LuOutput::kFactor || OUT == LuOutput::kInverse;
  extern __shared__ __align__(16) unsigned char lu_tiny_smem[];
  T* sm = reinterpret_cast<T*>(lu_tiny_smem);
  int* ipiv = reinterpret_cast<int*>(sm + 2 * C::kBuf);  // chunk x N pivots, then chunk x N perm
  const int t = threadIdx.x;
  const int64_t batch = args.batch;
  const int64_t nchunk = CeilDiv(batch, CH);
  auto count = [&](int64_t c) { return static_cast<int>(batch - c * CH < CH ? batch - c * CH : CH); };
  int64_t ch = blockIdx.x;
  if (ch >= nchunk) return;
  LuCopyChunk<T, C, true>(sm, const_cast<T*>(args.a) + ch * CH * C::kNN, count(ch) * C::kNN, vec);
  CpAsyncCommit();
  for (int st = 0; ch < nchunk; ch += gridDim.x, st ^= 1) {
    const int64_t nxt = ch + gridDim.x;
    if (nxt < nchunk)
      LuCopyChunk<T, C, true>(sm + (st ^ 1) * C::kBuf, const_cast<T*>(args.a) + nxt * CH * C::kNN,
                              count(nxt) * C::kNN, vec);
    CpAsyncCommit();
    CpAsyncWait<1>();
    __syncthreads();
    const int64_t m0 = ch * CH;
    const int cnt = count(ch);
    T* bufc = sm + st * C::kBuf;
    for (int gi = 0; gi < C::kG && gi * C::kThreads < cnt; ++gi) {
      const int mi = gi * C::kThreads + t;
      const bool live = mi < cnt;
      const int64_t mat = m0 + mi;
      T* my = bufc + mi * C::kMS;
      const int sx = C::GranuleXor(mi);  // element offsets within my are XOR-ed with it
      T a[N][N];
      if constexpr (C::kVecLoad) {
#pragma unroll
        for (int q = 0; q < C::kNN; q += V) {
          const VT v = *reinterpret_cast<const VT*>(my + (q ^ sx));
#pragma unroll
          for (int e = 0; e < V; ++e) a[(q + e) / N][(q + e) % N] = LuScalar<T>::Get(v, e);
        }
      } else {
#pragma unroll
        for (int e = 0; e < C::kNN; ++e) a[e / N][e % N] = my[e];
      }
      int piv[N], perm[N];
      const int info = LuTinyFactor<T, N>(a, piv, perm);
      if constexpr (OUT == LuOutput::kFactor) {
        if constexpr (C::kVecLoad) {
#pragma unroll
          for (int q = 0; q < C::kNN; q += V) {
            T w[V];
#pragma unroll
            for (int e = 0; e < V; ++e) w[e] = a[(q + e) / N][(q + e) % N];
            *reinterpret_cast<VT*>(my + (q ^ sx)) = LuScalar<T>::Make(w);
          }
        } else {
#pragma unroll
          for (int e = 0; e < C::kNN; ++e) my[e] = a[e / N][e % N];
        }
#pragma unroll
        for (int i = 0; i < N; ++i) ipiv[mi * N + i] = piv[i], ipiv[CH * N + mi * N + i] = perm[i];
        if (live) args.info[mat] = info;
      } else if constexpr (OUT == LuOutput::kInverse) {
        // A^-1 = U^-1 L^-1 P: column c of U^-1 L^-1 is column perm[c] of the inverse.
        T dinv[N];
#pragma unroll
        for (int i = 0; i < N; ++i) dinv[i] = LuScalar<T>::Rcp(a[i][i]);
#pragma unroll
        for (int c = 0; c < N; ++c) {
          T y[N];
#pragma unroll
          for (int i = 0; i < N; ++i) {  // L y = e_c
            T v = i == c ? T(1) : T(0);
#pragma unroll
            for (int m = c; m < i; ++m) v = fma(-a[i][m], y[m], v);
            y[i] = v;
          }
#pragma unroll
          for (int i = N - 1; i >= 0; --i) {  // U x = y
            T v = y[i];
#pragma unroll
            for (int m = i + 1; m < N; ++m) v = fma(-a[i][m], y[m], v);
            y[i] = v * dinv[i];
          }
#pragma unroll
          for (int i = 0; i < N; ++i) my[(i * N + perm[c]) ^ sx] = y[i];
        }
        if (live) args.info[mat] = info;
      } else if constexpr (OUT == LuOutput::kSolve) {
        T dinv[N];
#pragma unroll
        for (int i = 0; i < N; ++i) dinv[i] = LuScalar<T>::Rcp(a[i][i]);
        const int k = args.k;
        if (live) {
          const T* b = args.b + mat * N * int64_t(k);
          T* x = args.x + mat * N * int64_t(k);
          for (int c = 0; c < k; ++c) {  // b may alias x: column c is read whole before it is written
            T y[N];
#pragma unroll
            for (int i = 0; i < N; ++i) y[i] = b[int64_t(perm[i]) * k + c];
#pragma unroll
            for (int i = 0; i < N; ++i)
#pragma unroll
              for (int m = 0; m < i; ++m) y[i] = fma(-a[i][m], y[m], y[i]);
#pragma unroll
            for (int i = N - 1; i >= 0; --i) {
              T v = y[i];
#pragma unroll
              for (int m = i + 1; m < N; ++m) v = fma(-a[i][m], y[m], v);
              y[i] = v * dinv[i];
            }
#pragma unroll
            for (int i = 0; i < N; ++i) x[int64_t(i) * k + c] = y[i];
          }
          args.info[mat] = info;
        }
      } else {
        int odd = 0;
        bool zero = false;
        T la = T(0);
#pragma unroll
        for (int j = 0; j < N; ++j) {
          const T d = a[j][j];
          odd ^= int(piv[j] != j) ^ int(d < T(0));
          zero |= d == T(0);
          la += LuScalar<T>::Log(fabs(d));
        }
        if (live) {
          args.sign[mat] = zero ? T(0) : odd ? T(-1) : T(1);
          args.logabsdet[mat] = zero ? -LuScalar<T>::Rcp(T(0)) : la;
        }
      }
    }  // gi
    if constexpr (kStoreMat) {
      __syncthreads();
      LuCopyChunk<T, C, false>(bufc, (OUT == LuOutput::kFactor ? args.lu : args.inv) + m0 * C::kNN, cnt * C::kNN,
                               vec);
      if constexpr (OUT == LuOutput::kFactor) {
        for (int e = t; e < cnt * N; e += C::kThreads) {
          args.pivots[m0 * N + e] = ipiv[e];
          if (args.perm) args.perm[m0 * N + e] = ipiv[CH * N + e];
        }
      }
    }
    __syncthreads();  // this stage is refilled by the next iteration's copies
  }
}

template <typename T, int N, LuOutput OUT, int KC, bool TINY>
struct LuSmallTag {};  // keeps PersistentGrid's occupancy caches apart per kernel

template <typename T, int N, LuOutput OUT, int KC, bool TINY>
cudaError_t LuSmallLaunch(cudaStream_t s, const LuArgs<T>& args) {
  using C = std::conditional_t<TINY, LuTinyCfg<T, N>, LuSmallCfg<T, N, OUT>>;
  void (*kernel)(LuArgs<T>, bool);
  if constexpr (TINY) kernel = LuTinyKernel<T, N, OUT>;
  else kernel = LuSmallKernel<T, N, OUT, KC>;
  cudaError_t e;
  if (C::kSmem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::kSmem));
    if (e != cudaSuccess) return e;
  }
  unsigned grid = 0;
  e = PersistentGrid<LuSmallTag<T, N, OUT, KC, TINY>>(kernel, C::kThreads, C::kSmem, CeilDiv(args.batch, C::kChunk),
                                                       &grid);
  if (e != cudaSuccess) return e;
  const T* out = OUT == LuOutput::kFactor ? args.lu : OUT == LuOutput::kInverse ? args.inv : args.a;
  const bool vec = reinterpret_cast<uintptr_t>(args.a) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  kernel<<<grid, C::kThreads, C::kSmem, s>>>(args, vec);
  return cudaGetLastError();
}

template <typename T, int N>
cudaError_t LuSmallN(cudaStream_t s, const LuArgs<T>& args, LuOutput out) {
  constexpr bool kTiny = N <= kLuTinyMaxN;
  switch (out) {
    case LuOutput::kFactor: return LuSmallLaunch<T, N, LuOutput::kFactor, 1, kTiny>(s, args);
    case LuOutput::kSolve:  // group kernel: one column at a time for k == 1, else a granule's worth
      if constexpr (kTiny) return LuSmallLaunch<T, N, LuOutput::kSolve, 1, true>(s, args);
      else if (args.k <= 1) return LuSmallLaunch<T, N, LuOutput::kSolve, 1, false>(s, args);
      else return LuSmallLaunch<T, N, LuOutput::kSolve, LuScalar<T>::kN, false>(s, args);
    case LuOutput::kInverse: return LuSmallLaunch<T, N, LuOutput::kInverse, 1, kTiny>(s, args);
    case LuOutput::kSlogdet: return LuSmallLaunch<T, N, LuOutput::kSlogdet, 1, kTiny>(s, args);
  }
  return cudaErrorInvalidValue;
}

// The size switch for n in [LO, HI], generated from the index list (one .cu file per range).
template <typename T, int LO, int... I>
cudaError_t LuSmallSwitch(cudaStream_t s, const LuArgs<T>& args, LuOutput out, std::integer_sequence<int, I...>) {
  cudaError_t e = cudaErrorInvalidValue;
  (void)((args.n == LO + I && ((e = LuSmallN<T, LO + I>(s, args, out)), true)) || ...);
  return e;
}
template <typename T, int LO, int HI>
cudaError_t LuSmallRange(cudaStream_t s, const LuArgs<T>& args, LuOutput out) {
  return LuSmallSwitch<T, LO>(s, args, out, std::make_integer_sequence<int, HI - LO + 1>{});
}

// Instantiated ranges, one .cu file each (cuda/lu_small_f{32,64}{a,b,c}.cu); cuda/lu_small_dispatch.cu
// picks the range. Split so each file compiles in similar time (cost grows ~ N^2 per size).
constexpr int kLuSmallRangeA = 16;  // [1, 16]
constexpr int kLuSmallRangeB = 24;  // [17, 24]; [25, 32] is the third
static_assert(tuning::kLuSmallMaxN == 32, "update the instantiated ranges");

#define BATCHLA_LU_SMALL_RANGE(T, LO, HI) \
  cudaError_t LuSmallRange<T, LO, HI>(cudaStream_t, const LuArgs<T>&, LuOutput)

}  // namespace detail
}  // namespace batchla
