// potrf / posv, blocked classes (block per matrix): medium (shared memory) and large (global).
#include "cuda/potrf_blocked.cuh"

namespace batchla {
namespace detail {
static_assert(MediumSmemBytes<double>(tuning::kSmemMaxNF64, true) <= 232448, "medium f64 exceeds 227 KB");
static_assert(MediumSmemBytes<float>(tuning::kSmemMaxNF32, true) <= 232448, "medium f32 exceeds 227 KB");
static_assert(LargeSmemBytes<double>(768) <= 232448, "large f64 panel exceeds 227 KB");
template cudaError_t BlockedLaunch<float>(cudaStream_t, const float*, const float*, float*, int32_t*,
                                          int64_t, int, int, int, bool, bool);
template cudaError_t BlockedLaunch<double>(cudaStream_t, const double*, const double*, double*,
                                           int32_t*, int64_t, int, int, int, bool, bool);
}  // namespace detail
}  // namespace batchla
