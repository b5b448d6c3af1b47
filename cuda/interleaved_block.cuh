// Interleaved-layout Cholesky (potrf), its solves (posv, potrs) and solve_triangular (trsm), ONE
// WARP PER MATRIX from shared memory (Kind::kBlock; issue 6, n ~ 25..64).
//
// The one-thread and lane-group kinds keep a matrix in the registers of 1..32 lanes; past
// n ~ 32 (f64 ~ 24) they spill or issue a shuffle per update, and run at 0.1-0.4 of the
// roofline. Here a block of kMats warps takes a WAVE of kMats consecutive matrices of the batch:
// one 32 B sector per element (i, j) in the interleaved layout (kMats = 8 float, 4 double), so
// the copy in is coalesced. cp.async puts every element of the wave in flight at once, straight
// into each matrix's own region of shared memory; then each warp factors one matrix there,
// left-looking in tile columns of 8 (the update of a tile column is a register-tiled product:
// per column p of the factor one broadcast load of the 8 row entries, one load per lane row, 8
// FMAs per lane row), the 8-wide panel right-looking with shuffles. posv folds its first
// right-hand side into the factor as a ninth panel column (the forward solve costs one FMA per
// update instead of a serial sweep) and solves backward tile by tile, reducing 8 dot products
// across the warp with one butterfly. potrs and trsm stage the given triangle the same way, turn
// its diagonal into reciprocals and run the same sweeps (the forward one tile by tile in registers).
//
// Storage of one matrix in shared memory ("tile columns", COLUMN-MAJOR LOWER): tile column t
// (columns 8t .. 8t+7) holds rows 8t .. NP-1, column by column: element (i, j), i >= 8 (j / 8),
// at ColBase(t) + (j - 8t) Len(t) + (i - 8t). Every column segment is contiguous (lane rows
// read conflict-free) and every aligned group of 8 rows of a column is 32 B aligned (one
// broadcast vector load). Rows above the diagonal inside a diagonal tile are stored but never
// read as results. After the factor the diagonal holds 1 / L(k, k) for posv (which never
// outputs L; the solves multiply by it) and L(k, k) for potrf; potrs / trsm invert theirs.
//
// Compiled for a padded size NP (a multiple of 8) and run for NP - 8 < n <= NP: rows and
// columns n .. NP-1 are zero-filled and their pivots taken as 1, i.e. the identity, which the
// factorization and the solves keep exact.
#pragma once

#include <cstdint>
#include <type_traits>
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "cuda/interleaved.cuh"
#include "cuda/interleaved_block_regs.cuh"

namespace batchla {
namespace il {

// Variant::alt of a block variant: whether registers are capped so that as many blocks fit
// an SM as its shared memory allows, and (double only) whether the tile columns' update runs on
// the tensor cores (DMMA m8n8k4, exact f64 FMA). The tuner times every form.
// Forms 4 / 5, posv only: the matrix in the warp's registers (interleaved_block_regs.cuh),
// uncapped, or capped at 128 (float: two blocks a SM) / 168 (double: three) registers.
// Forms 6 / 7, double only: right-looking, the trailing matrix in the warp's registers as DMMA
// accumulator tiles (FactorRight), uncapped or capped as form 5 (three blocks a SM).
enum BlockForm : int {
  kBlockUncapped = 0,
  kBlockCapped = 1,
  kBlockDmmaUncapped = 2,
  kBlockDmmaCapped = 3,
  kBlockRegs = kBlockFirstRegsForm,
  kBlockRegsCapped = 5,
  kBlockRight = kBlockFirstRightForm,
  kBlockRightCapped = 7,
};
constexpr bool BlockCapped(int form) {
  return form == kBlockCapped || form == kBlockDmmaCapped || form == kBlockRightCapped;
}
constexpr bool BlockDmma(int form) { return form == kBlockDmmaUncapped || form == kBlockDmmaCapped; }
constexpr bool BlockRegs(int form) { return form == kBlockRegs || form == kBlockRegsCapped; }
constexpr bool BlockRight(int form) { return form == kBlockRight || form == kBlockRightCapped; }

template <typename T, Op OP, int NP, int FORM = kBlockUncapped>
struct BlockBody {
  static_assert(NP % 8 == 0 && NP >= 8 && NP <= 64, "padded to whole tile columns, at most two rows per lane");
  static constexpr int kMats = BlockWarps(int(sizeof(T)));  // matrices per wave = warps per block
  static constexpr int kFixedWarps = kMats;
  static constexpr int kThreadsPerMatrix = 32;
  static constexpr bool kStaged = true;  // runs its own loop over waves (il::StagedKernel)
  static constexpr bool kPosv = OP == Op::kPosv;
  static constexpr bool kFactors = OP == Op::kPotrf || OP == Op::kPosv;  // else the factor is given
  static constexpr bool kSolves = OP != Op::kPotrf;                       // writes x, not L

