// Batched LU, "warp" class of the blocked LU (kLuSmallMaxN < n <= kLuWarpMaxN = 64, and up to
// LuWarpWideMaxN<T>() = 128 with N = 128): a group of G warps per matrix (N = 64: f32 G = 1, lane
// owns rows lane and lane + 32; f64 G = 2, thread owns one row; N = 128: f32 G = 4, thread owns one
// row; f64 G = 8, S = 2 threads per row, lanes 2k and 2k + 1 hold its slots 0..63 and 64..127),
// the whole matrix in REGISTERS; N = 64: several groups per block, no block barriers.
//
// Final-destination pivoting: rows never move. Thread t of a group owns original rows
// t / S + q * 32 G / S (q < R) and tracks each row's current position pos (LAPACK's row order after the
// swaps so far). Step j: argmax over rows with pos >= j of |a(r, j)| (first max in the current
// order = smallest pos, by warp redux on (key, pos)); the winner thread publishes its row to a
// double-buffered shared slot (one group sync per step: the slot of step j + 2 is written only
// after every thread passed the sync of step j + 1, i.e. finished reading the slot of step j);
// the pivot row takes pos j, the row at pos j takes the pivot's old pos.
//
// Two elimination modes (same pivot sequence and same values in the unpivoted rows, so the same
// pivots / info as getrf):
//   LU (kFactor, kSlogdet): getf2: rows with
//     pos > j get l = a(r, j) / pivot and a rank-1 update of the columns right of j (the columns
//     left of j see a zeroed pivot row; the other rows get l = 0, so every row runs the same FMAs:
//     a NaN / Inf multiplier or pivot row -- only from a non-finite input -- turns L entries or
//     earlier U rows of that matrix to NaN where LAPACK would leave them). Output rows go to lu row
//     pos through a shared tile (coalesced).
//   GJ (kInverse, kSolve with k <= 1): in-place Gauss-Jordan on [A | b]: every non-pivot row is
//     eliminated (column j keeps -l), the pivot row is scaled by 1 / pivot (column j keeps
//     1 / pivot). With r_k the row pivoted at step k: A^-1(pos(r), c) = W(r, pos(c)) and
//     x(pos(r)) = b'(r), so no triangular solves at all (n^3 FMAs instead of n^3 / 3 + solves,
//     but every FMA is on registers with a broadcast shared operand).
#pragma once

#include "cuda/lu_blocked.cuh"

