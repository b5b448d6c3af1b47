#!/usr/bin/env bash
# One device call: A/B timing of standalone check programs built in variants by
# tests/cuda/build_check_variants.sh (carry [".carry"]), alternating, ROUNDS rounds (2), then the full
# check of the default build of each. No sanitizer here (it must not share the GPU with timing).
# Env: AB="prog:variant1,variant2:timing args|..." e.g.
#   AB="check_lu_blocked:check_lu_blocked_old,check_lu_blocked:time 64 96 128|check_potrf:check_potrf,check_potrf_opaque:--timing-only 33 128"
#   CHECKS="check_lu_blocked quick|check_potrf --no-timing" (the default builds' full checks).
set -uo pipefail
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
step() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
unpack() { [ -x "/tmp/$1" ] || { xz -dc ".carry/$1.xz" > "/tmp/$1" && chmod +x "/tmp/$1"; }; }
IFS='|' read -r -a groups <<< "${AB:-}"
for g in "${groups[@]}"; do
  IFS=':' read -r prog variants args <<< "$g"
  IFS=',' read -r -a vs <<< "$variants"
  for v in "${vs[@]}"; do unpack "$v"; done
  for round in $(seq "${ROUNDS:-2}"); do
    for v in "${vs[@]}"; do
      step "$v $args (round $round)"
      # shellcheck disable=SC2086  # args is a list
      timeout 150 "/tmp/$v" $args >> "$OUT/timing_$v.txt" 2>&1; echo "rc=$?"
    done
  done
done
IFS='|' read -r -a checks <<< "${CHECKS:-}"
for c in "${checks[@]}"; do
  read -r prog rest <<< "$c"
  unpack "$prog"
  step "$c"
  # shellcheck disable=SC2086
  timeout 240 "/tmp/$prog" $rest > "$OUT/check_$prog.txt" 2>&1; echo "rc=$?"
  grep -E "FAIL|passed" "$OUT/check_$prog.txt" | head -20
done
step done
