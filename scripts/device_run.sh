#!/usr/bin/env bash
# Runs the GPU tests, samples and benchmarks on the lent GPU machine, from binaries
# built here (nothing is built there). See docs/device.md for the whole recipe:
#   here:  ../shared/device/prepare.sh; ./scripts/test.sh; scripts/device_stage.sh
#   there: device run with carry [".device", ".stage"] and the command
#          `scripts/device_run.sh [what...]`
# what: tests (every staged *_gpu_test), samples (fixbits-* but the cuBLAS scan and
# match), bench (every *_bench, JSON written to $OUT), cublas (fixbits-cublas-scan
# writes $OUT/cublas_sm90.tsv, then fixbits-cublas-match runs on it; extra arguments
# in FIXBITS_SCAN_ARGS and FIXBITS_MATCH_ARGS), or a list of those. Prints a short
# table last.
set -uo pipefail
source .device/env.sh
export LD_LIBRARY_PATH=$PWD/.stage/devlibs:$LD_LIBRARY_PATH
export FIXBITS_CACHE_DIR=${FIXBITS_CACHE_DIR:-/tmp/fixbits-cache}
out=${OUT:-/tmp/fixbits-out}
mkdir -p "$out"
# At most 8 files come back from a device run: every program's output is appended
# to one log; benchmarks write one JSON each; the hardware-truth test one table.
log_all="$out/run.log"
: >"$log_all"
export FIXBITS_TRUTH_OUT=${FIXBITS_TRUTH_OUT:-$out/hardware_truth.tsv}
what=${*:-tests samples bench}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader || true
declare -a summary
for w in $what; do
  case $w in
    tests)
      for t in .stage/bin/*_gpu_test; do
        [ -x "$t" ] || continue
        log="/tmp/$(basename "$t").log"
        start=$(date +%s%N)
        timeout ${FIXBITS_TEST_TIMEOUT:-180} "$t" --gtest_brief=1 >"$log" 2>&1; rc=$?
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        { echo "==== $t (rc=$rc, ${ms} ms)"; cat "$log"; } >>"$log_all"
        grep -E "FAILED|Failure|error|\[  PASSED|\[  SKIPPED" "$log" | head -20
        summary+=("$(printf '%-34s rc=%d %7dms %s' "$(basename "$t")" $rc "$ms" "$(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' "$log" | tr '\n' ' ')")")
      done ;;
    samples)
      for s in .stage/bin/fixbits-*; do
        [ -x "$s" ] || continue
        case $(basename "$s") in fixbits-cublas-scan|fixbits-cublas-match) continue ;; esac
        timeout 120 "$s" >"/tmp/$(basename "$s").log" 2>&1; rc=$?
        { echo "==== $s (rc=$rc)"; cat "/tmp/$(basename "$s").log"; } >>"$log_all"
        tail -8 "/tmp/$(basename "$s").log"
        summary+=("$(printf '%-34s rc=%d' "$(basename "$s")" $rc)")
      done ;;
    cublas)
      table="$out/cublas_sm90.tsv"
      for step in scan match; do
        if [ $step = scan ]; then
          cmd=(.stage/bin/fixbits-cublas-scan --out="$table" ${FIXBITS_SCAN_ARGS:-})
        else
          cmd=(.stage/bin/fixbits-cublas-match --table="$table" ${FIXBITS_MATCH_ARGS:-})
        fi
        [ -x "${cmd[0]}" ] || continue
        start=$(date +%s)
        timeout ${FIXBITS_CUBLAS_TIMEOUT:-300} "${cmd[@]}" >"/tmp/cublas-$step.log" 2>"/tmp/cublas-$step.err"; rc=$?
        { echo "==== ${cmd[*]} (rc=$rc, $(( $(date +%s) - start )) s)"; cat "/tmp/cublas-$step.log"; \
          echo "---- stderr (last 40 lines)"; tail -40 "/tmp/cublas-$step.err"; } >>"$log_all"
        tail -25 "/tmp/cublas-$step.log"
        summary+=("$(printf '%-34s rc=%d %ds' "cublas-$step" $rc $(( $(date +%s) - start )))")
      done ;;
    bench)
      for b in .stage/bin/*_bench; do
        [ -x "$b" ] || continue
        name=$(basename "$b")
        timeout ${FIXBITS_BENCH_TIMEOUT:-450} "$b" --benchmark_repetitions=${FIXBITS_BENCH_REPS:-5} --benchmark_report_aggregates_only=true \
             --benchmark_min_time=${FIXBITS_BENCH_MIN_TIME:-0.05} ${FIXBITS_BENCH_FILTER:+--benchmark_filter=$FIXBITS_BENCH_FILTER} \
             --benchmark_out="$out/$name.json" --benchmark_out_format=json >"/tmp/$name.log" 2>&1; rc=$?
        { echo "==== $b (rc=$rc)"; cat "/tmp/$name.log"; } >>"$log_all"
        grep -E "_median" "/tmp/$name.log" | head -60
        summary+=("$(printf '%-34s rc=%d' "$name" $rc)")
      done ;;
  esac
done
echo "==== summary"
printf '%s\n' "${summary[@]}"
