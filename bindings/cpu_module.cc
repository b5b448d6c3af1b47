// The CPU native module `jax_batchla._cpu`: hands the FFI handler capsules to Python.
// registrations() -> {target name: PyCapsule}; jax_batchla/_ffi.py registers each one with
// jax.ffi.register_ffi_target(name, capsule, platform="cpu").
#include <nanobind/nanobind.h>

#include "bindings/cpu/handlers.h"

namespace nb = nanobind;

NB_MODULE(_cpu, m) {
  m.doc() = "jax_batchla CPU XLA FFI handlers (see bindings/TARGETS.md)";
  m.def(
      "registrations",
      []() {
        nb::dict d;
        for (const auto& t : batchla_ffi::cpu::kTargets) {
          d[t.name] = nb::capsule(reinterpret_cast<void*>(t.handler));
        }
        return d;
      },
      "Dict {FFI target name: PyCapsule of its XLA FFI handler} for platform 'cpu'.");
}
