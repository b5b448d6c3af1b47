// Batched inverse from the LU factors (getri) for n = 65..128 (LuGetriTakes, cuda/tuning.h): the
// inverse's output buffer holds the packed factors getrf wrote (P A = L U, row-major, perm[i] = the
// row of A in row i) and is overwritten with A^-1 = U^-1 L^-1 P. A block of 256 threads per
// matrix; the factors in shared memory, padded to NP = RoundUp(n, 32) with the identity (the padded
// matrix's factors and inverse are block-diagonal, the padding never reaches the output):
//   1. U^-1 and L^-1 in place (trtri's layout: U^-1 on and above the diagonal, L^-1 below it, its
//      unit diagonal implied), by 32 x 32 blocks. The diagonal blocks: one warp each, lane = column,
//      a column sweep in registers. Then stage s = 1 .. nb - 1 takes U's block column J = s and L's
//      block column J = nb - 1 - s (every earlier stage's columns final, column J still original):
//        U^-1(I, J) = -(sum_{I <= K < J} U^-1(I, K) U(K, J)) U^-1(J, J),  I < J,
//        L^-1(I, J) = -(sum_{J < K <= I} L^-1(I, K) L(K, J)) L^-1(J, J),  I > J,
//      the sums of a stage all taken before any of its blocks is overwritten.
//   2. M = U^-1 L^-1 (M(i, j) sums k >= max(i, j)) by 16 x 16 thread tiles of (NP / 16)^2, written
//      back to shared memory with the columns permuted (A^-1(:, perm[k]) = M(:, k)) and copied out.
// f64 runs the block products of 1 and 2 on the tensor cores (m8n8k4 DMMA, exact f64 FMAs): the
// FMA form issued ~147k warp instructions a matrix at n = 128 (bench/NOTES.md, "getri").
// Flops: 4/3 n^3 (LAPACK's getri), against 2 n^3 for getrs with n right-hand sides.
// A zero pivot (info > 0) gives 1 / 0 = inf, which spreads through that matrix's inverse (inf /
// NaN, as jnp's solve against the identity); no other matrix is touched.
// Measurements: bench/NOTES.md, "getri".
#pragma once

#include <cstdint>
#include <type_traits>

#include "cuda/common.cuh"
#include "cuda/lu_dispatch.h"
#include "cuda/trsm_kernels.cuh"

