// detail::QrTile / QrTileTakes (cuda/qr_dispatch.h) for float and double: the tile QR class,
// kernels in cuda/qr_tile.cuh.
#include "cuda/qr_tile.cuh"

namespace batchla {
namespace detail {

template bool QrTileTakes<float>(int m, int n, QrOutput out);
template bool QrTileTakes<double>(int m, int n, QrOutput out);
template cudaError_t QrTile<float>(cudaStream_t stream, const QrArgs<float>& args);
template cudaError_t QrTile<double>(cudaStream_t stream, const QrArgs<double>& args);

}  // namespace detail
}  // namespace batchla
