// LU blocked size classes for kLuSmallMaxN < n <= LuBlockedMaxN<T>(): getrf, slogdet and gesv k = 1
// on the tile class where LuTileTakes (cuda/lu_blocked_tile.cuh; also for n <= kLuSmallMaxN); getrf on the
// left-looking class from LuLeftMinN (cuda/lu_blocked_left.cuh); otherwise warp (matrix in registers:
// n <= kLuWarpMaxN, f32 up to LuWarpWideMaxN), medium (matrix in shared memory, every output kind)
// or large (matrix in global memory, factor only: where the left class does not fit the device).
#include "cuda/lu_blocked_layout.cuh"

namespace batchla {
namespace detail {
namespace {

// Largest n <= LuMediumMaxN<T>() whose matrix (+ a one-column solve chunk) fits the device
// (LuMediumMaxN<T>() itself, sized for sm_90, when no device answers).
template <typename T>
int MediumMaxN() {
  const size_t optin = SmemOptin();
  int n = LuMediumMaxN<T>();
  if (optin == 0) return n;
  while (n > 0 && LuMediumSmemBytes<T>(n, 1) > optin) --n;
  return n;
}

// kFactor: medium (shared memory) up to this n, then large. Benchmark variants override it.
#ifndef BATCHLA_LU_FACTOR_MEDIUM_MAXN_F32
#define BATCHLA_LU_FACTOR_MEDIUM_MAXN_F32 kLuMediumMaxNF32
#endif
#ifndef BATCHLA_LU_FACTOR_MEDIUM_MAXN_F64
#define BATCHLA_LU_FACTOR_MEDIUM_MAXN_F64 kLuMediumMaxNF64
#endif
template <typename T>
int FactorMediumMaxN() {
  const int limit = sizeof(T) == 8 ? BATCHLA_LU_FACTOR_MEDIUM_MAXN_F64 : BATCHLA_LU_FACTOR_MEDIUM_MAXN_F32;
  const int fit = MediumMaxN<T>();
  return limit < fit ? limit : fit;
}

}  // namespace

template <typename T>
int LuBlockedMaxN() {
  // The large class's shared memory grows with n: on devices with less than sm_90's 227 KB (sm_80:
  // 163 KB) stop where it still fits; the Python lowering sends larger n to jax's own LU.
  const size_t optin = SmemOptin();
  int n = kLuLargeMaxN;
  if (optin == 0) return n;
  while (n > tuning::kLuSmallMaxN && LuLargeSmemBytes<T>(n) > optin) --n;
  return n;
}
template <typename T>
int LuBlockedFusedMaxN() {
  return MediumMaxN<T>();
}

// kFactor / kSlogdet for n <= kLuWarpMaxN on the warp class (else the medium class): f32 n = 64
// getrf 837 vs 1325 us; f64 since its 2-block register budget (bench/NOTES.md, "Warp class v4"):
// n = 64 getrf 926 vs 1290 us, slogdet 1020 vs 1167; n = 48 1225 vs 1358, slogdet a tie.
// BATCHLA_LU_WARP_LU=0: the medium class (benchmark variant).
template <typename T>
constexpr bool LuWarpLu() {
#ifdef BATCHLA_LU_WARP_LU
  return BATCHLA_LU_WARP_LU != 0;
#else
  return true;
#endif
}

// The N = 128 class's block needs its shared memory on this device (f64: 149 KB; sm_86 / 89 have
// 99 KB): else the medium class (or, above LuBlockedFusedMaxN, jax's own LU) takes those n.
template <typename T>
bool LuWarpWideFits() {
  const size_t optin = SmemOptin();
  return optin == 0 || LuWarpSmemBytes<T, 128>() <= optin;
}

// getrf on the left-looking class from LuLeftMinN<T>() (where it measured faster than the warp,
// medium and large classes; tuning.h) while its shared memory fits the device.
template <typename T>
bool LuLeftTakes(int n) {
  const int lo = tuning::kLuLeftMinN.Of(sizeof(T) == 8);
  if (n < lo || n > tuning::kLuLeftMaxN) return false;
  const size_t optin = SmemOptin();
  return optin == 0 || LuLeftSmem<T>(n) <= optin;
}

template <typename T>
cudaError_t LuBlocked(cudaStream_t stream, const LuArgs<T>& args, LuOutput out) {
  const int n = args.n;
  if (n < 1 || args.batch < 1) return cudaErrorInvalidValue;
  if (LuTileTakes<T>(out, n, args.k)) return LuTileRun<T>(stream, args, out);
  if (out == LuOutput::kFactor && LuLeftTakes<T>(n)) return LuLeftLaunch<T>(stream, args);
  if (out == LuOutput::kSlogdet && args.lu && LuSlogdetOnLeft<T>(n)) return LuLeftLaunch<T>(stream, args);  // lu: scratch
  if (out == LuOutput::kInverse && LuGetriTakes<T>(n) && LuLeftTakes<T>(n)) {  // getrf into inv, then getri
    if (!args.scratch) return cudaErrorInvalidValue;
    LuArgs<T> f;
    f.a = args.a, f.batch = args.batch, f.n = n, f.lu = args.inv, f.info = args.info;
    f.pivots = args.scratch, f.perm = args.scratch + args.batch * n;
    // the getrf class a factor call at n takes: the tile class where it is faster, else the left class
    const cudaError_t e = LuTileTakes<T>(LuOutput::kFactor, n, 0) ? LuTileRun<T>(stream, f, LuOutput::kFactor)
                                                                   : LuLeftLaunch<T>(stream, f);
    return e != cudaSuccess ? e : LuGetriLaunch<T>(stream, args.inv, f.perm, args.batch, n);
  }
  // n <= 64: matrix in the registers of one (f32) or two (f64) warps, no block barriers; n = 65..128:
  // four (f32) or eight (f64) warps (cuda/lu_blocked_warp.cuh). kSolve with k > 1 stays on the
  // medium class.
  const bool lu_out = out == LuOutput::kFactor || out == LuOutput::kSlogdet;
  const bool gj_out = out == LuOutput::kInverse || (out == LuOutput::kSolve && args.k <= 1);
  if (n <= kLuWarpMaxN) {
    if (lu_out && LuWarpLu<T>()) return LuWarpRun<T, 64, false>(stream, args, out);
    if (gj_out) return LuWarpRun<T, 64, true>(stream, args, out);
  } else if (n <= LuWarpWideMaxN<T>() && (lu_out || gj_out) && n >= LuWarpWideMinN<T>(out) &&
             LuWarpWideFits<T>()) {  // N = 128
    return lu_out ? LuWarpRun<T, 128, false>(stream, args, out) : LuWarpRun<T, 128, true>(stream, args, out);
  }
  if (out == LuOutput::kFactor) {
    if (n <= FactorMediumMaxN<T>()) return LuMediumRun<T, false>(stream, args, out);
    if (n > kLuLargeMaxN) return cudaErrorInvalidValue;
    return LuLargeLaunch<T>(stream, args);
  }
  if (n <= MediumMaxN<T>()) return LuMediumRun<T, true>(stream, args, out);
  return cudaErrorInvalidValue;
}

template <typename T>
bool LuSlogdetOnLeft(int n) {
  return LuLeftTakes<T>(n) && !LuTileTakes<T>(LuOutput::kSlogdet, n, 0);
}

template <typename T>
bool LuBlockedFusedWins(LuOutput out, int n) {
  if (out == LuOutput::kSlogdet && LuSlogdetOnLeft<T>(n)) return true;
  if (n > LuBlockedFusedMaxN<T>()) return false;
  if (out == LuOutput::kFactor || !LuLeftTakes<T>(n)) return true;
  return n < (sizeof(T) == 8 ? tuning::kLuComposedMinNF64 : tuning::kLuComposedMinNF32)[int(out)];
}

#define BATCHLA_INSTANTIATE_LU_BLOCKED(T)                                                  \
  template int LuBlockedMaxN<T>();                                                        \
  template bool LuBlockedFusedWins<T>(LuOutput, int);                                     \
  template bool LuSlogdetOnLeft<T>(int);                                                  \
  template int LuBlockedFusedMaxN<T>();                                                   \
  template cudaError_t LuBlocked<T>(cudaStream_t, const LuArgs<T>&, LuOutput);
BATCHLA_INSTANTIATE_LU_BLOCKED(float)
BATCHLA_INSTANTIATE_LU_BLOCKED(double)
#undef BATCHLA_INSTANTIATE_LU_BLOCKED

}  // namespace detail
}  // namespace batchla
