// Batched LU, "tile" class: ONE WARP per matrix, the matrix in SHARED memory, left-looking (Crout)
// in tile columns of kLuTileW = 8; getrf (kFactor) and slogdet, n <= 64 (range: cuda/tuning.h,
// LuTileTakes; measurements: bench/NOTES.md, "getrf tile class").
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
// sign / logabsdet from the pivots and their parity.
// Non-finite input: rows not updated in step 2 get x - 0 * usol, so an inf in usol (only from a
// non-finite or overflowing matrix) turns that matrix's earlier U entries to NaN where LAPACK would
// keep them (the warp class does the same); other matrices are never touched.
#pragma once

#include <climits>
#include <cstdint>

#include "cuda/lu_blocked.cuh"
#include "cuda/trsm_kernels.cuh"

namespace batchla {
namespace detail {

constexpr int kLuTileW = 8;       // tile column width
constexpr int kLuTileMaxRows = 64;  // two rows a lane

// Row stride of the shared matrix: columns rounded up to the tile width, plus one 16-byte granule
// so that the stride is an odd number of granules (lanes on consecutive rows: no bank conflicts
// for their 16-byte accesses).
template <typename T>
__host__ __device__ constexpr int LuTileLd(int n) {
  return RoundUp(n, kLuTileW) + 16 / int(sizeof(T));
}

template <typename T>
struct LuTileScratch {
  alignas(16) T ublk[kLuTileW][kLuTileW];  // block rows posted for the forward solve
  alignas(16) T usol[kLuTileW][kLuTileW];  // their solved U block
  int rowof[kLuTileMaxRows];               // original row pivoted at each position
  int pivs[kLuTileMaxRows];                // 0-based LAPACK pivots
};

template <typename T>
__host__ __device__ constexpr size_t LuTileSmemBytes(int n) {
  return sizeof(LuTileScratch<T>) + size_t(n) * size_t(LuTileLd<T>(n)) * sizeof(T);
}

// 16-byte vector loads / stores of 8 consecutive T (two float4 / four double2).
template <typename T>
__device__ __forceinline__ void LuTileLoad8(const T* p, T (&v)[kLuTileW]) {
  if constexpr (sizeof(T) == 4) {
    const float4 a = reinterpret_cast<const float4*>(p)[0], b = reinterpret_cast<const float4*>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const double2 a = reinterpret_cast<const double2*>(p)[i];
      v[2 * i] = a.x, v[2 * i + 1] = a.y;
    }
  }
}
template <typename T>
__device__ __forceinline__ void LuTileStore8(T* p, const T (&v)[kLuTileW]) {
  if constexpr (sizeof(T) == 4) {
    reinterpret_cast<float4*>(p)[0] = make_float4(v[0], v[1], v[2], v[3]);
    reinterpret_cast<float4*>(p)[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) reinterpret_cast<double2*>(p)[i] = make_double2(v[2 * i], v[2 * i + 1]);
  }
}

// The n x n matrix at g (row-major) into S (row stride ld) by cp.async: 16-byte granules where rows
// are whole granules and g is aligned, else one element per copy; the columns n .. RoundUp(n, 8)
// - 1 (read by the last tile column) are zeroed.
template <typename T>
__device__ __forceinline__ void LuTileCopyIn(const T* __restrict__ g, T* S, int n, int ld, int lane) {
  constexpr int V = 16 / int(sizeof(T));
  if (n % V == 0 && (reinterpret_cast<uintptr_t>(g) & 15u) == 0) {
    const int gpr = n / V, total = n * gpr;
    const float rc = 1.0f / float(gpr);
    for (int e = lane; e < total; e += 32) {
      const int r = LuRowOf(e, rc), c = (e - r * gpr) * V;
      trsm_detail::CpAsync<16>(S + r * ld + c, g + r * n + c, true);
    }
  } else {
    const int total = n * n;
    const float rc = 1.0f / float(n);
    for (int e = lane; e < total; e += 32) {
      const int r = LuRowOf(e, rc);
      trsm_detail::CpAsync<int(sizeof(T))>(S + r * ld + (e - r * n), g + e, true);
    }
  }
  const int nc = RoundUp(n, kLuTileW);
  for (int r = lane; r < n; r += 32)
    for (int c = n; c < nc; ++c) S[r * ld + c] = T(0);
  trsm_detail::CpAsyncCommit();
  trsm_detail::CpAsyncWait<0>();
  __syncwarp();
}

// rows x n of S, row p taken from S row rowof[p], to the row-major matrix at g (coalesced: 16-byte
// stores where rows are whole granules and g is aligned).
template <typename T>
__device__ __forceinline__ void LuTileCopyOut(const T* S, const int* rowof, T* __restrict__ g, int n, int ld,
                                              int lane) {
  constexpr int V = 16 / int(sizeof(T));
  if (n % V == 0 && (reinterpret_cast<uintptr_t>(g) & 15u) == 0) {
    using VT = typename LuVec<T>::type;
    const int gpr = n / V, total = n * gpr;
    const float rc = 1.0f / float(gpr);
    for (int e = lane; e < total; e += 32) {
      const int p = LuRowOf(e, rc), c = (e - p * gpr) * V;
      *reinterpret_cast<VT*>(g + p * n + c) = *reinterpret_cast<const VT*>(S + rowof[p] * ld + c);
    }
  } else {
    const int total = n * n;
    const float rc = 1.0f / float(n);
    for (int e = lane; e < total; e += 32) {
      const int p = LuRowOf(e, rc);
      g[e] = S[rowof[p] * ld + (e - p * n)];
    }
  }
}

// What the pivots leave besides the factor (every lane holds the same values).
template <typename T>
struct LuTileStats {
  int info = 0;  // 1-based first zero pivot
  int cnt = 0;   // parity (row exchanges + negative pivots) + 2^20 per zero pivot
  T logs = T(0);  // slogdet: sum of log|pivot|
};

// Step 2 for the block of positions p0 = 8 K .. p0 + 7 (all < n).
template <typename T, int R>
__device__ __forceinline__ void LuTileBlockUpdate(T (&x)[R][kLuTileW], const int (&pos)[R], const T* S, int ld,
                                                  LuTileScratch<T>* sc, int p0, int lane, int n) {
  constexpr int W = kLuTileW;
#pragma unroll
  for (int q = 0; q < R; ++q)
    if (unsigned(pos[q] - p0) < unsigned(W)) LuTileStore8(sc->ublk[pos[q] - p0], x[q]);
  __syncwarp();
  {  // forward solve with the unit-lower diagonal block; lane c < 8 owns column c
    const int c = lane & (W - 1);
    T u[W];
#pragma unroll
    for (int i = 0; i < W; ++i) {
      T l[W];
      LuTileLoad8(S + sc->rowof[p0 + i] * ld + p0, l);
      T acc = sc->ublk[i][c];
#pragma unroll
      for (int m = 0; m < i; ++m) acc = fma(-l[m], u[m], acc);
      u[i] = acc;
    }
    if (lane < W) {
#pragma unroll
      for (int i = 0; i < W; ++i) sc->usol[i][c] = u[i];
    }
  }
  __syncwarp();
  T l[R][W];
  bool below[R];
#pragma unroll
  for (int q = 0; q < R; ++q) {
    const int r = lane + 32 * q;
    LuTileLoad8(S + (r < n ? r : 0) * ld + p0, l[q]);
    below[q] = pos[q] >= p0 + W;
#pragma unroll
    for (int m = 0; m < W; ++m) l[q][m] = below[q] ? l[q][m] : T(0);
  }
#pragma unroll
  for (int m = 0; m < W; ++m) {
    T u[W];
    LuTileLoad8(sc->usol[m], u);
#pragma unroll
    for (int q = 0; q < R; ++q)
#pragma unroll
      for (int c = 0; c < W; ++c) x[q][c] = fma(-l[q][m], u[c], x[q][c]);
  }
#pragma unroll
  for (int q = 0; q < R; ++q)
    if (unsigned(pos[q] - p0) < unsigned(W)) LuTileLoad8(sc->usol[pos[q] - p0], x[q]);
}

// Step 3: getf2 on the tile column's rows with pos >= c0, columns c0 + jj < n.
template <typename T, int R>
__device__ __forceinline__ void LuTilePanel(T (&x)[R][kLuTileW], int (&pos)[R], LuTileScratch<T>* sc, int c0,
                                            int n, int lane, LuTileStats<T>& st, bool det) {
  constexpr int W = kLuTileW;
  StaticFor<0, W>([&](auto jj_) {
    constexpr int jj = decltype(jj_)::value;
    const int j = c0 + jj;
    if (j >= n) return;
    unsigned long long key = 0;
    int kp = INT_MAX, kq = 0;
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const unsigned long long k = pos[q] >= j ? LuKey(x[q][jj], pos[q] == j) : 0ull;
      if (k > key || (k == key && k != 0 && pos[q] < kp)) key = k, kp = pos[q], kq = q;
    }
    const unsigned long long mykey = key;
    const int mypos = kp;
    LuWarpArgmax(key, kp);  // some row is at position j, so key != 0
    const bool winner = mykey == key && mypos == kp;
    const int wl = __ffs(__ballot_sync(0xffffffffu, winner)) - 1;
    T v[W];
#pragma unroll
    for (int c = jj; c < W; ++c) {
      T mine = x[0][c];
#pragma unroll
      for (int q = 1; q < R; ++q) mine = kq == q ? x[q][c] : mine;
      v[c] = __shfl_sync(0xffffffffu, mine, wl);
    }
    const int prow = __shfl_sync(0xffffffffu, lane + 32 * kq, wl), ppos = kp;
    const T pv = v[jj];
    if (lane == 0) sc->rowof[j] = prow, sc->pivs[j] = ppos;
    if (pv == T(0) && st.info == 0) st.info = j + 1;
    if (det) st.logs += log(fabs(pv));  // slogdet only (a uniform branch)
    st.cnt += (ppos != j) + (pv < T(0)) + (pv == T(0) ? (1 << 20) : 0);
    const bool tiny = !(fabs(pv) >= LuMinNormal<T>());  // LAPACK: divide instead of 1 / pivot
    const T rp = T(1) / pv;
#pragma unroll
    for (int q = 0; q < R; ++q) {
      const int p = pos[q];
      pos[q] = lane + 32 * q == prow ? j : (p == j ? ppos : p);
      if (pos[q] > j) {
        T l = x[q][jj];
        if (pv != T(0)) l = tiny ? l / pv : l * rp;
        x[q][jj] = l;
#pragma unroll
        for (int c = jj + 1; c < W; ++c) x[q][c] = fma(-l, v[c], x[q][c]);
      }
    }
  });
}

