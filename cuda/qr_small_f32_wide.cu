// The small QR class (cuda/qr_small.cuh) for float, ncols in 33..64 (a pair of warps per
// matrix, M = 64), kGeqrf and kR (kQr / kLstsq: qr_small_f32_wide_q.cu; one file compiles too
// slowly).
#include "cuda/qr_small.cuh"

namespace batchla {
namespace detail {

BATCHLA_QR_SMALL_M64(float, 64, QrOutput::kGeqrf)
BATCHLA_QR_SMALL_M64(float, 64, QrOutput::kR)

}  // namespace detail
}  // namespace batchla
