#!/usr/bin/env bash
# One call on nvidia-h200-x2 (issue 7's scale-out): the sharding check on both GPUs under both
# partitioners, the 1-GPU vs 2-GPU throughput bench (cholesky, lu, qr, solve at n = 16, 128) and
# the threads test across both devices, and the command-buffer test. Expects the modules from bench/build_for_device.sh:
#   carry [".carry"], command: OUT=$OUT bench/x2_device_run.sh
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
bench/unpack_on_device.sh || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv
python3 -c "import jax, jax_batchla; print(jax.__version__, jax.devices(), jax_batchla.has_cuda())"
echo "=== multi-GPU bench ($(date +%T))"
python3 -m bench.multi_gpu --out "$OUT/nvidia-h200-x2-scaling.json" > "$OUT/multi_gpu.log" 2>&1
tail -25 "$OUT/multi_gpu.log"
for p in shardy gspmd; do
  echo "=== sharding check, $p ($(date +%T))"
  timeout 240 python3 tests/sharding_check.py $p --platform gpu > "$OUT/sharding_gpu_$p.log" 2>&1
  echo "rc=$?"; grep -E "FAIL|sharding ok|cases in" "$OUT/sharding_gpu_$p.log" | tail -8
done
echo "=== threads on both devices; command buffers ($(date +%T))"
timeout 240 python3 -m pytest -v -p no:cacheprovider -m gpu -rfE --tb=short \
  "tests/test_hardening.py::test_threads_and_devices_at_once" "tests/test_hardening.py::test_command_buffers" \
  > "$OUT/threads_cmdbuf.log" 2>&1
grep -E "PASSED|FAILED|passed|failed" "$OUT/threads_cmdbuf.log" | tail -6