template <typename T, int R>
__global__ void __launch_bounds__(32, tuning::LuTileMinBlocks<T>(R)) LuTileKernel(LuArgs<T> args, int out) {
  constexpr int W = kLuTileW;
  extern __shared__ __align__(16) unsigned char smraw[];
  auto* sc = reinterpret_cast<LuTileScratch<T>*>(smraw);
  T* S = reinterpret_cast<T*>(smraw + sizeof(LuTileScratch<T>));
  const int n = args.n, ld = LuTileLd<T>(n), lane = threadIdx.x, tiles = (n + W - 1) / W;
  const int64_t nn = int64_t(n) * n;
  const bool det = out == int(LuOutput::kSlogdet);
  for (int64_t mat = blockIdx.x; mat < args.batch; mat += gridDim.x) {
    LuTileCopyIn(args.a + mat * nn, S, n, ld, lane);
    int pos[R];
#pragma unroll
    for (int q = 0; q < R; ++q) pos[q] = lane + 32 * q < n ? lane + 32 * q : -1;  // -1: no row
    LuTileStats<T> st;
    for (int J = 0; J < tiles; ++J) {
      const int c0 = J * W;
      T x[R][W];
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const int r = lane + 32 * q;
        LuTileLoad8(S + (r < n ? r : 0) * ld + c0, x[q]);
      }
      for (int p0 = 0; p0 < c0; p0 += W) LuTileBlockUpdate<T, R>(x, pos, S, ld, sc, p0, lane, n);
      LuTilePanel<T, R>(x, pos, sc, c0, n, lane, st, det);
#pragma unroll
      for (int q = 0; q < R; ++q)
        if (lane + 32 * q < n) LuTileStore8(S + (lane + 32 * q) * ld + c0, x[q]);
      __syncwarp();
    }
    if (det) {
      if (lane == 0) {
        const bool zero = st.cnt >= (1 << 20);
        args.sign[mat] = zero ? T(0) : ((st.cnt & 1) ? T(-1) : T(1));
        args.logabsdet[mat] = zero ? -LuInf<T>() : st.logs;
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

// kFactor / kSlogdet, 1 <= n <= kLuTileMaxRows.
template <typename T>
cudaError_t LuTileRun(cudaStream_t stream, const LuArgs<T>& args, LuOutput out) {
  const int n = args.n;
  if (n < 1 || n > kLuTileMaxRows || (out != LuOutput::kFactor && out != LuOutput::kSlogdet))
    return cudaErrorInvalidValue;
  const size_t smem = LuTileSmemBytes<T>(n);
  auto kern = n <= 32 ? LuTileKernel<T, 1> : LuTileKernel<T, 2>;
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  kern<<<GridFor(args.batch), 32, smem, stream>>>(args, int(out));
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