  static constexpr int kTiles = NP / 8;
  static constexpr int Len(int t) { return NP - 8 * t; }                    // rows of tile column t
  static constexpr int ColBase(int t) { return 8 * (t * NP - 4 * t * (t - 1)); }  // sum of 8 Len(t') over t' < t
  static constexpr int kTri = ColBase(kTiles);
  // One matrix's region: the tile columns, then the current right-hand side column (b, then y,
  // then x, in place). The stride is 4 mod 8 words, so the 8 matrices' copies of one element sit
  // on 8 different banks.
  static constexpr int kMatStride = (kTri + NP + 7) / 8 * 8 + 4;
  static constexpr size_t kSharedBytes = size_t(kMats) * kMatStride * sizeof(T) + kMats * sizeof(int);

  // Register cap of the capped form: what the resident blocks (limited by shared memory,
  // 228 KB per SM and 1 KB reserved per block on sm_90) leave per thread, to a multiple of 8.
  // At most 64 warps per SM, and no cap below 64 registers (the panel's 8 or 9 columns of
  // accumulators per lane row, its broadcast row and addresses).
  static constexpr int kBySmem = int(228 * 1024 / (kSharedBytes + 1024));
  static constexpr int kBlocksPerSM = kBySmem < 64 / kMats ? kBySmem : 64 / kMats;
  static constexpr int kCapRegs = 65536 / (kBlocksPerSM * kMats * 32) / 8 * 8;
  static constexpr int kRegsFormCap = sizeof(T) == 4 ? 128 : 168;  // float 2 blocks a SM, double 3
  static constexpr int kMaxRegs = FORM == kBlockRegsCapped || FORM == kBlockRightCapped ? kRegsFormCap
                                  : !BlockCapped(FORM)     ? 255
                                  : kCapRegs < 64          ? 64
                                  : kCapRegs < 255         ? kCapRegs
                                                           : 255;
  static constexpr bool kDmma = BlockDmma(FORM);
  static_assert(!kDmma || (std::is_same_v<T, double> && kFactors), "the tensor-core update is double only (exact FMA)");
  static constexpr bool kRegs = BlockRegs(FORM);
  static_assert(!kRegs || kPosv, "the register form is posv's");
  static constexpr bool kRight = BlockRight(FORM);
  static_assert(!kRight || (std::is_same_v<T, double> && kFactors), "the right-looking form is double's (DMMA)");

  static size_t SharedBytes(int, int) { return kSharedBytes; }

  static __device__ __forceinline__ T Shfl(T v, int src) { return detail::ShflIdx(v, src); }

  // ---- the wave's copies in and out (whole block) --------------------------------------------
  // Thread (sub, m): matrix m of the wave, rows sub, sub + 32, ... of every column. A warp moves 4
  // (float) or 8 (double) rows of its column for 8 / 4 consecutive matrices: whole 32 B sectors
  // when the chunk holds whole waves (the library's chunks are multiples of 32).
  struct Slot {
    int m, sub;
    int64_t mat;   // index of the thread's matrix in the batch
    bool live;     // mat < the batch (the last wave may be partial)
    int64_t chunk, lane;
  };
  static __device__ __forceinline__ Slot SlotOf(const Args<T>& g, int64_t wave) {
    Slot s;
    s.m = threadIdx.x % kMats;
    s.sub = threadIdx.x / kMats;
    s.mat = wave * kMats + s.m;
    s.live = s.mat < g.chunks * g.c;
    const int64_t mat = s.live ? s.mat : 0;
    s.chunk = mat / g.c;
    s.lane = mat % g.c;
    return s;
  }

  // The op's lower triangle into the tile columns, zeros above the diagonal inside the diagonal
  // tiles and in the padding (whose pivots Factor takes as 1). The thread's addresses advance by
  // constant strides; per element: a pointer add, a predicate, one cp.async (the first form,
  // with the identity padding written by branches, spent 40 % of the kernel's instructions here).
  // potrf's symmetrize mode copies the lower triangle the same way (AverageWithMirror follows).
  static __device__ __forceinline__ void CopyMatrixIn(const Args<T>& g, const Slot& s, T* sm) {
    const int n = g.n;
    const T* a = g.a + s.chunk * int64_t(n) * n * g.c + s.lane;
    const TriangleStrides st(g.mode, n, g.c);
    T* mine = sm + s.m * kMatStride;
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(mine + s.sub));
    StaticFor<0, kTiles>([&](auto tc) {
      constexpr int t = decltype(tc)::value;
      constexpr int kLen = Len(t);
      const T* row = a + (8 * t + s.sub) * st.rs + 8 * t * st.cs;  // element (8t + sub, 8t)
#pragma unroll
      for (int q = 0; 32 * q < kLen; ++q) {
        const int rr = s.sub + 32 * q;  // row 8t + rr
        const bool real = s.live && 8 * t + rr < n;
        const T* src = row + 32 * q * st.rs;
        if (rr < kLen) {
#pragma unroll
          for (int cc = 0; cc < 8; ++cc)  // below the diagonal: rr >= cc (always for q > 0)
            CopyAsyncOrZero<int(sizeof(T))>(dst + (ColBase(t) + cc * kLen + 32 * q) * unsigned(sizeof(T)),
                                            src + cc * st.cs, real && (q > 0 || s.sub >= cc));
        }
      }
    });
  }