namespace batchla {
namespace detail {

constexpr int kGetriThreads = 256;
constexpr int kGetriNB = 32;  // the trtri block

template <typename T, int NP>
struct GetriCfg {
  static_assert(NP % kGetriNB == 0 && NP <= 128, "GetriCfg: NP a multiple of 32, at most 128");
  static constexpr int kLd = NP + 16 / int(sizeof(T));  // rows of an odd number of 16-byte granules
  static constexpr int kNb = NP / kGetriNB;             // diagonal blocks (<= 4: one warp each for U and L)
  static constexpr int kTM = NP / 16;                   // phase 2 thread tile
  static constexpr size_t kSmem = size_t(NP) * kLd * sizeof(T) + NP * sizeof(int);
  // Blocks per SM the registers are sized for: what shared memory allows, but no fewer registers
  // than the FMA form's phase 2 tile, its operands and ~24 more need (f64's DMMA tiles need about
  // as many; f64 NP = 128: one block of <= 255).
  static constexpr int kWords = int(sizeof(T)) / 4;
  static constexpr int kRegs = (kTM * kTM + 2 * kTM) * kWords + 24;
  static constexpr int kBySmem = int((228u * 1024u) / (kSmem + 1024u));
  static constexpr int kByRegs = 65536 / (kGetriThreads * kRegs);
#ifdef BATCHLA_GETRI_MINB  // benchmark variants only
  static constexpr int kMinBlocks = BATCHLA_GETRI_MINB;
#else
  static constexpr int kMinBlocks = kBySmem < kByRegs ? (kBySmem < 1 ? 1 : kBySmem) : (kByRegs < 1 ? 1 : kByRegs);
#endif
};

// ---- phase 1a: one 32 x 32 diagonal block of U or L inverted in place by one warp -----------------------
// U: lane c solves U x = e_c backwards (x_i /= U(i, i), then x_k -= U(k, i) x_i for k < i) and writes
// x(0..c) into column c. L (unit lower): forward, writes x(c+1..31). U's warp touches the diagonal
// and above, L's warp only below it: the two warps of one diagonal block never meet.
template <typename T, bool UPPER>
__device__ __forceinline__ void GetriDiagBlock(T* S, int ld, int r0, int lane) {
  constexpr int B = kGetriNB;
  const T* D = S + r0 * ld + r0;
  T x[B];
#pragma unroll
  for (int i = 0; i < B; ++i) x[i] = i == lane ? T(1) : T(0);
  // (the empty asm statements keep ptxas from hoisting more than 8 loads ahead: with x[32] live,
  // f64 under a 128-register budget spilled ~1 KB here)
  if constexpr (UPPER) {
#pragma unroll
    for (int i = B - 1; i >= 0; --i) {
      x[i] *= T(1) / D[i * ld + i];
#pragma unroll
      for (int k = 0; k < i; ++k) {
        if (k % 8 == 0) asm volatile("" ::: "memory");
        x[k] = fma(-D[k * ld + i], x[i], x[k]);
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < B; ++i)
#pragma unroll
      for (int k = i + 1; k < B; ++k) {
        if ((k - i - 1) % 8 == 0) asm volatile("" ::: "memory");
        x[k] = fma(-D[k * ld + i], x[i], x[k]);
      }
  }
  __syncwarp();  // every lane has read the block before any column is overwritten
  T* col = S + r0 * ld + r0 + lane;
#pragma unroll
  for (int k = 0; k < B; ++k)
    if (UPPER ? k <= lane : k > lane) col[k * ld] = x[k];
}

// ---- phase 1b: 32 x 32 block products of 64-thread groups, 4 x 4 thread tiles ----------------------------
// Operand shapes inside a diagonal block: kUpper = on and above the diagonal (U^-1), kUnitLower =
// below it with an implied unit diagonal (L^-1), kFull = an off-diagonal block.
enum class GetriTri { kFull, kUpper, kUnitLower };

// Element (row, col) of the 32 x 32 block at p as an operand of shape TRI.
template <typename T, GetriTri TRI>
__device__ __forceinline__ T GetriAt(const T* p, int ld, int row, int col) {
  if constexpr (TRI == GetriTri::kFull) return p[row * ld + col];
  else if constexpr (TRI == GetriTri::kUpper) return col >= row ? p[row * ld + col] : T(0);
  else return col < row ? p[row * ld + col] : (col == row ? T(1) : T(0));
}

// acc(r0 + r, c0 + c) += sum_k A(r0 + r, k) B(k, c0 + c) over one 32-wide k block.
template <typename T, GetriTri TA, GetriTri TB>
__device__ __forceinline__ void GetriBlockMac(const T* A, const T* B, int ld, int r0, int c0, T (&acc)[4][4]) {
#pragma unroll 4
  for (int k = 0; k < kGetriNB; ++k) {
    T a[4], b[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) a[r] = GetriAt<T, TA>(A, ld, r0 + r, k);
#pragma unroll
    for (int c = 0; c < 4; ++c) b[c] = GetriAt<T, TB>(B, ld, k, c0 + c);
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[r][c] = fma(a[r], b[c], acc[r][c]);
  }
}

// Output `ob` of stage s: U's block (ob, s) for ob < s, else L's block (J + 1 + ob - s, J), J = nb - 1 - s.
struct GetriOut {
  bool upper;
  int bi, bj;  // block row / column of the output
};
template <int NB>
__device__ __forceinline__ GetriOut GetriStageOut(int s, int ob) {
  if (ob < s) return {true, ob, s};
  const int j = NB - 1 - s;
  return {false, j + 1 + ob - s, j};
}

// f64: one 32 x 32 block product on the tensor cores (m8n8k4 DMMA, exact f64 FMAs), 4 x 4 tiles of
// 8 x 8 per warp; the operands' shapes applied to the fragments as they load.
template <GetriTri TA, GetriTri TB>
__device__ __forceinline__ void GetriBlockMma(const double* A, const double* B, int ld, int lane,
                                              double (&acc)[4][4][2]) {
  const int g = lane >> 2, q = lane & 3;
#pragma unroll 2
  for (int kk = 0; kk < kGetriNB; kk += 4) {
    double a[4], b[4];
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      a[t] = GetriAt<double, TA>(A, ld, 8 * t + g, kk + q);
      b[t] = GetriAt<double, TB>(B, ld, kk + q, 8 * t + g);
    }
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) MmaF64m8n8k4(acc[r][c], a[r], b[c]);
  }
}

// The stages' block products in two forms, one output block of a stage per slot:
// GetriFmaForm: 4 groups of 64 threads, 4 x 4 thread tiles of the 32 x 32 block, slots g and g + 4.
// GetriMmaForm (f64): warp w the output w, 4 x 4 DMMA tiles of 8 x 8 (lane: row lane / 4, columns
// 2 (lane % 4) + {0, 1} of each).
template <typename T>
struct GetriFmaForm {
  static constexpr int kSlots = 2;
  using Acc = T[4][4];
  int grp, r0, c0;
  __device__ explicit GetriFmaForm(int tid) : grp(tid >> 6), r0(((tid & 63) >> 3) * 4), c0((tid & 7) * 4) {}
  __device__ int Output(int h) const { return grp + 4 * h; }
  __device__ void Zero(Acc& acc) const {
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[r][c] = T(0);
  }
  template <GetriTri TA, GetriTri TB>
  __device__ void Mac(const T* A, const T* B, int ld, Acc& acc) const {
    GetriBlockMac<T, TA, TB>(A, B, ld, r0, c0, acc);
  }
  __device__ void Store(T* blk, int ld, const Acc& acc, T sign) const {
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) blk[(r0 + r) * ld + c0 + c] = sign * acc[r][c];
  }
};
struct GetriMmaForm {
  static constexpr int kSlots = 1;
  using Acc = double[4][4][2];
  int warp, lane;
  __device__ explicit GetriMmaForm(int tid) : warp(tid >> 5), lane(tid & 31) {}
  __device__ int Output(int) const { return warp; }
  __device__ void Zero(Acc& acc) const {
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[r][c][0] = acc[r][c][1] = 0.0;
  }
  template <GetriTri TA, GetriTri TB>
  __device__ void Mac(const double* A, const double* B, int ld, Acc& acc) const {
    GetriBlockMma<TA, TB>(A, B, ld, lane, acc);
  }
  __device__ void Store(double* blk, int ld, const Acc& acc, double sign) const {
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
      for (int c = 0; c < 4; ++c)
#pragma unroll
        for (int e = 0; e < 2; ++e) blk[(8 * r + g) * ld + 8 * c + 2 * q + e] = sign * acc[r][c][e];
  }
};
template <typename T>
using GetriForm = typename std::conditional<sizeof(T) == 8, GetriMmaForm, GetriFmaForm<T>>::type;

