#!/usr/bin/env bash
# One device call: an A/B of interleaved-tuner binaries built here by bench/autotune/build_subset.sh
# and carried xz-packed (carry [".carry_tune"]). For ROUNDS rounds, for each read of READS, each
# binary of BINS in turn (alternating, so drift hits all alike) times every n of NS for DTYPES and
# OPS (--nmin n --nmax n); JSON lines to <bin>_<read>_r<round>.jsonl (returned as $OUT/runs.tar.gz),
# then bench/tune_ab_table.py's table against the first binary ($OUT/ab_table.md).
# Env: BINS (names in .carry_tune/, without .xz), NS ("24 28 32"), DTYPES (f32,f64), OPS (posv),
# READS (upper lower), ROUNDS (2), KINDS (group,block), TIMEOUT (seconds a run, 120).
set -uo pipefail
export OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
read -ra bins <<< "${BINS:?BINS: tuner binaries in .carry_tune}"
for b in "${bins[@]}"; do xz -dkf ".carry_tune/$b.xz" || exit 1; chmod +x ".carry_tune/$b"; done
for round in $(seq 1 "${ROUNDS:-2}"); do
  for read in ${READS:-upper lower}; do
    for b in "${bins[@]}"; do
      echo "=== round $round, $read, $b ($(date +%T))"
      for n in ${NS:-24 28 32}; do
        timeout "${TIMEOUT:-120}" ".carry_tune/$b" --dtypes "${DTYPES:-f32,f64}" --ops "${OPS:-posv}" --nmin "$n" \
          --nmax "$n" --bytes $((256 << 20)) --kinds "${KINDS:-group,block}" --posv-read "$read" \
          >> "$OUT/${b}_${read}_r$round.jsonl" 2>> "$OUT/stderr.txt" || echo "rc=$? at n=$n"
      done
    done
  done
done
grep -h FAIL "$OUT/stderr.txt" | head
python3 -m bench.tune_ab_table "$OUT" "${bins[0]}" | tee "$OUT/ab_table.md"
# the device tool returns at most 8 files: the runs go back as one archive
tar -czf "$OUT/runs.tar.gz" -C "$OUT" $(cd "$OUT" && ls ./*.jsonl) && rm -f "$OUT"/*.jsonl
