// detail::QrSmall / QrSmallFits (cuda/qr_dispatch.h) for float: the small QR class, kernels in
// cuda/qr_small.cuh (every padded row count M and output kind).
#include "cuda/qr_small.cuh"

namespace batchla {
namespace detail {

template bool QrSmallFits<float>(int m, int ncols);
template cudaError_t QrSmall<float>(cudaStream_t stream, const QrArgs<float>& args, QrOutput out);

}  // namespace detail
}  // namespace batchla