// Stages s = 1 .. NB - 1 (the formulas at the top of the file), three barriers each.
template <typename T, int NB, class F>
__device__ __forceinline__ void GetriStages(T* S, int ld, const F& form) {
  constexpr int B = kGetriNB;
  auto blk = [&](int bi, int bj) { return S + (bi * B) * ld + bj * B; };
  for (int s = 1; s < NB; ++s) {
    typename F::Acc acc[F::kSlots];
    auto store = [&](const typename F::Acc (&res)[F::kSlots], T sign) {  // the stage's outputs in place
#pragma unroll
      for (int h = 0; h < F::kSlots; ++h) {
        const int ob = form.Output(h);
        if (ob < 2 * s) {
          const GetriOut o = GetriStageOut<NB>(s, ob);
          form.Store(blk(o.bi, o.bj), ld, res[h], sign);
        }
      }
    };
    auto compute = [&](auto&& products) {  // acc[h] = products(output h) for the stage's outputs
#pragma unroll
      for (int h = 0; h < F::kSlots; ++h) {
        form.Zero(acc[h]);
        const int ob = form.Output(h);
        if (ob < 2 * s) products(GetriStageOut<NB>(s, ob), acc[h]);
      }
    };
    // (a) T = the sums, from the final blocks of earlier stages and the still original column J
    compute([&](const GetriOut& o, typename F::Acc& a) {
      if (o.upper) {
        form.template Mac<GetriTri::kUpper, GetriTri::kFull>(blk(o.bi, o.bi), blk(o.bi, o.bj), ld, a);
        for (int k = o.bi + 1; k < o.bj; ++k)
          form.template Mac<GetriTri::kFull, GetriTri::kFull>(blk(o.bi, k), blk(k, o.bj), ld, a);
      } else {
        for (int k = o.bj + 1; k < o.bi; ++k)
          form.template Mac<GetriTri::kFull, GetriTri::kFull>(blk(o.bi, k), blk(k, o.bj), ld, a);
        form.template Mac<GetriTri::kUnitLower, GetriTri::kFull>(blk(o.bi, o.bi), blk(o.bi, o.bj), ld, a);
      }
    });
    __syncthreads();  // every sum of the stage taken
    store(acc, T(1));
    __syncthreads();
    // (b) the block = -T times the diagonal block's inverse
    compute([&](const GetriOut& o, typename F::Acc& a) {
      if (o.upper) form.template Mac<GetriTri::kFull, GetriTri::kUpper>(blk(o.bi, o.bj), blk(o.bj, o.bj), ld, a);
      else form.template Mac<GetriTri::kFull, GetriTri::kUnitLower>(blk(o.bi, o.bj), blk(o.bj, o.bj), ld, a);
    });
    __syncthreads();  // T read everywhere before it is replaced
    store(acc, T(-1));
    __syncthreads();
  }
}