  // f(t, len, cc, j) for every column j = 8t + cc of every tile column t (len rows from 8t).
  template <class F>
  static __device__ __forceinline__ void ForEachColumn(F&& f) {
#pragma unroll 1
    for (int t = 0; t < kTiles; ++t) {
#pragma unroll
      for (int cc = 0; cc < 8; ++cc) f(t, Len(t), cc, 8 * t + cc);
    }
  }

  // potrf's symmetrize mode, after the thread's own copies of CopyMatrixIn have landed: each of
  // its elements (i, j) becomes (A(i, j) + A(j, i)) / 2, the mirror read 8 at a time (one tile
  // row's columns: 8 loads in flight, the same 32 B sectors a warp as the copy). The first form
  // read both elements of every pair through registers, a few loads in flight: f32 n = 64 potrf
  // took 726 us there against ~330 us reading one triangle.
  static __device__ __forceinline__ void AverageWithMirror(const Args<T>& g, const Slot& s, T* sm) {
    const int n = g.n;
    const T* a = g.a + s.chunk * int64_t(n) * n * g.c + s.lane;
    const int64_t rs = int64_t(n) * g.c, cs = g.c;
    T* mine = sm + s.m * kMatStride + s.sub;
    StaticFor<0, kTiles>([&](auto tc) {
      constexpr int t = decltype(tc)::value;
      constexpr int kLen = Len(t);
      const T* mirror = a + 8 * t * rs + (8 * t + s.sub) * cs;  // A(8t, 8t + sub): element (8t + sub, 8t)'s
#pragma unroll
      for (int q = 0; 32 * q < kLen; ++q) {
        const int rr = s.sub + 32 * q;  // row 8t + rr
        if (rr < kLen) {
          const bool real = s.live && 8 * t + rr < n;
          T up[8];
#pragma unroll
          for (int cc = 0; cc < 8; ++cc)  // zero where the copy zero-filled: the sum stays 0
            up[cc] = real && (q > 0 || s.sub >= cc) ? __ldg(mirror + 32 * q * cs + cc * rs) : T(0);
#pragma unroll
          for (int cc = 0; cc < 8; ++cc) {
            T& x = mine[ColBase(t) + cc * kLen + 32 * q];
            x = (x + up[cc]) * T(0.5);
          }
        }
      }
    });
  }

  // Column `col` of the right-hand sides into the matrix's vector (zero past n).
  static __device__ __forceinline__ void CopyRhsIn(const Args<T>& g, const Slot& s, int col, T* sm) {
    const int n = g.n;
    const T* b = g.b + s.chunk * int64_t(n) * g.k * g.c + s.lane + int64_t(col) * g.c;
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(sm + s.m * kMatStride + kTri));
#pragma unroll
    for (int i = s.sub; i < NP; i += 32)
      CopyAsyncOrZero<int(sizeof(T))>(dst + i * unsigned(sizeof(T)), b + i * int64_t(g.k) * g.c, s.live && i < n);
  }

  // x (the matrix's vector) out as column `col`, NaN where the factorization failed.
  static __device__ __forceinline__ void CopyXOut(const Args<T>& g, const Slot& s, int col, const T* sm,
                                                  const int* info) {
    if (!s.live) return;
    const int n = g.n;
    T* x = g.out + s.chunk * int64_t(n) * g.k * g.c + s.lane + int64_t(col) * g.c;
    const T* v = sm + s.m * kMatStride + kTri;
    const bool bad = info[s.m] != 0;
#pragma unroll
    for (int i = s.sub; i < NP; i += 32)
      if (i < n) x[i * int64_t(g.k) * g.c] = bad ? Scalar<T>::NaN() : v[i];
  }

