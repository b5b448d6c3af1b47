// The QR engine class for double (one file per type: many kernel instantiations).
#define BATCHLA_QR_ENGINE_T double
#include "cuda/qr_engine_launch.cuh"
