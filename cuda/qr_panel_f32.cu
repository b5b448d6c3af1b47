// detail::QrPanel / QrPanelTakes (cuda/qr_dispatch.h) for float: the QR panel class, kernels in
// cuda/qr_panel.cuh.
#include "cuda/qr_panel.cuh"

namespace batchla {
namespace detail {

template bool QrPanelTakes<float>(int m, int ncols, QrOutput out);
template cudaError_t QrPanel<float>(cudaStream_t stream, const QrArgs<float>& args, QrOutput out);

}  // namespace detail
}  // namespace batchla