  // L out as the whole (n, n) matrix: the lower triangle from the tile columns, zeros above.
  static __device__ __forceinline__ void CopyFactorOut(const Args<T>& g, const Slot& s, const T* sm,
                                                       const int* info) {
    if (!s.live) return;
    const int n = g.n;
    T* l = g.out + s.chunk * int64_t(n) * n * g.c + s.lane;
    const int64_t rs = int64_t(n) * g.c, cs = g.c;
    const T* mine = sm + s.m * kMatStride;
    const bool bad = info[s.m] != 0;
    ForEachColumn([&](int t, int len, int cc, int j) {
      if (j >= n) return;
      for (int i = s.sub; i < n; i += 32)  // above the tile (zero) or in it
        l[i * rs + j * cs] = i < j ? T(0) : bad ? Scalar<T>::NaN() : mine[ColBase(t) + cc * len + (i - 8 * t)];
    });
  }

  // ---- one warp, one matrix ----------------------------------------------------------------------
  // kDmma: tile column J := A(8J.., 8J..8J+7) - L(8J.., 0:8J) L(8J..8J+7, 0:8J)ᵀ in shared memory,
  // as len / 8 row blocks of 8 x 8 DMMA tiles, 4 columns p per instruction (one instruction for
  // 256 FMAs, against 8 FMA instructions per column p and row slot). Fragments (detail::MmaF64m8n8k4):
  // a = L(8J + 8 rb + g, p + q), b = L(8J + g, p + q) (the same load for rb = 0, negated), d
  // holds rows 8 rb + g, columns 2 q, 2 q + 1 of the tile column; g = lane / 4, q = lane % 4.
  static __device__ __forceinline__ void UpdateTileDmma(T* L, int lane, int J) {
    constexpr int kBlocks = NP / 8;  // row blocks of the longest tile column
    const int len = Len(J), blocks = len / 8, g = lane >> 2, q = lane & 3;
    T* col = L + ColBase(J);
    T d[kBlocks][2];
#pragma unroll
    for (int rb = 0; rb < kBlocks; ++rb)
#pragma unroll
      for (int e = 0; e < 2; ++e) d[rb][e] = rb < blocks ? col[(2 * q + e) * len + 8 * rb + g] : T(0);
#pragma unroll 1
    for (int P = 0; P < J; ++P) {
      const int len_p = Len(P);
      const T* from = L + ColBase(P) + 8 * (J - P) + g;  // row 8J + g of column 8P
#pragma unroll
      for (int k0 = 0; k0 < 8; k0 += 4) {
        const T* c = from + (k0 + q) * len_p;  // row 8J + g of column 8P + k0 + q
        const T b = -c[0];
#pragma unroll
        for (int rb = 0; rb < kBlocks; ++rb)
          if (rb < blocks) detail::MmaF64m8n8k4(d[rb], c[8 * rb], b);  // warp-uniform condition
      }
    }
#pragma unroll
    for (int rb = 0; rb < kBlocks; ++rb)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        if (rb < blocks) col[(2 * q + e) * len + 8 * rb + g] = d[rb][e];
    __syncwarp();
  }

  // Tile column J: the lane's R row slots (rows 8J + lane + 32 r) updated by the tile columns left
  // of J, then the 8-wide panel factored. Runtime J (the code for every J unrolled was ~126 KB and
  // stalled on instruction fetch); R is 2 while the column has more than 32 rows.
  // RIGHT (FactorRight): the tile column arrives updated; no update here, and every row's y goes
  // back (the later panels read it), not only the diagonal tile's.
  template <bool FOLD, int R, bool RIGHT = false>
  static __device__ __forceinline__ void FactorTile(T* L, T* y, int lane, int n, int J, int& info) {
    constexpr int C = FOLD ? 9 : 8;
    if constexpr (kDmma) UpdateTileDmma(L, lane, J);  // the 8 columns; the fold column below
    const int len = Len(J);
    T* col = L + ColBase(J);
    int row[R];  // the lane's rows, relative to 8J (clamped: a lane past the end redoes the last row)
    T acc[R][C];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      row[r] = lane + 32 * r < len ? lane + 32 * r : len - 1;
#pragma unroll
      for (int c = 0; c < 8; ++c) acc[r][c] = col[c * len + row[r]];
      if constexpr (FOLD) acc[r][8] = y[8 * J + row[r]];
    }
    // A lane past the end read row len - 1 above (and y's), which the lane that owns it writes at
    // the end: order the read before that write (compute-sanitizer racecheck, f64 posv n = 40,
    // both row-slot counts).
    __syncwarp();
    // The update, acc -= L(rows, p) L(8J .. 8J+7, p) for p < 8J: per column p one broadcast of
    // its 8 entries in the tile's rows, one load per row slot (kDmma: the fold column only).
#pragma unroll 1
    for (int P = 0; P < ((kDmma && !FOLD) || RIGHT ? 0 : J); ++P) {
      const int len_p = Len(P);
      const T* from = L + ColBase(P) + 8 * (J - P);  // row 8J of column 8P
      T yp[8];
      if constexpr (FOLD) detail::Load8(y + 8 * P, yp);
#pragma unroll
      for (int cp = 0; cp < 8; ++cp) {
        T top[8];
        if constexpr (!kDmma) detail::Load8(from + cp * len_p, top);
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const T li = from[cp * len_p + row[r]];
          if constexpr (!kDmma) {
#pragma unroll
            for (int c = 0; c < 8; ++c) acc[r][c] -= li * top[c];
          }
          if constexpr (FOLD) acc[r][8] -= li * yp[cp];
        }
      }
    }
    // The panel, right-looking: lane k (first slot) holds row 8J + k of the diagonal tile.
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      T d = 8 * J + k < n ? Shfl(acc[0][k], k) : T(1), rinv;  // the padding: identity
      RsqrtPivot(d, rinv, 8 * J + k, info);
      T yk = T(0);
      if constexpr (FOLD) yk = Shfl(acc[0][8], k) * rinv;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int i = lane + 32 * r;
        acc[r][k] = i > k ? acc[r][k] * rinv : i == k ? (kPosv ? rinv : d) : acc[r][k];
        if constexpr (FOLD) acc[r][8] = i > k ? acc[r][8] - acc[r][k] * yk : i == k ? yk : acc[r][8];
      }
