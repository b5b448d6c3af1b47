// detail::QrPanel / QrPanelTakes (cuda/qr_dispatch.h) for both scalar types: the QR panel class,
// kernels in cuda/qr_panel.cuh.
#include "cuda/qr_panel.cuh"

namespace batchla {
namespace detail {

#define BATCHLA_INSTANTIATE(T)                                                       \
  template bool QrPanelTakes<T>(int m, int ncols, QrOutput out);                      \
  template cudaError_t QrPanel<T>(cudaStream_t stream, const QrArgs<T>& args, QrOutput out);
BATCHLA_INSTANTIATE(float)
BATCHLA_INSTANTIATE(double)
#undef BATCHLA_INSTANTIATE

}  // namespace detail
}  // namespace batchla
