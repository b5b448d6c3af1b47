// detail::QrColumn / QrColumnTakes (cuda/qr_dispatch.h) for both scalar types: the QR column
// class, kernels in cuda/qr_column.cuh.
#include "cuda/qr_column.cuh"

namespace batchla {
namespace detail {

#define BATCHLA_INSTANTIATE(T)                                                        \
  template bool QrColumnTakes<T>(int m, int ncols, QrOutput out);                      \
  template cudaError_t QrColumn<T>(cudaStream_t stream, const QrArgs<T>& args, QrOutput out);
BATCHLA_INSTANTIATE(float)
BATCHLA_INSTANTIATE(double)
#undef BATCHLA_INSTANTIATE

}  // namespace detail
}  // namespace batchla
