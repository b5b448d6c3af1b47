// posv of the warp-per-matrix kind (interleaved_block.cuh) with the matrix in the warp's
// REGISTERS (BlockForm kBlockRegs / kBlockRegsCapped; issue 6, n ~ 25..64). The staging is the
// block kind's: the wave's matrices land in shared memory as tile columns. Then each warp moves
// its matrix into registers and factors it there, right-looking and fully unrolled (every
// register index static); shared memory only carries each column to the warp.
//
// Registers, 2-D cyclic: lane (r, c) = (lane % 4, lane / 4) holds A(r + 4 s, c + 8 t) at a[s][t]
// for the (s, t) blocks that reach the diagonal (72 of 128 at NP = 64). b rides along as row NP
// (slot kS of the lanes r = 0), so the factor of the augmented matrix leaves y = L⁻¹ b in its last
// row: the forward solve costs one more row of FMAs.
// Step k: the pivot comes by one shuffle; the four owners of column k (c = k % 8) post it
// UNSCALED (rows <= k as 0, so the rank-1 update needs no masks: elements in those rows or
// columns subtract 0); after __syncwarp every lane reads its 16 rows (vector loads) and its 8
// columns, scales the 8 by 1 / A(k, k), and updates the blocks still active. So the registers keep
// L(i, j) L(j, j), and every use of them scales by 1 / L(j, j), kept in shared memory (rdiag):
// no step scales a column. Elements above the diagonal inside a block carry
// finite garbage that no result reads.
// The backward solve, x = L⁻ᵀ y, keeps a partial sum a column per lane: at step k the 4 lanes of
// column k's class reduce theirs (2 shuffles), x_k = (y_k - sum) / L(k, k) reaches every lane
// by one shuffle, and the lanes of row k add L(k, j) x_k to their columns j < k.
// The A/B against the shared-memory forms: bench/NOTES.md "Block kind, posv with the matrix in
// registers".
#pragma once

#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/interleaved.cuh"

namespace batchla {
namespace il {

// Tiles: the block kind's shared-memory layout (ColBase, Len) of the staged matrix.
template <typename T, int NP, class Tiles>
struct RegsPosv {
  static_assert(NP % 8 == 0 && NP <= 64, "whole column slots");
  using Vec = detail::Vec16<T>;
  static constexpr int kS = NP / 4;  // row slots of L; slot kS holds row NP (y) on the lanes r = 0
  static constexpr int kT = NP / 8;  // column slots
  static constexpr int kXSlots = (NP + 31) / 32;
  // The posted column: row i at post[(i % 4) kRS + i / 4], so a lane's rows are contiguous. kRS
  // is an odd number of 16-byte vectors: the 4 row classes' vector loads land on distinct banks,
  // and so do the 8 column classes' scalar loads.
  static constexpr int kRSv = (kS + 1 + Vec::kN - 1) / Vec::kN;
  static constexpr int kRS = (kRSv % 2 ? kRSv : kRSv + 1) * Vec::kN;
  static constexpr int kPostValues = 2 * 4 * kRS;  // double-buffered by step parity
  // After the post buffer: 1 / L(k, k) for every k (warp-uniform, written by lane 0 at step k).
  static_assert(kPostValues + NP <= Tiles::kTri, "the buffers live in the matrix's own region");

  static constexpr bool Stored(int s, int t) { return s == kS || 4 * s + 3 >= 8 * t; }

