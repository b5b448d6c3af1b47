// The small QR class (cuda/qr_small.cuh) for float, M = 64 rows, ncols <= 32 (m in 33..64): a
// warp per unit. Its own translation unit because the M = 64 kernels compile slowly.
#include "cuda/qr_small.cuh"

namespace batchla {
namespace detail {

BATCHLA_QR_SMALL_M64(float, 32, QrOutput::kGeqrf)
BATCHLA_QR_SMALL_M64(float, 32, QrOutput::kR)
BATCHLA_QR_SMALL_M64(float, 32, QrOutput::kQr)
BATCHLA_QR_SMALL_M64(float, 32, QrOutput::kLstsq)

}  // namespace detail
}  // namespace batchla
