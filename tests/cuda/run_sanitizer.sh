#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck and initcheck over every standalone kernel check
# (tests/cuda/check_*.cu), each in sanitize mode (BATCHLA_CHECK_SANITIZE=1: no timing, small
# batches, a size list that still reaches every size class; tests/cuda/check_common.h). Issue 7
# wants zero findings: the script exits non-zero on any finding, failed check, crash or timeout.
#
# Usage: OUT=/some/dir tests/cuda/run_sanitizer.sh [check_name ...]   (default: every check)
#        tests/cuda/run_sanitizer.sh --count LOG   (findings in one sanitizer log; for testing)
# Writes $OUT/<check>.<tool>.log per run and prints a table (check x tool: findings, exit code,
# seconds). Builds with tests/cuda/run_checks.sh --build-only plus -lineinfo (reports then name
# source lines) into $BUILD_DIR (default /tmp/batchla_sanitize, kept apart from run_checks.sh's
# -lineinfo-free build).
# Environment: OUT (required), SAN_JOBS (runs at once, 6: they share the one GPU; 6 ran on the
# 16-core H200 machine; each run is then up to ~2.5x slower than alone), SAN_TIMEOUT (seconds per
# run, 400: the slowest, racecheck of check_getrs, took 217 s alone; it starts first), SAN_TOOLS (default
# "racecheck memcheck initcheck"; racecheck first as it is the slowest), COMPUTE_SANITIZER (path),
# SAN_NO_BUILD=1 (reuse the binaries already in $BUILD_DIR, e.g. to rerun one check).
set -euo pipefail

# Findings in one log: memcheck / initcheck "ERROR SUMMARY: N errors", racecheck "RACECHECK
# SUMMARY: N hazards displayed (E errors, W warnings)" (errors + warnings: both must be 0). Prints
# "?" when the log has no summary line (the sanitizer or the check died before the end).
count_findings() {
  awk '
    /ERROR SUMMARY: [0-9]+ error/ && !err {  # the first one: the total
      for (i = 1; i < NF; ++i) if ($i == "SUMMARY:") n += $(i + 1)
      seen = err = 1
    }
    /RACECHECK SUMMARY: [0-9]+ hazard/ {
      if (match($0, /\(([0-9]+) errors?, ([0-9]+) warnings?\)/)) {
        split(substr($0, RSTART + 1, RLENGTH - 2), p, /[^0-9]+/); n += p[1] + p[2]
      } else { for (i = 1; i < NF; ++i) if ($i == "SUMMARY:") n += $(i + 1) }
      seen = 1
    }
    END { if (seen) print n + 0; else print "?" }' "$1"
}

if [ "${1:-}" = --count ]; then
  count_findings "$2"
  exit 0
fi

: "${OUT:?set OUT to the directory for the logs}"
cd "$(dirname "$0")/../.."
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
san=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[ -x "$san" ] || { echo "run_sanitizer.sh: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2; exit 2; }
build=${BUILD_DIR:-/tmp/batchla_sanitize}
read -r -a tools <<< "${SAN_TOOLS:-racecheck memcheck initcheck}"
checks=("$@")
if [ ${#checks[@]} -eq 0 ]; then
  mapfile -t checks < <(ls tests/cuda/check_*.cu | xargs -n1 basename | sed 's/\.cu$//')
fi

t0=$SECONDS
if [ "${SAN_NO_BUILD:-0}" = 0 ]; then
  echo "== build (-lineinfo) into $build"
  BUILD_DIR=$build EXTRA_NVCC_FLAGS="-lineinfo ${EXTRA_NVCC_FLAGS:-}" \
    tests/cuda/run_checks.sh --build-only "${checks[@]}" > "$OUT/build.log" 2>&1 ||
    { tail -n 40 "$OUT/build.log"; echo "run_sanitizer.sh: build failed (log: $OUT/build.log)" >&2; exit 2; }
  echo "   done in $((SECONDS - t0)) s"
fi
for c in "${checks[@]}"; do
  [ -x "$build/$c" ] || { echo "run_sanitizer.sh: no binary $build/$c" >&2; exit 2; }
done

# One run: <tool> <check>. Leaves "<findings> <exit code> <seconds>" in $OUT/<check>.<tool>.result.
# Every log line starts with the seconds since the run began (line-buffered), to show the slow cases.
run_one() {
  local tool=$1 check=$2 opts=()
  case $tool in
    memcheck) opts=(--leak-check full) ;;
    racecheck) opts=(--racecheck-report all) ;;
    initcheck) opts=() ;;
  esac
  local log="$OUT/$check.$tool.log" start=$SECONDS line rc
  local buf=(); command -v stdbuf > /dev/null && buf=(stdbuf -oL -eL)
  BATCHLA_CHECK_SANITIZE=1 timeout --kill-after=15 "$SAN_TIMEOUT" "${buf[@]}" \
    "$SAN" --tool "$tool" "${opts[@]}" --error-exitcode 99 "$BUILD/$check" 2>&1 |
    while IFS= read -r line; do printf '%4d| %s\n' "$((SECONDS - start))" "$line"; done > "$log"
  rc=${PIPESTATUS[0]}
  echo "$(count_findings "$log") $rc $((SECONDS - start))" > "$OUT/$check.$tool.result"
  echo "   $check $tool: exit $rc, $((SECONDS - start)) s"
}
export -f run_one count_findings
export OUT SAN="$san" BUILD="$build" SAN_TIMEOUT="${SAN_TIMEOUT:-400}"

echo "== ${#checks[@]} checks x ${#tools[@]} tools, ${SAN_JOBS:-6} at a time, timeout ${SAN_TIMEOUT:-400} s each"
rm -f "$OUT"/*.result
for tool in "${tools[@]}"; do
  for c in "${checks[@]}"; do echo "$tool $c"; done
done | xargs -P "${SAN_JOBS:-6}" -L1 bash -c 'run_one "$0" "$1"'

# Summary: a run passes when its log has a summary with 0 findings and it exited 0.
status=0
printf '\n%-18s' check
for tool in "${tools[@]}"; do printf ' | %-28s' "$tool: findings/exit/s"; done
printf '\n'
for c in "${checks[@]}"; do
  printf '%-18s' "$c"
  for tool in "${tools[@]}"; do
    read -r n rc secs < "$OUT/$c.$tool.result"
    mark=""
    if [ "$n" != 0 ] || [ "$rc" != 0 ]; then mark=" FAIL"; status=1; fi
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then mark=" TIMEOUT"; fi
    printf ' | %-28s' "$n / $rc / ${secs}s$mark"
  done
  printf '\n'
done
echo "total $((SECONDS - t0)) s; logs in $OUT"
if [ $status = 0 ]; then echo "run_sanitizer.sh: PASS (zero findings)"; else echo "run_sanitizer.sh: FAIL"; fi
exit $status
