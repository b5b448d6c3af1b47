// Helpers shared by the standalone kernel checks (tests/cuda/check_*.cu): CUDA error check, failure
// counting, a reproducible host RNG, per-dtype names and epsilons, and the sanitize mode.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static int g_fail = 0;  // failures so far; a check exits non-zero when it is not 0

// Aborts the check on any CUDA error (a launch error is a failure of the whole run).
#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

// Counts a failure; prints the first 40.
#define FAIL(...)               \
  do {                          \
    if (g_fail < 40) {          \
      std::printf("FAIL: ");    \
      std::printf(__VA_ARGS__); \
      std::printf("\n");        \
    }                           \
    ++g_fail;                   \
  } while (0)

// 64-bit LCG: the same matrices on every run (a check may reseed g_rng at the start of main).
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static double Rand() {  // uniform [-1, 1)
  g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
  return ((g_rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0 - 1.0;
}

template <typename T>
const char* Name() { return sizeof(T) == 4 ? "f32" : "f64"; }
template <typename T>
double Eps() { return sizeof(T) == 4 ? 1.1920928955078125e-07 : 2.220446049250313e-16; }

// Sanitize mode, for tests/cuda/run_sanitizer.sh: on when BATCHLA_CHECK_SANITIZE is set to anything
// but "" or "0". compute-sanitizer makes kernels 10-100x slower (racecheck the most), so a check in
// this mode runs no timing, caps every batch at kSanitizeMaxBatch matrices (SanitizeBatch) and uses
// its own shorter n list, which still reaches every dispatch boundary (each check's comment says
// which). The correctness checks stay on: a finding and a wrong result both fail the run.
inline bool SanitizeMode() {
  static const bool on = [] {
    const char* v = std::getenv("BATCHLA_CHECK_SANITIZE");
    return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
  }();
  return on;
}
// 40 keeps the odd batches the checks use to leave a partial warp / lane group / stage (1, 3, 7, 33,
// 37) and cuts the 1000-matrix ones, whose extra rounds of the same code only cost sanitizer time.
constexpr int64_t kSanitizeMaxBatch = 40;
inline int64_t SanitizeBatch(int64_t batch) {
  return SanitizeMode() && batch > kSanitizeMaxBatch ? kSanitizeMaxBatch : batch;
}