  // Factor (L in registers, y in row NP), then x := L⁻ᵀ y into v. keep: L back into the tile
  // columns with 1 / L(k, k) on the diagonal, as the block kind's sweeps read it (posv's further
  // right-hand sides). Returns LAPACK's info, as BlockBody::Factor.
  static __device__ __forceinline__ int FactorSolve(T* sm, T* v, int lane, int n, bool keep) {
    const int r = lane & 3, c = lane >> 2;
    T a[kS + 1][kT];
#pragma unroll
    for (int s = 0; s < kS; ++s)
#pragma unroll
      for (int t = 0; t < kT; ++t)
        if (Stored(s, t)) {
          const int i = r + 4 * s, j = c + 8 * t;  // rows above the tile column are not staged: 0
          a[s][t] = i >= 8 * t ? sm[Tiles::ColBase(t) + c * Tiles::Len(t) + (i - 8 * t)] : T(0);
          if (4 * s <= 8 * t + 7) a[s][t] = i == j && i >= n ? T(1) : a[s][t];  // the padding: identity
        }
#pragma unroll
    for (int t = 0; t < kT; ++t) a[kS][t] = r == 0 ? v[c + 8 * t] : T(0);
    __syncwarp();  // every lane has read the region before it becomes the post buffer

    T* rdiag = sm + kPostValues;  // 1 / L(k, k)
    int info = 0;
    StaticFor<0, NP>([&](auto step) {
      constexpr int k = decltype(step)::value;
      FactorStep<k>(a, rdiag, sm + (k & 1) * 4 * kRS, lane, info);
    });

    T acc[kT], x[kXSlots];
#pragma unroll
    for (int t = 0; t < kT; ++t) acc[t] = T(0);
#pragma unroll
    for (int q = 0; q < kXSlots; ++q) x[q] = T(0);
    StaticFor<0, NP>([&](auto step) {
      constexpr int k = NP - 1 - decltype(step)::value;
      BackwardStep<k>(a, rdiag, acc, x, r, lane);
    });
#pragma unroll
    for (int q = 0; q < kXSlots; ++q)
      if (lane + 32 * q < NP) v[lane + 32 * q] = x[q];
    if (keep) {
      T rd[kT];  // 1 / L(j, j) of the lane's columns j = c + 8 t
#pragma unroll
      for (int t = 0; t < kT; ++t) rd[t] = rdiag[c + 8 * t];
      __syncwarp();  // the buffers' last reads are done: the tile columns take L back
#pragma unroll
      for (int s = 0; s < kS; ++s)
#pragma unroll
        for (int t = 0; t < kT; ++t)
          if (Stored(s, t)) {
            const int i = r + 4 * s, j = c + 8 * t;
            if (i >= j) sm[Tiles::ColBase(t) + c * Tiles::Len(t) + (i - 8 * t)] = i == j ? rd[t] : a[s][t] * rd[t];
          }
    }
    __syncwarp();
    return info;
  }

  template <int k>
  static __device__ __forceinline__ void FactorStep(T (&a)[kS + 1][kT], T* rdiag, T* post, int lane, int& info) {
    constexpr int kr = k % 4, ks = k / 4, kc = k % 8, kt = k / 8;
    const int r = lane & 3, c = lane >> 2;
    T d = detail::ShflIdx(a[ks][kt], kr + 4 * kc), rinv;
    RsqrtPivot(d, rinv, k, info);
    if (lane == 0) rdiag[k] = rinv;
    if (c == kc) {  // the owners of column k post its rows > k (from the vector holding row k)
#pragma unroll
      for (int g = ks / Vec::kN; g <= kS / Vec::kN; ++g) {
        T w[Vec::kN];
#pragma unroll
        for (int e = 0; e < Vec::kN; ++e) {
          const int s = g * Vec::kN + e;
          w[e] = s > kS || s < ks ? T(0) : s > ks || r > kr ? a[s][kt] : T(0);
        }
        Vec::Store(post + r * kRS + g * Vec::kN, w);
      }
    }
    __syncwarp();
    constexpr int s0 = (k + 1) / 4, t0 = (k + 1) / 8;
    const T dinv = rinv * rinv;  // the update subtracts A(i, k) A(j, k) / A(k, k), both posted unscaled
    T lcol[kT];
#pragma unroll
    for (int t = t0; t < kT; ++t) lcol[t] = post[(c & 3) * kRS + (c >> 2) + 2 * t] * dinv;  // row c + 8 t
    // A vector of the lane's rows at a time, each used as it arrives (fewer registers live).
#pragma unroll
    for (int g = s0 / Vec::kN; g <= kS / Vec::kN; ++g) {
      T lrow[Vec::kN];
      Vec::Load(post + r * kRS + g * Vec::kN, lrow);
#pragma unroll
      for (int e = 0; e < Vec::kN; ++e) {
        const int s = g * Vec::kN + e;
        if (s >= s0 && s <= kS)
#pragma unroll
          for (int t = t0; t < kT; ++t)
            if (Stored(s, t)) a[s][t] -= lrow[e] * lcol[t];
      }
    }
  }

  // a holds L(i, j) L(j, j) and y_k L(k, k) (row NP), acc the lane's sums of L(i, j) L(j, j) x_i.
  template <int k>
  static __device__ __forceinline__ void BackwardStep(const T (&a)[kS + 1][kT], const T* rdiag, T (&acc)[kT],
                                                      T (&x)[kXSlots], int r, int lane) {
    constexpr int kr = k % 4, ks = k / 4, kc = k % 8, kt = k / 8;
    const T rk = rdiag[k];
    T part = acc[kt];  // column c + 8 kt's partial sum over the lane's rows; the 4 row classes next
    part += detail::ShflXor(part, 1);
    part += detail::ShflXor(part, 2);
    const T xk = detail::ShflIdx((a[kS][kt] - part) * (rk * rk), 4 * kc);  // lane (0, kc) holds y_k
    if (lane == k % 32) x[k / 32] = xk;
    const T xm = r == kr ? xk : T(0);  // the lanes of row k
#pragma unroll
    for (int t = 0; t <= kt; ++t) acc[t] += a[ks][t] * xm;
  }
};

}  // namespace il
}  // namespace batchla
