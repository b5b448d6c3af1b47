#!/usr/bin/env bash
# One device call for a column-class candidate (bench/NOTES.md "Column class v2: what the
# waiters cost"): bench/qr_column_device_run.sh on CHECKS / VARIANTS, the ncu of the candidate
# (f64 n = 128, first launch), and only if the candidate's qr_r f64 n = 128 beats check_qr_old
# the library on CUDA_MODULE (pytest test_qr / test_lstsq, bench qr_r / qr at n = 64..128; LIB=0: never).
# e.g. CANDIDATE=check_qr_a8 VARIANTS="check_qr_old check_qr_m8n check_qr_a8" CUDA_MODULE=.carry/_cuda_s8.so.xz
set -uo pipefail
cand=${CANDIDATE:?} out=${OUT:-/tmp/out}
CHECKS=$cand SANITIZE=1 bash bench/qr_column_device_run.sh
head -c 4000 "$out/sanitizer_$cand.txt"
best() { grep "qr_r f64 n=128 " "$out/timing_$1.txt" | awk '{print $6}' | sort -n | head -1; }
c=$(best "$cand") o=$(best check_qr_old)
echo "qr_r f64 n=128: $cand $c ms, check_qr_old $o ms"
NCU_NAME_BASE=mangled PROFILES="$cand:$cand:9qr_column12FactorKernelId:--time qr_r 128" bash bench/ncu_device_run.sh
(cd "$out" && tar czf ab.tar.gz --remove-files ./*.txt ./*.csv)
if [ "${LIB:-1}" = 1 ] && [ -n "$c" ] && [ -n "$o" ] && awk "BEGIN { exit !($c < $o) }"; then
  TESTS="tests/test_qr.py tests/test_lstsq.py" N=8 NAME=qrcol TEST_TIMEOUT=200 BENCH_OPS=qr_r,qr \
    BENCH_N=64,72,96,128 BENCH_TIMEOUT=150 bash bench/lu_lib_device_run.sh
else
  echo "no library run (LIB=${LIB:-1}; the candidate beats the shipped classes only if $c < $o)"
fi