// ---- phase 2: M = U^-1 L^-1 ------------------------------------------------------------------------------
// TM values from p (the thread tile's columns of one row; p aligned to TM * sizeof(T), which the
// row stride keeps): 16-byte loads where TM values are whole 16-byte granules, else 8-byte ones.
template <typename T, int TM>
__device__ __forceinline__ void GetriLoadRow(const T* p, T (&out)[TM]) {
  constexpr int kBytes = (TM * sizeof(T)) % 16 == 0 ? 16 : 8;
  constexpr int kV = kBytes / int(sizeof(T));
  using Word = typename std::conditional<kBytes == 16, float4, float2>::type;
#pragma unroll
  for (int g = 0; g < TM; g += kV) {
    const Word w = *reinterpret_cast<const Word*>(p + g);
    const T* e = reinterpret_cast<const T*>(&w);
#pragma unroll
    for (int v = 0; v < kV; ++v) out[g + v] = e[v];
  }
}

template <typename T, int NP>
__device__ __forceinline__ void GetriProduct(const T* S, int ld, int i0, int j0, T (&m)[NP / 16][NP / 16]) {
  constexpr int TM = NP / 16;
#pragma unroll
  for (int r = 0; r < TM; ++r)
#pragma unroll
    for (int c = 0; c < TM; ++c) m[r][c] = T(0);
  const int kb = i0 > j0 ? i0 : j0;
  // k < kb + TM: U^-1(i, k) is 0 below its diagonal, L^-1(k, j) 0 above and 1 on it
#pragma unroll
  for (int dk = 0; dk < TM; ++dk) {
    const int k = kb + dk;
    if (k >= NP) break;
    T a[TM], b[TM];
#pragma unroll
    for (int r = 0; r < TM; ++r) a[r] = k >= i0 + r ? S[(i0 + r) * ld + k] : T(0);
#pragma unroll
    for (int c = 0; c < TM; ++c) {
      const int j = j0 + c;
      b[c] = k > j ? S[k * ld + j] : (k == j ? T(1) : T(0));
    }
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
      for (int c = 0; c < TM; ++c) m[r][c] = fma(a[r], b[c], m[r][c]);
  }
#pragma unroll 2
  for (int k = kb + TM; k < NP; ++k) {
    T a[TM], b[TM];
#pragma unroll
    for (int r = 0; r < TM; ++r) a[r] = S[(i0 + r) * ld + k];
    GetriLoadRow<T, TM>(S + k * ld + j0, b);
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
      for (int c = 0; c < TM; ++c) m[r][c] = fma(a[r], b[c], m[r][c]);
  }
}

