// detail::QrSmall / QrSmallFits (cuda/qr_dispatch.h) for double: the small QR class, kernels in
// cuda/qr_small.cuh (every padded row count M and output kind).
#include "cuda/qr_small.cuh"

namespace batchla {
namespace detail {

template bool QrSmallFits<double>(int m, int ncols);
template cudaError_t QrSmall<double>(cudaStream_t stream, const QrArgs<double>& args, QrOutput out);

}  // namespace detail
}  // namespace batchla
