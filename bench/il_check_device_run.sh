#!/usr/bin/env bash
# One device call: check_interleaved as built by tests/cuda/build_check_variants.sh (FAMILY=interleaved,
# moved to .carry_check/; carry [".carry_check"]), in full, then racecheck and memcheck of it in
# sanitize mode for SAN_DTYPE over SAN_NMIN..SAN_NMAX (one line of findings each, in $OUT).
set -uo pipefail
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('.carry_check/check_interleaved.xz'), open('/tmp/check_il', 'wb'))"
chmod +x /tmp/check_il
echo "=== check_interleaved ($(date +%T))"
timeout "${CHECK_TIMEOUT:-200}" /tmp/check_il > "$OUT/check_interleaved.log" 2>&1
echo "check rc=$?" | tee -a "$OUT/check_interleaved.log"; tail -2 "$OUT/check_interleaved.log"
echo "=== racecheck / memcheck, ${SAN_DTYPE:=float32} n = ${SAN_NMIN:=20}..${SAN_NMAX:=36} ($(date +%T))"
for tool in racecheck memcheck; do
  (BATCHLA_CHECK_SANITIZE=1 BATCHLA_CHECK_DTYPE=$SAN_DTYPE BATCHLA_CHECK_NMIN=$SAN_NMIN BATCHLA_CHECK_NMAX=$SAN_NMAX \
     timeout "${SAN_TIMEOUT:-300}" compute-sanitizer --tool $tool /tmp/check_il > "$OUT/san_$tool.log" 2>&1
   echo "$tool rc=$? findings=$(tests/cuda/run_sanitizer.sh --count "$OUT/san_$tool.log")" >> "$OUT/san_$tool.log") &
done
wait
for tool in racecheck memcheck; do tail -n 1 "$OUT/san_$tool.log"; done