// f64 on the tensor cores: warp w owns tile rows (w % 4) RW .. + RW and tile columns (w / 4) CW .. + CW
// of 8 x 8 tiles (RW = NP / 32, CW = NP / 16); k steps of 4 from the first k any of its tiles needs,
// each tile joining once k reaches 8 max(I, J) (before that its terms are all zero); the shapes
// of U^-1 and L^-1 applied to the fragments as they load.
template <int NP>
struct GetriMmaTiles {
  static constexpr int kRW = NP / 32, kCW = NP / 16;
};
template <int NP>
__device__ __forceinline__ void GetriProductMma(const double* S, int ld, int warp, int lane,
                                                double (&m)[NP / 32][NP / 16][2]) {
  constexpr int RW = GetriMmaTiles<NP>::kRW, CW = GetriMmaTiles<NP>::kCW;
  const int g = lane >> 2, q = lane & 3, I0 = (warp & 3) * RW, J0 = (warp >> 2) * CW;
#pragma unroll
  for (int r = 0; r < RW; ++r)
#pragma unroll
    for (int c = 0; c < CW; ++c) m[r][c][0] = m[r][c][1] = 0.0;
  const int kbeg = 8 * (I0 > J0 ? I0 : J0);
#pragma unroll 1
  for (int kk = kbeg; kk < NP; kk += 4) {
    const int k = kk + q;
    double a[RW], b[CW];
#pragma unroll
    for (int r = 0; r < RW; ++r) {
      const int i = 8 * (I0 + r) + g;
      a[r] = k >= i ? S[i * ld + k] : 0.0;
    }
#pragma unroll
    for (int c = 0; c < CW; ++c) {
      const int j = 8 * (J0 + c) + g;
      b[c] = k > j ? S[k * ld + j] : (k == j ? 1.0 : 0.0);
    }
    // tiles whose first needed k is past kk contribute zeros: skipped (warp-uniform predicates)
    const int last = kk >> 3;  // tiles with I, J <= last are live
#pragma unroll
    for (int r = 0; r < RW; ++r)
#pragma unroll
      for (int c = 0; c < CW; ++c)
        if (I0 + r <= last && J0 + c <= last) MmaF64m8n8k4(m[r][c], a[r], b[c]);
  }
}