namespace batchla {
namespace detail {

constexpr int kLuWarpThreads = 128;  // threads per block
// Warps per SM the register budget aims at, as blocks per SM (BATCHLA_LU_WARP_MINB: benchmark
// variant, blocks for all).
// 3 caps registers at 168: 128 hold the row(s), so the pivot row's 16-byte loads all go through one
// register quad, each load waiting for the FMAs of the previous one (ncu, f64 N = 64: every DFMA
// stalls on the short scoreboard). 2 (up to 255 registers) lets ptxas keep ~7 loads in flight:
// f64 takes 2 (n = 64 gesv k = 1 1107 -> 944 us, inverse 1214 -> 1014; bench/NOTES.md, "Warp
// class v4"); f32 (4-8 FMAs per load) keeps 3 (with 2: n = 64 and 128 1.2-1.3x slower).
template <typename T>
constexpr int LuWarpMinBlocks(int threads) {
#ifdef BATCHLA_LU_WARP_MINB
  return BATCHLA_LU_WARP_MINB + 0 * threads;
#else
  return (sizeof(T) == 8 ? 8 : 12) * 32 / threads;
#endif
}
// Two-phase pivot publish for G > 1 (LuWarpStep): f32 n = 128 getrf 1710 -> 1500 us, inverse
// 2055 -> 1751, gesv k = 1 1985 -> 1616 (bench/NOTES.md, "Warp class v3"); f64 N = 64 ~1 %.
// BATCHLA_LU_WARP_TWO_PHASE=0/1: benchmark variant.
#ifdef BATCHLA_LU_WARP_TWO_PHASE
constexpr bool kLuWarpTwoPhase = BATCHLA_LU_WARP_TWO_PHASE != 0;
#else
constexpr bool kLuWarpTwoPhase = true;
#endif

// N: padded rows and columns held per matrix (64 or 128). Every thread holds 128 registers of
// data: R whole rows, or (S > 1: a row is more than 128 registers) 1 / S of one row. G = N * N
// words / (128 * 32) warps per matrix (N = 64: f32 1, f64 2; N = 128: f32 4, f64 8).
template <typename T, int N_>
struct LuWarpCfg {
  static constexpr int N = N_;
  static_assert((N & (N - 1)) == 0, "columns rotate modulo N");
  static constexpr int G = N * N * int(sizeof(T)) / 4 / (128 * 32);  // warps per matrix
  static constexpr int TG = 32 * G;                 // threads per group
  static constexpr int S = N * int(sizeof(T)) / 4 > 128 ? N * int(sizeof(T)) / 4 / 128 : 1;  // threads per row
  static_assert(S == 1 || S == 2, "the row halves exchange by shfl.xor 1");
  static constexpr int NH = N / S;                  // slots per thread (of its rows)
  static constexpr int R = N * S / TG;              // rows per thread
  static_assert(G >= 1 && R >= 1 && TG <= 1024, "a group fits a block");
  static constexpr int kThreads = TG > kLuWarpThreads ? TG : kLuWarpThreads;  // per block
  static constexpr int M = kThreads / TG;           // matrices per block
  static constexpr int NP = N + 4;                  // published row: n columns + b, padded
  static constexpr int TLD = N + 1;                 // tile leading dimension capacity
};

// Per-group shared memory.
template <typename T, int N>
struct LuWarpShared {
  using C = LuWarpCfg<T, N>;
  alignas(16) T prow[2][C::G][C::NP];  // candidate (G > 1) / pivot rows, double-buffered by step
  unsigned long long key[2][C::G];
  int cpos[2][C::G], crow[2][C::G];
  int rowof[N];  // rowof[j]: original row pivoted at step j (= perm)
  int pivs[N];   // 0-based LAPACK pivots
  alignas(16) T tile[N * C::TLD];  // global <-> register staging, leading dimension n | 1
};

template <int G>
__device__ __forceinline__ void LuGroupSync(int group) {
  if constexpr (G == 1) {
    __syncwarp();
  } else {
    asm volatile("bar.sync %0, %1;" ::"r"(group + 1), "r"(32 * G) : "memory");
  }
}

// dst[i * ldd + j] = src[i * lds + j] for a rows x cols block, by the TG threads of a group, with
// tuning::LuWarpCopyLoads<T>() loads in flight per thread (the row registers are free during the
// copies).
template <typename T, int TG>
__device__ __forceinline__ void LuGroupCopy(const T* __restrict__ src, int lds, T* __restrict__ dst, int ldd,
                                            int rows, int cols, int t) {
  constexpr int U = tuning::LuWarpCopyLoads<T>();
  const int total = rows * cols;
  const float rc = 1.0f / float(cols);
  for (int e0 = t; e0 < total; e0 += U * TG) {
    T v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = e0 + u * TG;
      if (e < total) {
        const int i = LuRowOf(e, rc);
        v[u] = src[i * lds + (e - i * cols)];
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int e = e0 + u * TG;
      if (e < total) {
        const int i = LuRowOf(e, rc);
        dst[i * ldd + (e - i * cols)] = v[u];
      }
    }
  }
}

template <typename T, int N>
struct LuWarpState {
  using C = LuWarpCfg<T, N>;
  T row[C::R][C::NH];  // slots h * NH .. h * NH + NH - 1 of the rotated row (h = t % S)
  T b[C::R];      // GJ: right-hand side (k = 1), else unused
  T sc[C::R];     // GJ: deferred 1 / pivot of the row's own step
  int pos[C::R];  // current position of each owned row; -1: padding row (r >= n)
  int info;       // 1-based first zero pivot
  T logs;         // LU: sum log|pivot|
  int cnt;        // LU: parity (swaps + negative pivots) + 2^20 per zero pivot
};

// One column step j, both modes. The stored columns rotate left one slot per step (each new value
// is written one slot to the left, so the rotation costs nothing in the eliminated rows): at step j
// slot c holds column (c + j) mod N, the pivot column is always slot 0 and slot N - 1 receives
// column j's result. A runtime loop with static register indices: unrolling the 64 steps instead
// (only columns right of j) made ~14k instructions of SASS and ran SLOWER (instruction cache).
//   LU: rows with pos > j: l = a(r, j) / pivot, slot N - 1 = l; the others shift unchanged. The
//     published pivot row has its columns left of j (its L part) zeroed, so L entries never change.
//   GJ: every row but the pivot: column j keeps -l; the pivot row is not scaled here (it shifts
//     unchanged and gets 1 in slot N - 1; sc = 1 / pivot applied at the output: elimination is
//     linear in each row, so the row's scale carries through the later steps).
// S = 2 (two threads per row): slot 0 is in the first half, so only it offers argmax keys; one
// shfl.xor per row gives the second half column j (its multiplier) and the first half slot NH (its
// slot NH - 1); both halves of the pivot row publish their own granules.
template <typename T, int N, bool GJ>
__device__ __forceinline__ void LuWarpStep(LuWarpState<T, N>& s, LuWarpShared<T, N>* sh, int j, int group, int t,
                                           bool det) {
  using C = LuWarpCfg<T, N>;
  using V = Vec16<T>;
  using VT = typename V::type;
  constexpr int KV = V::kN, S = C::S, NH = C::NH;
  const int lane = t & 31, w = t >> 5, par = j & 1, h = t % S, base = h * NH;
  auto row_id = [&](int q) { return t / S + q * (C::TG / S); };
  // 1. best candidate of the thread, then of the warp (largest key, then smallest pos)
  unsigned long long key = 0;
  int kp = 0x7fffffff, kq = 0;
  if (h == 0) {
#pragma unroll
    for (int q = 0; q < C::R; ++q) {
      const unsigned long long k = s.pos[q] >= j ? LuKey(s.row[q][0], s.pos[q] == j) : 0ull;
      if (k > key || (k == key && k != 0 && s.pos[q] < kp)) key = k, kp = s.pos[q], kq = q;
    }
  }
  const unsigned long long mykey = key;
  const int mypos = kp;
  LuWarpArgmax(key, kp);
  // 2. the pivot row is published, and (G > 1) the group's pivot is the best of the G warp winners.
  // One-phase: every warp's winner publishes its row and key, one sync, the best is read. Two-phase
  // (kLuWarpTwoPhase, G > 1): the warps publish keys only, sync, the group's winner alone publishes
  // its row, sync: G - 1 fewer row copies per step for one more barrier.
  // A warp without candidates publishes key 0 so that a stale slot is never chosen.
  const bool winner = key != 0 && mykey == key && mypos == kp;  // first half only
  bool row_winner = winner;  // both halves of the winning row
  if constexpr (S > 1) {
    const unsigned first = unsigned(lane & ~(S - 1));
    row_winner = __shfl_sync(0xffffffffu, winner, first) != 0;
    kq = __shfl_sync(0xffffffffu, kq, first);
  }
  constexpr bool two = kLuWarpTwoPhase && C::G > 1;
  static_assert(S == 1 || two, "S > 1: the row halves publish together (two-phase)");
  auto zero_l_slots = [&](T* dst) {  // LU: slots N - j .. N - j + KV - 1 (see publish_row)
#pragma unroll
    for (int e = 0; e < KV; ++e)
      if (N - j + e < N) dst[N - j + e] = T(0);
  };
  auto publish_row = [&](T* dst) {
    // LU: the slots N - j .. N - 1 (columns left of j: the row's L part) must read as 0. They are
    // not masked per element: only granules holding U columns are written, then slots N - j ..
    // N - j + KV - 1 are zeroed (the last granule's L part, and the two slots this buffer's
    // previous step, j - 2, still had as U) by the half that wrote that granule; those beyond were
    // zeroed at earlier steps, by the buffer's writer of each step.
#pragma unroll
    for (int c = 0; c < NH; c += KV) {
      if (!GJ && base + c >= N - j) break;
      T v[KV];
#pragma unroll
      for (int e = 0; e < KV; ++e) {
        v[e] = s.row[0][c + e];
#pragma unroll
        for (int q = 1; q < C::R; ++q) v[e] = kq == q ? s.row[q][c + e] : v[e];
      }
      V::Store(dst + base + c, v);
    }
    if constexpr (GJ) {
      if (h == 0) {
        T bv = s.b[0];
#pragma unroll
        for (int q = 1; q < C::R; ++q) bv = kq == q ? s.b[q] : bv;
        dst[N] = bv;
      }
    } else if (S == 1 || h == (N - j - 1) / NH) {  // the half holding slot N - j - 1
      zero_l_slots(dst);
    }
  };
  if (key == 0 && lane == 0) sh->key[par][w] = 0ull, sh->cpos[par][w] = 0x7fffffff;
  if (row_winner && !two) publish_row(sh->prow[par][w]);
  if (winner) {
    sh->key[par][w] = key;
    sh->cpos[par][w] = kp;
    sh->crow[par][w] = row_id(kq);
  } else if (!GJ && !two && key == 0 && lane == 0) {  // keep this warp's buffer zeroed
    zero_l_slots(sh->prow[par][w]);
  }
  LuGroupSync<C::G>(group);
  int ws = 0;
  if constexpr (C::G > 1) {
    unsigned long long bk = sh->key[par][0];
    int bp = sh->cpos[par][0];
#pragma unroll
    for (int u = 1; u < C::G; ++u) {
      const unsigned long long ok = sh->key[par][u];
      const int op = sh->cpos[par][u];
      if (ok > bk || (ok == bk && op < bp)) bk = ok, bp = op, ws = u;
    }
  }
  if constexpr (two) {
    if (row_winner && w == ws) publish_row(sh->prow[par][0]);
    LuGroupSync<C::G>(group);
  }
  const T* u = sh->prow[par][two ? 0 : ws];
  const int ppos = sh->cpos[par][ws], prow = sh->crow[par][ws];
  if (t == 0) sh->rowof[j] = prow, sh->pivs[j] = ppos;
  const T pv = u[0];
  if (pv == T(0) && s.info == 0) s.info = j + 1;
  if constexpr (!GJ) {
    if (det) s.logs += log(fabs(pv));  // slogdet only (a uniform branch): ~30 instructions
    s.cnt += (ppos != j) + (pv < T(0)) + (pv == T(0) ? (1 << 20) : 0);
  }
  const bool tiny = !(fabs(pv) >= LuMinNormal<T>());  // LAPACK: divide instead of 1/pivot
  const T rp = T(1) / pv;
  // 4. positions (the pivot row takes j, the row at j takes the pivot's old place), multipliers.
  // S = 2: `other` is the partner half's slot 0 (the second half: column j; the first: slot NH).
  T l[C::R], last[C::R], other[C::R];
  bool elim[C::R];
#pragma unroll
  for (int q = 0; q < C::R; ++q) {
    other[q] = S > 1 ? __shfl_xor_sync(0xffffffffu, s.row[q][0], 1) : T(0);
    const bool piv = row_id(q) == prow;
    const int p = s.pos[q];
    s.pos[q] = piv ? j : (p == j ? ppos : p);
    elim[q] = GJ ? (!piv && p >= 0) : s.pos[q] > j;
    const T xj = (S > 1 && h > 0) ? other[q] : s.row[q][0];  // column j of the row
    T x = xj;
    if (pv != T(0)) x = tiny ? x / pv : x * rp;
    l[q] = elim[q] ? x : T(0);
    if (GJ && piv) s.sc[q] = rp;
    last[q] = GJ ? (piv ? T(1) : -l[q]) : (elim[q] ? l[q] : xj);
  }
  // 5. rank-1 update + rotation, one 16-byte pivot-row vector serving every owned row
#pragma unroll
  for (int c = 0; c < NH; c += KV) {
    const VT v = *reinterpret_cast<const VT*>(u + base + c);
#pragma unroll
    for (int q = 0; q < C::R; ++q)
#pragma unroll
      for (int e = 0; e < KV; ++e)
        if (c + e > 0) {
          // LU: rows not eliminated (U rows, padding) have l = 0 and shift unchanged, as do the
          // L slots of every row (the pivot row reads 0 there). A non-finite pivot row (only from
          // a non-finite input) makes 0 * inf = NaN there, where LAPACK leaves those values.
          s.row[q][c + e - 1] = fma(-l[q], V::Get(v, e), s.row[q][c + e]);
        }
  }
  if (h == S - 1) {  // the row's last slot receives column j's result
#pragma unroll
    for (int q = 0; q < C::R; ++q) s.row[q][NH - 1] = last[q];
  } else {  // slot NH - 1 of a first half: the partner's slot 0, updated
    const T un = u[base + NH];
#pragma unroll
    for (int q = 0; q < C::R; ++q) s.row[q][NH - 1] = fma(-l[q], un, other[q]);
  }
  if constexpr (GJ) {
    const T ub = u[N];
#pragma unroll
    for (int q = 0; q < C::R; ++q) s.b[q] = fma(-l[q], ub, s.b[q]);
  }
}

// GJ = false: kFactor / kSlogdet; GJ = true: kInverse / kSolve (k <= 1).
template <typename T, int N, bool GJ>
__global__ void __launch_bounds__(LuWarpCfg<T, N>::kThreads, LuWarpMinBlocks<T>(LuWarpCfg<T, N>::kThreads))
    LuWarpKernel(LuArgs<T> args, int out) {
  using C = LuWarpCfg<T, N>;
  constexpr int S = C::S, NH = C::NH;
  extern __shared__ __align__(16) unsigned char smraw[];
  const int group = threadIdx.x / C::TG, t = threadIdx.x % C::TG, base = (t % S) * NH;
  auto* sh = reinterpret_cast<LuWarpShared<T, N>*>(smraw) + group;
  const int n = args.n, ld = n | 1;
  const int64_t nn = static_cast<int64_t>(n) * n;
  const bool has_b = GJ && out == int(LuOutput::kSolve) && args.k == 1;
  for (int64_t mat = int64_t(blockIdx.x) * C::M + group; mat < args.batch; mat += int64_t(gridDim.x) * C::M) {
    LuGroupCopy<T, C::TG>(args.a + mat * nn, n, sh->tile, ld, n, n, t);
    LuWarpState<T, N> s;
    LuGroupSync<C::G>(group);
#pragma unroll
    for (int q = 0; q < C::R; ++q) {
      const int r = t / S + q * (C::TG / S);
      s.pos[q] = r < n ? r : -1;
#pragma unroll
      for (int c = 0; c < NH; ++c) s.row[q][c] = (r < n && base + c < n) ? sh->tile[r * ld + base + c] : T(0);
      s.b[q] = (has_b && r < n) ? args.b[mat * n + r] : T(0);
      s.sc[q] = T(1);
    }
    s.info = 0, s.logs = T(0), s.cnt = 0;
    LuGroupSync<C::G>(group);  // tile reads done before the output stage rewrites it
    const bool det = out == int(LuOutput::kSlogdet);
    for (int j = 0; j < n; ++j) LuWarpStep<T, N, GJ>(s, sh, j, group, t, det);
    LuGroupSync<C::G>(group);  // rowof / pivs of the last step visible
    if constexpr (GJ) {
      if (out == int(LuOutput::kInverse)) {  // inv(pos(r), rowof[k]) = sc(r) W(r, k), W(r, k) in slot (k - n) mod N
#pragma unroll
        for (int q = 0; q < C::R; ++q) {
          const int p = s.pos[q];
          if (p >= 0) {
#pragma unroll
            for (int c = 0; c < NH; ++c) {
              const int k = (base + c + n) & (N - 1);
              if (k < n) sh->tile[p * ld + sh->rowof[k]] = s.row[q][c] * s.sc[q];
            }
          }
        }
        LuGroupSync<C::G>(group);
        LuGroupCopy<T, C::TG>(sh->tile, ld, args.inv + mat * nn, n, n, n, t);
      } else if (has_b) {  // x(pos(r)) = b'(r)
#pragma unroll
        for (int q = 0; q < C::R; ++q)
          if (s.pos[q] >= 0 && base == 0) args.x[mat * n + s.pos[q]] = s.b[q] * s.sc[q];
      }
      if (t == 0) args.info[mat] = s.info;
    } else if (out == int(LuOutput::kSlogdet)) {
      if (t == 0) {
        const bool zero = s.cnt >= (1 << 20);
        args.sign[mat] = zero ? T(0) : ((s.cnt & 1) ? T(-1) : T(1));
        args.logabsdet[mat] = zero ? -LuInf<T>() : s.logs;
      }
    } else {
#pragma unroll
      for (int q = 0; q < C::R; ++q) {
        const int p = s.pos[q];
        if (p >= 0) {
#pragma unroll
          for (int c = 0; c < NH; ++c) {  // column k in slot (k - n) mod N
            const int k = (base + c + n) & (N - 1);
            if (k < n) sh->tile[p * ld + k] = s.row[q][c];
          }
        }
      }
      LuGroupSync<C::G>(group);
      LuGroupCopy<T, C::TG>(sh->tile, ld, args.lu + mat * nn, n, n, n, t);
      for (int i = t; i < n; i += C::TG) {
        args.pivots[mat * n + i] = sh->pivs[i];
        if (args.perm) args.perm[mat * n + i] = sh->rowof[i];
      }
      if (t == 0) args.info[mat] = s.info;
    }
    LuGroupSync<C::G>(group);  // tile / rowof reads done before the next matrix
  }
}

template <typename T, int N>
size_t LuWarpSmemBytes() {
  return LuWarpCfg<T, N>::M * sizeof(LuWarpShared<T, N>);
}

template <typename T, int N, bool GJ>
cudaError_t LuWarpRun(cudaStream_t stream, const LuArgs<T>& args, LuOutput out) {
  using C = LuWarpCfg<T, N>;
  const size_t smem = LuWarpSmemBytes<T, N>();
  auto kern = LuWarpKernel<T, N, GJ>;
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  kern<<<GridFor(CeilDiv(args.batch, C::M)), C::kThreads, smem, stream>>>(args, int(out));
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
