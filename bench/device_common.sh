#!/usr/bin/env bash
# Sourced by the device-call scripts that run standalone check programs from .carry/
# (tests/cuda/build_check_variants.sh): OUT (created), step LABEL (a timestamped header), the GPU's
# name and clocks on stdout, and unpack_programs NAME... (${CARRY_DIR:-.carry}/NAME.xz -> /tmp/NAME, once).
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
unpack_programs() {
  for v in "$@"; do
    [ -x "/tmp/$v" ] || { xz -dc "${CARRY_DIR:-.carry}/$v.xz" > "/tmp/$v" && chmod +x "/tmp/$v"; }
  done
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
