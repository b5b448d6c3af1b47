// The QR engine class for float (one file per type: many kernel instantiations).
#define BATCHLA_QR_ENGINE_T float
#include "cuda/qr_engine_launch.cuh"
