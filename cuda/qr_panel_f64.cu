// detail::QrPanel / QrPanelTakes (cuda/qr_dispatch.h) for double: the QR panel class, kernels in
// cuda/qr_panel.cuh.
#include "cuda/qr_panel.cuh"

namespace batchla {
namespace detail {

template bool QrPanelTakes<double>(int m, int ncols, QrOutput out);
template cudaError_t QrPanel<double>(cudaStream_t stream, const QrArgs<double>& args, QrOutput out);

}  // namespace detail
}  // namespace batchla