#pragma unroll
      for (int c = k + 1; c < 8; ++c) {
        const T lc = Shfl(acc[0][k], c);  // L(8J + c, 8J + k), scaled by lane c
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r][c] -= acc[r][k] * lc;
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (lane + 32 * r < len)
#pragma unroll
        for (int c = 0; c < 8; ++c) col[c * len + lane + 32 * r] = acc[r][c];
    if constexpr (FOLD && RIGHT) {
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (lane + 32 * r < len) y[8 * J + lane + 32 * r] = acc[r][8];
    } else if constexpr (FOLD) {
      if (lane < 8) y[8 * J + lane] = acc[0][8];
    }
    __syncwarp();
  }

  // kRight: right-looking over the tile columns, the trailing matrix in the warp's registers as
  // m8n8k4 DMMA accumulator tiles: c[I][J] (J <= I) holds rows 8I + g, columns 8J + 2q + e
  // (g = lane / 4, q = lane % 4, e = 0, 1). Tile column J goes to its place in shared memory, the
  // panel factors it there (FactorTile<RIGHT>), and each tile right of it takes the rank-8 update
  // as two DMMAs from the panel's L: a = L(8I + g, 8J + q + 4h) is row block I's a fragment and
  // also tile column I's b fragment. Against the left-looking DMMA form (2 / 3), whose row blocks
  // each waited on a chain of 2J DMMAs through shared memory, every tile's update here is
  // independent of the others, and the update's operands never leave the registers. J is unrolled
  // (static register indices); the diagonal tiles' upper halves carry finite garbage no result reads.
  // Measured (bench/NOTES.md "Block kind, right-looking on DMMA"): even with form 4 at the same
  // warps a SM (the panels and the solve dominate); form 7 fits 168 registers without spilling,
  // 12 warps a SM at pads 48 / 56, f64 posv n = 41..48 1.15-1.19x in the library.
  template <bool FOLD>
  static __device__ __forceinline__ int FactorRight(T* L, T* y, int lane, int n) {
    const int g = lane >> 2, q = lane & 3;
    T c[kTiles][kTiles][2];
    StaticFor<1, kTiles>([&](auto jc) {  // tile column 0 is factored where it was staged
      constexpr int J = decltype(jc)::value;
#pragma unroll
      for (int I = J; I < kTiles; ++I)
#pragma unroll
        for (int e = 0; e < 2; ++e) c[I][J][e] = L[ColBase(J) + (2 * q + e) * Len(J) + 8 * (I - J) + g];
    });
    int info = 0;
    StaticFor<0, kTiles>([&](auto jc) {
      constexpr int J = decltype(jc)::value;
      constexpr int len = Len(J);
      T* col = L + ColBase(J);
      if constexpr (J > 0) {
#pragma unroll
        for (int I = J; I < kTiles; ++I)
#pragma unroll
          for (int e = 0; e < 2; ++e) col[(2 * q + e) * len + 8 * (I - J) + g] = c[I][J][e];
        __syncwarp();
      }
      FactorTile<FOLD, (len > 32 ? 2 : 1), true>(L, y, lane, n, J, info);
      if constexpr (J + 1 < kTiles) {
        T a[kTiles][2], na[kTiles][2];
#pragma unroll
        for (int I = J + 1; I < kTiles; ++I)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            a[I][h] = col[(q + 4 * h) * len + 8 * (I - J) + g];
            na[I][h] = -a[I][h];
          }
#pragma unroll
        for (int I = J + 1; I < kTiles; ++I)
#pragma unroll
          for (int J2 = J + 1; J2 <= I; ++J2)
#pragma unroll
            for (int h = 0; h < 2; ++h) detail::MmaF64m8n8k4(c[I][J2], na[I][h], a[J2][h]);
      }
    });
    return info;
  }

  // Left-looking Cholesky over the tile columns. FOLD: y (the matrix's vector, b on entry)
  // becomes L⁻¹ b, carried as a ninth column of every panel. Returns LAPACK's info (the first
  // pivot that is not > 0, NaN included); the factorization goes on through it and the copy out
  // writes NaN.
  template <bool FOLD>
  static __device__ __forceinline__ int Factor(T* L, T* y, int lane, int n) {
    if constexpr (kRight) return FactorRight<FOLD>(L, y, lane, n);
    constexpr int kTwoSlots = NP > 32 ? (NP - 32 + 7) / 8 : 0;  // tile columns with > 32 rows
    int info = 0;
#pragma unroll 1
    for (int J = 0; J < kTwoSlots; ++J) FactorTile<FOLD, 2>(L, y, lane, n, J, info);
#pragma unroll 1
    for (int J = kTwoSlots; J < kTiles; ++J) FactorTile<FOLD, 1>(L, y, lane, n, J, info);
    return info;
  }

  // The sum over the warp of v[c], c = 0..7, arrives at the lanes with (lane >> 2) & 7 == c:
  // a butterfly that halves the values it carries at each of the first three steps (9 shuffles
  // instead of 40).
  static __device__ __forceinline__ T Reduce8(const T (&v)[8], int lane) {
    T w[4], u[2];
    const bool b4 = lane & 16, b3 = lane & 8, b2 = lane & 4;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      w[j] = (b4 ? v[j + 4] : v[j]) + detail::ShflXor(b4 ? v[j] : v[j + 4], 16);
#pragma unroll
    for (int j = 0; j < 2; ++j)
      u[j] = (b3 ? w[j + 2] : w[j]) + detail::ShflXor(b3 ? w[j] : w[j + 2], 8);
    T s = (b2 ? u[1] : u[0]) + detail::ShflXor(b2 ? u[0] : u[1], 4);
    s += detail::ShflXor(s, 2);
    return s + detail::ShflXor(s, 1);
  }

  // The forward sweep (and the backward one for double) keep the vector in registers, row i =
  // lane + 32 r at v[r], and go tile by tile: the 8 values of a tile reach every lane by shuffles,
  // every lane solves the 8 x 8 diagonal tile itself (reading its columns as broadcast vector
  // loads; on the chain one FMA and one multiply a row), and the owners keep their rows' solution.
  // The first forward sweep sent every row through a shuffle and a serial lane-to-lane chain.

  // The matrix's vector (NP rows) to and from the lane's registers: row lane + 32 r at v[r].
  static constexpr int kRowSlots = (NP + 31) / 32;
  static __device__ __forceinline__ void LoadRows(const T* x, T (&v)[kRowSlots], int lane) {
#pragma unroll
    for (int r = 0; r < kRowSlots; ++r) v[r] = lane + 32 * r < NP ? x[lane + 32 * r] : T(0);
  }
  static __device__ __forceinline__ void StoreRows(T* x, const T (&v)[kRowSlots], int lane) {
#pragma unroll
    for (int r = 0; r < kRowSlots; ++r)
      if (lane + 32 * r < NP) x[lane + 32 * r] = v[r];
    __syncwarp();
  }

  // v[slot] of the lane, slot warp-uniform (a select, not an indexed register array).
  template <int R>
  static __device__ __forceinline__ T SlotValue(const T (&v)[R], int slot) {
    T x = v[0];
#pragma unroll
    for (int r = 1; r < R; ++r) x = r == slot ? v[r] : x;
    return x;
  }
  // Tile J's rows (lanes 8J % 32 .. +7 of slot 8J / 32) take t[0..7], their own row's value.
  template <int R>
  static __device__ __forceinline__ void KeepTileRows(T (&v)[R], const T (&t)[8], int lane, int J) {
    if ((lane >> 3) != (J & 3)) return;
    T mine = t[0];
#pragma unroll
    for (int c = 1; c < 8; ++c) mine = (lane & 7) == c ? t[c] : mine;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r == J / 4) v[r] = mine;
  }
  // t[c] := the values of tile J's rows held by the owners, at every lane.
  template <int R>
  static __device__ __forceinline__ void GatherTileRows(const T (&v)[R], T (&t)[8], int J) {
    const T mine = SlotValue(v, J / 4);
#pragma unroll
    for (int c = 0; c < 8; ++c) t[c] = Shfl(mine, 8 * (J & 3) + c);
  }

  // x := L⁻ᵀ x (1 / L(k, k) on the diagonal), tile by tile from the last: the dot products of the
  // rows below a tile with its 8 columns are reduced across the warp (Reduce8), then the 8 x 8
  // diagonal tile is solved, x_c = (t_c - sum_{k > c} L(k, c) x_k) / L(c, c) from c = 7: for
  // double by every lane (BackwardInLanes), for float lane to lane (BackwardByShuffles). Measured
  // (tuner, H100; bench/NOTES.md "Block kind sweeps in registers"): every lane solving it is 3-10 %
  // faster for f64 posv / potrs, latency-bound, and 2-6 % slower for f32 posv, issue-bound.
  static __device__ __forceinline__ void BackwardT(const T* L, T* x, int lane) {
    if constexpr (sizeof(T) == 8) BackwardInLanes(L, x, lane);
    else BackwardByShuffles(L, x, lane);
  }
  // BackwardT for float: the vector in shared memory, the rows below a tile reduced as below,
  // then lanes 0..7 solve the diagonal tile by passing each x_c lane to lane (8 shuffles): fewer
  // instructions than every lane solving it, which the issue-bound f32 posv kernel prefers.
  static __device__ __forceinline__ void BackwardByShuffles(const T* L, T* x, int lane) {
#pragma unroll 1
    for (int J = kTiles - 1; J >= 0; --J) {
      const int len = Len(J);
      const T* col = L + ColBase(J);
      T part[8];
#pragma unroll
      for (int c = 0; c < 8; ++c) part[c] = T(0);
#pragma unroll
      for (int r0 = 8; r0 < NP; r0 += 32) {  // the rows below the tile: 8 + lane (+ 32)
        const int rel = r0 + lane;
        const bool real = rel < len;
        const int at = real ? rel : len - 1;
        const T xv = real ? x[8 * J + at] : T(0);
#pragma unroll
        for (int c = 0; c < 8; ++c) part[c] += col[c * len + at] * xv;
      }
      const int c0 = lane & 7;
      T t = x[8 * J + c0] - Shfl(Reduce8(part, lane), 4 * c0);
      T diag[8];  // column c0 of the diagonal tile: L(8J + q, 8J + c0) at q
      detail::Load8(col + c0 * len, diag);
      T mine = T(0);
#pragma unroll
      for (int c = 7; c >= 0; --c) {
        const T xc = Shfl(t * diag[c], c);  // lane c: (y - dots) / L(c, c)
        if (c0 == c) mine = xc;
        t -= diag[c] * xc;
      }
      __syncwarp();  // every lane has read x(8J + c0) before lanes 0..7 overwrite it
      if (lane < 8) x[8 * J + lane] = mine;
      __syncwarp();
    }
  }

  // BackwardT for double: the vector in registers, every lane solving the diagonal tile.
  static __device__ __forceinline__ void BackwardInLanes(const T* L, T* x, int lane) {
    constexpr int R = kRowSlots;
    T v[R];
    LoadRows(x, v, lane);
#pragma unroll 1
    for (int J = kTiles - 1; J >= 0; --J) {
      const int len = Len(J);
      const T* col = L + ColBase(J);  // (8J + q, 8J + c) at col[c len + q]
      T part[8];
#pragma unroll
      for (int c = 0; c < 8; ++c) part[c] = T(0);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int rel = lane + 32 * r - 8 * J;  // the lane's row, relative to the tile
        if (rel >= 8 && rel < len)
#pragma unroll
          for (int c = 0; c < 8; ++c) part[c] += col[c * len + rel] * v[r];
      }
      const T dots = Reduce8(part, lane);
      T t[8];
      GatherTileRows(v, t, J);
#pragma unroll
      for (int c = 0; c < 8; ++c) t[c] -= Shfl(dots, 4 * c);
#pragma unroll
      for (int c = 7; c >= 0; --c) {
        T lc[8];
        detail::Load8(col + c * len, lc);
        T s = t[c];
#pragma unroll
        for (int k = 7; k > c; --k) s -= lc[k] * t[k];  // the newest x (k = c + 1) last
        t[c] = s * lc[c];
      }
      KeepTileRows(v, t, lane, J);
    }
    StoreRows(x, v, lane);
  }

  // y := L⁻¹ y (1 / L(k, k) on the diagonal), tile by tile: every lane solves the diagonal tile
  // (y_c = t_c / L(c, c), then t_q -= L(q, c) y_c for q > c), then updates its rows below it.
  // potrs, trsm, and posv's right-hand sides after the first (which the factor folds in).
  static __device__ __forceinline__ void ForwardSweep(const T* L, T* y, int lane) {
    constexpr int R = kRowSlots;
    T v[R];
    LoadRows(y, v, lane);
#pragma unroll 1
    for (int J = 0; J < kTiles; ++J) {
      const int len = Len(J);
      const T* col = L + ColBase(J);
      T t[8];
      GatherTileRows(v, t, J);
#pragma unroll
      for (int c = 0; c < 8; ++c) {
        T lc[8];
        detail::Load8(col + c * len, lc);
        t[c] *= lc[c];
#pragma unroll
        for (int q = c + 1; q < 8; ++q) t[q] -= lc[q] * t[c];
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int rel = lane + 32 * r - 8 * J;
        if (rel >= 8 && rel < len)
#pragma unroll
          for (int c = 0; c < 8; ++c) v[r] -= col[c * len + rel] * t[c];
      }
      KeepTileRows(v, t, lane, J);
    }
    StoreRows(y, v, lane);
  }

  // potrs / trsm: the given factor's diagonal as the solves read it, 1 / L(k, k) (1 for a unit
  // diagonal, which is not read, and for the padding). A zero pivot gives inf, as jnp's solve.
  static __device__ __forceinline__ void InvertGivenDiagonal(T* L, int lane, int n, bool unit) {
#pragma unroll
    for (int k = lane; k < NP; k += 32) {
      T* d = L + ColBase(k / 8) + (k % 8) * Len(k / 8) + k % 8;
      *d = k >= n || unit ? T(1) : T(1) / *d;
    }
    __syncwarp();
  }

  // The solves of one right-hand side (the matrix's vector): posv's first one was folded into
  // the factor (only the backward solve is left); trsm solves forward when op(A) is lower (A
  // lower and not transposed, or upper and transposed), else backward with the triangle read
  // as lower.
  static __device__ __forceinline__ void Solve(const Args<T>& g, const T* L, T* v, int lane, bool folded) {
    const bool forward = OP != Op::kTrsm || ((g.mode == kReadLower) != g.trans);
    const bool backward = OP != Op::kTrsm || !forward;
    if (forward && !folded) ForwardSweep(L, v, lane);
    if (backward) BackwardT(L, v, lane);
  }

  // The loop over waves (il::StagedKernel; block-uniform trip count, every thread reaches the
  // barriers).
  static __device__ void RunStaged(const Args<T>& g) {
    extern __shared__ __align__(16) unsigned char il_block_stage[];
    T* sm = reinterpret_cast<T*>(il_block_stage);
    int* info = reinterpret_cast<int*>(sm + kMats * kMatStride);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    T* L = sm + warp * kMatStride;
    T* v = L + kTri;
    const int64_t waves = detail::CeilDiv(g.chunks * g.c, int64_t(kMats));
    for (int64_t wave = blockIdx.x; wave < waves; wave += gridDim.x) {
      const Slot s = SlotOf(g, wave);
      CopyMatrixIn(g, s, sm);
      if constexpr (kSolves) CopyRhsIn(g, s, 0, sm);
      __pipeline_commit();
      __pipeline_wait_prior(0);
      if constexpr (OP == Op::kPotrf) {
        if (g.mode == kSymmetrize) AverageWithMirror(g, s, sm);  // the thread's own elements: no barrier first
      }
      __syncthreads();
      int status = 0;
      if constexpr (kRegs) status = RegsPosv<T, NP, BlockBody>::FactorSolve(L, v, lane, g.n, g.k > 1);
      else if constexpr (kFactors) status = Factor<kPosv>(L, v, lane, g.n);
      else InvertGivenDiagonal(L, lane, g.n, OP == Op::kTrsm && g.unit);
      if (lane == 0) info[warp] = status;
      if constexpr (kSolves && !kRegs) Solve(g, L, v, lane, kPosv);
      __syncthreads();
      if constexpr (kSolves) {
        CopyXOut(g, s, 0, sm, info);
        for (int col = 1; col < g.k; ++col) {
          __syncthreads();
          CopyRhsIn(g, s, col, sm);
          __pipeline_commit();
          __pipeline_wait_prior(0);
          __syncthreads();
          Solve(g, L, v, lane, false);
          __syncthreads();
          CopyXOut(g, s, col, sm, info);
        }
      } else {
        CopyFactorOut(g, s, sm, info);
      }
      if constexpr (kFactors)
        if (s.live && s.sub == 0) g.info[s.mat] = info[s.m];
      __syncthreads();  // the wave's shared memory is free
    }
  }
};

}  // namespace il
}  // namespace batchla
