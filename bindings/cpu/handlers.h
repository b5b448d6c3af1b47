// XLA FFI handlers of the CPU module: one per target of bindings/TARGETS.md, and the table
// from which bindings/cpu_module.cc builds `registrations()`. Adding an op: its kernel header
// in this folder, its handler in handlers.cc, one declaration and one table line here.
#pragma once

#include "xla/ffi/api/ffi.h"

XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaPotrfCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaTrsmCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaPotrsCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaPosvCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaGetrfCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaGetrsCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaGesvCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaInverseCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaSlogdetCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaDetCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaGeqrfCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaOrgqrCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaOrmqrCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaQrCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaQrRCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaLstsqCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaIlPotrfCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaIlPotrsCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaIlPosvCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaIlTrsmCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(BatchlaFromInterleavedCpu);

namespace batchla_ffi::cpu {

struct Target {
  const char* name;  // the FFI target name, the same on every platform
  XLA_FFI_Handler* handler;
};

inline constexpr Target kTargets[] = {
    {"batchla_potrf", BatchlaPotrfCpu},
    {"batchla_trsm", BatchlaTrsmCpu},
    {"batchla_potrs", BatchlaPotrsCpu},
    {"batchla_posv", BatchlaPosvCpu},
    {"batchla_getrf", BatchlaGetrfCpu},
    {"batchla_getrs", BatchlaGetrsCpu},
    {"batchla_gesv", BatchlaGesvCpu},
    {"batchla_inverse", BatchlaInverseCpu},
    {"batchla_slogdet", BatchlaSlogdetCpu},
    {"batchla_det", BatchlaDetCpu},
    {"batchla_geqrf", BatchlaGeqrfCpu},
    {"batchla_orgqr", BatchlaOrgqrCpu},
    {"batchla_ormqr", BatchlaOrmqrCpu},
    {"batchla_qr", BatchlaQrCpu},
    {"batchla_qr_r", BatchlaQrRCpu},
    {"batchla_lstsq", BatchlaLstsqCpu},
    {"batchla_il_potrf", BatchlaIlPotrfCpu},
    {"batchla_il_potrs", BatchlaIlPotrsCpu},
    {"batchla_il_posv", BatchlaIlPosvCpu},
    {"batchla_il_trsm", BatchlaIlTrsmCpu},
    {"batchla_from_interleaved", BatchlaFromInterleavedCpu},
};

}  // namespace batchla_ffi::cpu