template <typename T, int NP>
__global__ void __launch_bounds__(kGetriThreads, GetriCfg<T, NP>::kMinBlocks)
    LuGetriKernel(T* __restrict__ inv, const int32_t* __restrict__ perm, int64_t batch, int n) {
  using C = GetriCfg<T, NP>;
  constexpr int LD = C::kLd, TM = C::kTM, NT = kGetriThreads;
  extern __shared__ __align__(16) unsigned char smraw[];
  T* S = reinterpret_cast<T*>(smraw);
  int* ps = reinterpret_cast<int*>(smraw + size_t(NP) * LD * sizeof(T));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t nn = int64_t(n) * n;
  const int i0 = (tid >> 4) * TM, j0 = (tid & 15) * TM;
  constexpr int V = 16 / int(sizeof(T));
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    T* g = inv + mat * nn;
    // 0. the factors in, the identity around them, the permutation
    if (n % V == 0 && (reinterpret_cast<uintptr_t>(inv) & 15u) == 0) {
      const int units = n / V;
      for (int e = tid; e < n * units; e += NT) {
        const int r = e / units, c = (e - r * units) * V;
        CpAsync<16>(S + r * LD + c, g + int64_t(r) * n + c, true);
      }
    } else {
      for (int e = tid; e < n * n; e += NT) {
        const int r = e / n, c = e - r * n;
        CpAsync<int(sizeof(T))>(S + r * LD + c, g + e, true);
      }
    }
    CpAsyncCommit();
    if (n < NP) {
      for (int e = tid; e < NP * NP; e += NT) {
        const int r = e / NP, c = e - r * NP;
        if (r >= n || c >= n) S[r * LD + c] = r == c ? T(1) : T(0);
      }
    }
    for (int i = tid; i < NP; i += NT) ps[i] = i < n ? perm[mat * n + i] : i;
    CpAsyncWait<0>();
    __syncthreads();
    // 1. U^-1 and L^-1 in place
    if (warp < C::kNb) GetriDiagBlock<T, true>(S, LD, warp * kGetriNB, lane);
    else if (warp >= 4 && warp < 4 + C::kNb) GetriDiagBlock<T, false>(S, LD, (warp - 4) * kGetriNB, lane);
    __syncthreads();
    // 2. M = U^-1 L^-1; column k of M is column perm[k] of A^-1
    GetriStages<T, C::kNb>(S, LD, GetriForm<T>(tid));
    if constexpr (sizeof(T) == 8) {
      constexpr int RW = GetriMmaTiles<NP>::kRW, CW = GetriMmaTiles<NP>::kCW;
      double m[RW][CW][2];
      GetriProductMma<NP>(S, LD, warp, lane, m);
      __syncthreads();  // every product has read S
      const int g = lane >> 2, q = lane & 3, I0 = (warp & 3) * RW, J0 = (warp >> 2) * CW;
#pragma unroll
      for (int c = 0; c < CW; ++c)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = ps[8 * (J0 + c) + 2 * q + e];
#pragma unroll
          for (int r = 0; r < RW; ++r) S[(8 * (I0 + r) + g) * LD + col] = m[r][c][e];
        }
    } else {
      T m[TM][TM];
      GetriProduct<T, NP>(S, LD, i0, j0, m);
      __syncthreads();  // every product has read S
#pragma unroll
      for (int c = 0; c < TM; ++c) {
        const int col = ps[j0 + c];
#pragma unroll
        for (int r = 0; r < TM; ++r) S[(i0 + r) * LD + col] = m[r][c];
      }
    }
    __syncthreads();
    for (int e = tid; e < n * n; e += NT) {
      const int r = e / n, c = e - r * n;
      g[e] = S[r * LD + c];
    }
    __syncthreads();  // S read out before the next matrix is copied in
  }
}

template <typename T, int NP>
struct LuGetriGridTag {};

// inv: batch x n x n factors in, inverses out; perm: batch x n (getrf's). 64 < n <= 128.
template <typename T>
cudaError_t LuGetriLaunch(cudaStream_t stream, T* inv, const int32_t* perm, int64_t batch, int n) {
  auto launch = [&](auto np) -> cudaError_t {
    constexpr int NP = decltype(np)::value;
    auto kern = LuGetriKernel<T, NP>;
    constexpr size_t smem = GetriCfg<T, NP>::kSmem;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
    unsigned grid = 0;
    if ((e = PersistentGrid<LuGetriGridTag<T, NP>>(kern, kGetriThreads, smem, batch, &grid)) != cudaSuccess) return e;
    kern<<<grid, kGetriThreads, smem, stream>>>(inv, perm, batch, n);
    return cudaGetLastError();
  };
  if (n <= 64 || n > 128) return cudaErrorInvalidValue;
  if (n <= 96) return launch(std::integral_constant<int, 96>());
  return launch(std::integral_constant<int, 128>());
}

}  // namespace detail
}  // namespace batchla
