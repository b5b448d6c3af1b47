// The small QR class (cuda/qr_small.cuh) for float, ncols in 33..64 (a pair of warps per
// matrix, M = 64), kQr and kLstsq (kGeqrf / kR: qr_small_f32_wide.cu).
#include "cuda/qr_small.cuh"

namespace batchla {
namespace detail {

BATCHLA_QR_SMALL_M64(float, 64, QrOutput::kQr)
BATCHLA_QR_SMALL_M64(float, 64, QrOutput::kLstsq)

}  // namespace detail
}  // namespace batchla
