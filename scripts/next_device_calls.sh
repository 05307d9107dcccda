#!/usr/bin/env bash
# next_device_calls.sh: the device calls the open issues wait for, written down when a
# session had no device (2026-12-04, session 16), so the next one runs them as they are.
#   here:  cmake --build build && scripts/next_device_calls.sh stage
#          (every GPU test, sample and bench, stripped, with their libraries, packed in
#          .stage/all.tar.xz; the steps read the working tree's cuBLAS table, or a
#          .stage/table.tsv.gz put there by hand; ../shared/device/prepare.sh
#          fills .device/)
#   there: device run, carry [".device", ".stage"], command one of
#          `bash scripts/next_device_calls.sh cublas`  #7: the classes without a descriptor, then
#                                                       the match (~560 s; on an H200: the
#                                                       map is the H200's heuristic)
#          `bash scripts/next_device_calls.sh reduce`  #4: keep_in_shared's GPU tests, then
#                                                       the RMSNorm bench rows, one ncu (<= 530 s)
#          `bash scripts/next_device_calls.sh widen`   #7: the maps widened to M, N <= 65536,
#                                                       then the probes it asks for (<= 560 s)
#          `bash scripts/next_device_calls.sh rows`    #4: rows_per_block's GPU test (next row
#                                                       in registers or staged), then the
#                                                       softmax rows with and without it (<= 440 s)
#          `bash scripts/next_device_calls.sh match`   #7: the match alone on the staged
#                                                       table (~110 s)
#          `bash scripts/next_device_calls.sh bits`    #4: keep_in_shared's GPU test alone,
#                                                       test by test (<= 550 s)
#          `bash scripts/next_device_calls.sh whole`   #4: whole_strips' GPU test, the bench
#                                                       with and without it, one ncu (<= 450 s)
#          `bash scripts/next_device_calls.sh waves`   #4: the bench over cluster sizes 2..8,
#                                                       SASS (<= 130 s)
#          `bash scripts/next_device_calls.sh gputests` #4/#7: every *_gpu_test test, 12 at once, under
#                                                       FIXBITS_GPUTESTS_DEADLINE (540 s)
#          `bash scripts/next_device_calls.sh table`   #4: RMSNorm and softmax rows, pinned
#                                                       against free and the copy (<= 290 s)
#          `FIXBITS_TEST=<binary>:<gtest filter> bash scripts/next_device_calls.sh test`
#                                                       one staged GPU test binary, filtered
#                                                       (FIXBITS_TEST_TIMEOUT, default 200 s)
#          `bash scripts/next_device_calls.sh clusters` #4: the occupancy calculator's answers
#                                                       for the cluster kernels, then table
#                                                       rows with them (<= 560 s)
#          `bash scripts/next_device_calls.sh occupancy` #4: softmax 8192 x 4096's 8 x 8 kernel,
#                                                       uncapped and capped, under ncu; its
#                                                       SASS beside session 24's; a kernel's
#                                                       cold and disk-hit latency, with and
#                                                       without the cached image (<= 320 s)
# Session 42 left, in this order (one warm machine; issue each call as the last returns;
# sessions 22-42 got only H100s; a start that fails costs 90 to 181 s, a refusal while
# status's none_now holds 15 s, and a fresh start's boot 100 to 270 s of held time: check
# `status` before asking, space asks ~10 min apart, and put a call's steps in one script
# that branches on nvidia-smi's GPU name (session 42's .stage/callM.sh did); staging
# wipes .stage, so write call scripts after it):
#   1. On an H200 (#4 and #7 ask for it; last there in session 21): gputests, then
#      `FIXBITS_MATCH_BUDGET=140 bash scripts/next_device_calls.sh match`, then the table,
#      then the wide match: FIXBITS_MATCH_BUDGET=230 FIXBITS_MATCH_EXTRA="--max-dim=65536
#      --max-elems=33554432 --shapes=3000 --fp8-shapes=300 --seed=40" ... match.
#   2. #7, on any card, with binaries staged at 42b91b0 or later (session 42's .stage is
#      f41ceb7's: without the fix that keeps a refuted other-layout tree refuted), from
#      the table of session 42's run 4 (the 90 + 21 revalidations, kept as
#      docs/runs/2026-12-08-s42-run4-table.tsv.gz) put at .stage/table.tsv.gz: the 26
#      classes `--plan` lists on it with session 42's tile-cap fix
#      (docs/runs/2026-12-08-s42-plan-after-run4-cpu.txt: the unshown caps of 3, 5, 24,
#      25, 34, 105 get their separating probes) and class 114 with its strided shapes
#      given (the other layout's tree), then the match on the table it writes over seed
#      40's wide draws: .stage/callO.sh of session 42, i.e.
#      FIXBITS_SCAN_CLASSES=3,5,24,25,34,56,62,105,114,157,158,159,160,171,177,204,206,232,234,245,274,284,309,310,320,321,378
#      FIXBITS_SCAN_EXTRA="--probe-at=1x40796x478:bf16:bf16,1x51118x216:bf16:bf16,1x55041x95:bf16:bf16,1x55012x61:bf16:bf16"
#      FIXBITS_SCAN_PROBE_TIMEOUT=100 FIXBITS_SCAN_BUDGET=120 FIXBITS_SCAN_TIMEOUT=160
#      FIXBITS_CUBLAS_END=440 FIXBITS_MATCH_EXTRA=<item 1's> bash scripts/next_device_calls.sh cublas.
#      Commit the table it writes only if that match is identical on every shape (and
#      class 114's strided shapes have a descriptor); then stage again and run
#      `FIXBITS_TEST='profile_cublas_match_gpu_test:*LayoutBound*' ... test`.
#   3. #4: softmax is under 0.85 of the copy on its large rows (docs/performance.md,
#      sessions 35-36 and 40-42: neither rows_per_block nor the staged next row pays);
#      what is left to try needs a new kernel shape, not a knob.
#   Session 42 did: the staged next row's GPU test passed and its speed (no row faster);
#   Session39ClassShapes passed; seed 40's wide draws complete (identical on every shape
#   with a descriptor); the 90 + 21 revalidations (not committed: class 3's unshown cap).
#   Merging separate runs: `fixbits-cublas-scan --resume=<staged> --merge=<a>,<b> --out=T`
#   (docs/cublas.md; sessions 38 and 39 merged their runs that way, here, no GPU); a
#   .stage/table.tsv.gz (2.7 MB) still fits the 64 MiB carry.
# Every step writes its log to $OUT as soon as it ends, so a call cut short keeps what
# it did; each prints a short table last.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-}
L() { if command -v stdbuf >/dev/null; then stdbuf -oL -eL "$@"; else "$@"; fi; }
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
# fastest PATTERN N: the N fastest [tune] lines of $OUT/reduce_bench.log matching PATTERN,
# as "<median> | <knobs>" (the descriptor text dropped).
fastest() {
  grep -E "^\[tune\].*$1" "$OUT/reduce_bench.log" | sed 's/^\[tune\] reduce{[^}]*} //' \
    | awk -F': ' '{print $NF " | " $1}' | sort -g | head -$2 | cut -c1-160
}
# sass FILE.ptx...: each compiled for sm_90a by the device's ptxas, its SASS
# (cuobjdump) and ptxas's report in $OUT; one line a file: its instruction count and
# its 14 most common opcodes, then where its global loads sit (instruction numbers).
sass() {
  local CU f n
  CU=$(dirname "$(command -v ncu || echo /usr/local/cuda/bin/ncu)")
  for f in "$@"; do
    n=$(basename $f .ptx)
    "$CU/ptxas" -arch=sm_90a -v $f -o /tmp/$n.cubin > "$OUT/$n.ptxas.txt" 2>&1 &&
      "$CU/cuobjdump" -sass /tmp/$n.cubin > "$OUT/$n.sass" 2>&1
    echo "$n: $(grep -cE '^ +/\*[0-9a-f]{4,}\*/' "$OUT/$n.sass") SASS instructions," \
      "$(grep -o 'Used [0-9]* registers' "$OUT/$n.ptxas.txt" | head -1)"
    grep -oE '^ +/\*[0-9a-f]{4,}\*/ +(@!?U?P[0-9T] +)?[A-Z0-9_.]+' "$OUT/$n.sass" | awk '{print $NF}' \
      | sed 's/\..*//' | sort | uniq -c | sort -rn | head -14 | tr '\n' ' '; echo
    echo "  LDG at: $(grep -E '^ +/\*[0-9a-f]{4,}\*/' "$OUT/$n.sass" | grep -n 'LDG' | cut -d: -f1 | head -40 | tr '\n' ' ')"
  done
}
# ncu_once LIMIT REGEX FILTER LOG: one launch of the first kernel whose name matches
# REGEX, under Nsight Compute, while reduce_bench runs FILTER (the kernel cache off,
# free order not tuned, the caller's FIXBITS_BENCH_CONFIGS); its report in $OUT/LOG.
ncu_once() {
  local NCU
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  FIXBITS_CACHE=off FIXBITS_BENCH_VS_FREE=0 L timeout $1 $NCU --kernel-name regex:"$2" --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis $B/reduce_bench \
    --benchmark_filter="$3" --benchmark_repetitions=1 --benchmark_min_time=0.01 > "$OUT/$4" 2>&1
}
# table_in: the cuBLAS table the cublas and match steps start from, unpacked on stdout:
# .stage/table.tsv.gz when a session put one there, else the committed one.
table_in() {
  if [ -f .stage/table.tsv.gz ]; then zcat .stage/table.tsv.gz; else zcat profile/data/cublas_sm90.tsv.gz; fi
}
# gtests BIN LOG Name:limit...: each test of BIN whose name holds Name, under its own
# limit, appended to $OUT/LOG, then the verdict lines.
gtests() {
  local bin=$1 log=$2 t; shift 2
  for t in "$@"; do
    el "$(basename $bin) *${t%%:*}*"
    L timeout ${t##*:} $bin --gtest_filter="*${t%%:*}*" >> "$OUT/$log" 2>&1; echo "${t%%:*} rc=$?"
  done
  grep -c "^\[case\]" "$OUT/$log" | sed 's/^/cases started: /'
  grep -E "^\[ *(OK|FAILED|PASSED|SKIP)|Failure|element" "$OUT/$log" | head -20 | cut -c1-220
}

# latency: where a tuning's build time goes: a small and a large kernel cold (codegen,
# verifier, driver load) and as a disk hit (the driver's load alone), the driver's own
# PTX cache off (this CPU: the large one's codegen 0.3 s, checker 0.06 s, ptxas 0.37 s).
# Twice: disk hits loading the cache's compiled image (FIXBITS_CACHE_IMAGE=on, opt-in
# since session 31), then the text (the default).
# Session 29's cold rows took twice session 28's on another H100 host: the host's CPU
# and compile_bench's codegen alone (no GPU) are logged beside them to tell the host's
# speed from the driver's.
latency() {
  el "host CPU"
  { lscpu | grep -E 'Model name|CPU max MHz|^CPU\(s\)'; nproc; } > "$OUT/host_cpu.txt" 2>&1
  L timeout 60 $B/compile_bench --benchmark_filter='sum_pinned_nvptx/warps:8/ept:8|softmax_pinned_nvptx/warps:8/ept:8|ReducePhases' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > "$OUT/compile_bench.log" 2>&1
  echo "compile_bench rc=$?"
  el "kernel latency"
  FIXBITS_CACHE_IMAGE=on CUDA_CACHE_DISABLE=1 L timeout 60 $B/reduce_bench --benchmark_filter='KernelLatency' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > "$OUT/latency.log" 2>&1
  echo "latency (FIXBITS_CACHE_IMAGE=on) rc=$?"
  CUDA_CACHE_DISABLE=1 L timeout 60 $B/reduce_bench --benchmark_filter='KernelLatency' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > "$OUT/latency_text.log" 2>&1
  echo "latency (the text, the default) rc=$?"
  el done
  cat "$OUT/host_cpu.txt"
  grep -E "_median" "$OUT/compile_bench.log" | cut -c1-120
  echo "== FIXBITS_CACHE_IMAGE=on"
  grep -E "_median" "$OUT/latency.log" | cut -c1-120
  echo "== the text (default)"
  grep -E "_median" "$OUT/latency_text.log" | cut -c1-120
}

case $what in
  stage)
    # Every GPU test, sample and bench (scripts/device_stage.sh's set), stripped, with
    # their libraries, packed into .stage/all.tar.xz (about 7 MB: the unpacked 50 MB
    # would not fit the 64 MiB a call carries beside .device and the tree); each step
    # below unpacks it there first.
    set -e
    bash scripts/device_stage.sh >/dev/null
    strip .stage/bin/*
    # The committed table travels with the tree (profile/data); staging a copy too
    # pushed a call past its 64 MiB (session 28). table_in reads a .stage/table.tsv.gz
    # put there by hand (a later step resuming an earlier one's table) before it.
    rm -f .stage/table.tsv.gz
    # The PTX of the 256 x 131072 kernel (16 x 4, P 4, 8 strips in shared memory, mb 3),
    # with and without whole_strips, for the SASS histogram of `waves`.
    mkdir -p .stage/ptx
    for ws in 0 1; do
      build/tests/codegen/golden/fixbits_emit_kernel \
        'reduce{op=rms_norm axis=row in=bf16 acc=f32 out=bf16 order=pinned strip=4096}' --warps 16 --ept 4 \
        --blocks-per-row 4 --cluster-rows 1 --keep 8 --keep-in-shared 1 --min-blocks 3 --whole-strips $ws \
        > .stage/ptx/rmsnorm_p4_k8s_mb3_ws$ws.ptx
    done
    # The softmax 8192 x 4096 kernel of `occupancy` (8 x 8, keep 1, whole strips, rd),
    # uncapped and capped to 5 blocks an SM, beside the same kernel as session 24 built
    # it (commit 4b5de15, 60.4 us on the H100: docs/runs), for its SASS.
    for mb in 0 5; do
      build/tests/codegen/golden/fixbits_emit_kernel \
        'reduce{op=softmax axis=row in=bf16 acc=f32 out=bf16 order=pinned strip=4096}' --warps 8 --ept 8 \
        --keep 1 --whole-strips 1 --divide-by-reciprocal 1 --min-blocks $mb > .stage/ptx/softmax_8x8_k1_ws_rd_mb$mb.ptx
    done
    cp docs/runs/2026-12-06-s27-softmax-8x8-k1-ws-rd-at-4b5de15.ptx .stage/ptx/softmax_8x8_k1_ws_rd_4b5de15.ptx
    # xz -9e: one 64 MiB dictionary shares the static code the binaries have in common
    # (7 MB where -6 gave 14; a call carries at most 64 MiB with .device and the tree).
    tar -C .stage -cf - bin devlibs | xz -9e -T1 > .stage/all.tar.xz
    rm -rf .stage/bin .stage/devlibs
    du -sh .stage
    exit 0
    ;;
esac
# There: the staged binaries unpacked (once per machine), the device's libraries.
if [ -f .stage/all.tar.xz ] && [ ! -d .stage/bin ]; then
  tar -C .stage -xJf .stage/all.tar.xz
fi
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
source .device/env.sh
export LD_LIBRARY_PATH=$PWD/.stage/devlibs:${LD_LIBRARY_PATH:-}
B=.stage/bin
case $what in
  gputests)
    # #4 and #7: every staged *_gpu_test (all of `ctest -L gpu`), each gtest test in its
    # own process, FIXBITS_GPUTESTS_JOBS (default 12) at once: the tests are one thread
    # each and mostly compile with LLVM, so the device's 16 cores run them side by side
    # (bits do not depend on what else shares the GPU). Slow binaries' tests start first;
    # all run under FIXBITS_GPUTESTS_DEADLINE seconds; binaries named in
    # FIXBITS_GPUTESTS_SKIP (space-separated) are left out. One line a binary: tests
    # passed / failed / skipped / cut, the slowest test's seconds; every test's output in
    # $OUT/gputests.log.
    deadline=${FIXBITS_GPUTESTS_DEADLINE:-540}
    jobs=${FIXBITS_GPUTESTS_JOBS:-12}
    order="jit_reduce_keep_in_shared_gpu_test jit_reduce_gpu_test jit_gemm_gpu_test
      jit_reduce_whole_strips_gpu_test jit_hardware_truth_gpu_test jit_reduce_cluster_gpu_test
      jit_reduce_keep_first_pass_gpu_test jit_reduce_divide_by_reciprocal_gpu_test jit_dot_gpu_test runtime_cublaslt_gpu_test
      profile_cublas_match_gpu_test jit_autotune_gpu_test runtime_driver_gpu_test
      runtime_byte_scatter_gpu_test"
    order=$(echo $order)
    for t in $B/*_gpu_test; do  # a test binary the list above forgot still runs, last
      case " $order " in *" $(basename $t) "*) ;; *) order="$order $(basename $t)" ;; esac
    done
    G=/tmp/gputests; rm -rf $G; mkdir -p $G
    for n in $order; do
      case " ${FIXBITS_GPUTESTS_SKIP:-} " in *" $n "*) echo "$n skipped" >> $G/skipped; continue ;; esac
      # gtest's list: "Suite." lines, then indented test names (a "  # param" tail dropped)
      $B/$n --gtest_list_tests 2>/dev/null | awk -v n=$n '
        /^[^ ]/ { suite = $1; next }
        /^  [^ ]/ { print n " " suite $1 }' >> $G/jobs
    done
    echo "$(wc -l < $G/jobs) tests, $jobs at once"
    export B G T0 deadline
    run1() {  # BIN TEST: one test under what is left of the deadline
      local left=$(( deadline - ($(date +%s) - T0) )) s=$(date +%s) rc
      local log="$G/$1.${2//\//_}.log"  # a parameterized test's name has slashes
      if [ $left -lt 15 ]; then echo "$1 $2 cut 0" >> $G/results; return; fi
      timeout $left $B/$1 --gtest_filter="$2" > "$log" 2>&1; rc=$?
      local v=pass
      grep -q '^\[  SKIPPED \] [0-9]* test' "$log" && v=skip
      [ $rc -ne 0 ] && v=fail; [ $rc -eq 124 ] && v=cut
      echo "$1 $2 $v $(( $(date +%s) - s ))" >> $G/results
      [ $v = fail ] && grep -E "Failure|^\[  FAILED" "$log" | head -4 | cut -c1-200
      return 0
    }
    export -f run1
    L xargs -a $G/jobs -P $jobs -L 1 bash -c 'run1 "$@"' _
    el done
    for f in $(cut -d' ' -f1,2 $G/jobs | tr ' ' '%'); do
      n=${f%%%*}; t=${f#*%}
      { echo "==== $n $t: $(grep "^$n $t " $G/results | cut -d' ' -f3-)"; cat "$G/$n.${t//\//_}.log" 2>/dev/null; } >> "$OUT/gputests.log"
    done
    cat $G/skipped 2>/dev/null
    for n in $order; do
      grep -q "^$n " $G/results || continue
      awk -v n=$n '$1 == n { c[$3]++; if (w == "" || $4 > m) { m = $4; w = $2 } }
        END { printf "%s: pass %d fail %d skip %d cut %d; slowest %s %d s\n", n, c["pass"], c["fail"], c["skip"], c["cut"], w, m }' $G/results
    done
    awk '{ c[$3]++ } END { printf "all: pass %d fail %d skip %d cut %d\n", c["pass"], c["fail"], c["skip"], c["cut"] }' $G/results
    ;;
  cublas)
    table_in > /tmp/t0.tsv
    T=/tmp/t0.tsv
    # 0. FIXBITS_SCAN_FIND_POINTS=1: first ask the heuristic over the f16 and bf16 maps'
    #    grids again (--find-points, about a minute a family) for the shapes of variants
    #    no map run shows (classes 76, 149, 199, 290, 352 had none), kept as seen lines.
    if [ "${FIXBITS_SCAN_FIND_POINTS:-0}" = 1 ]; then
      el "find-points"
      L timeout ${FIXBITS_FIND_POINTS_TIMEOUT:-200} $B/fixbits-cublas-scan --resume=$T --find-points \
        --no-probe --dtypes=f16,bf16 --out=/tmp/tf.tsv > "$OUT/find_points.log" 2>&1
      echo "find-points rc=$?"
      grep -E "^find-points|^resume" "$OUT/find_points.log" | cut -c1-300
      [ -s /tmp/tf.tsv ] && T=/tmp/tf.tsv
    fi
    # 0b. FIXBITS_SCAN_JOIN=MxNxK:dtype,...: shapes whose cuBLASLt answer the table lacks
    #    (a match's "answers without a class"), probed and joined first in one process
    #    (--probe-at joins an unknown answer only without --jobs: slices that each add
    #    the variant would not merge), under FIXBITS_JOIN_TIMEOUT (150 s).
    if [ -n "${FIXBITS_SCAN_JOIN:-}" ]; then
      el "join --probe-at=$FIXBITS_SCAN_JOIN"
      L timeout ${FIXBITS_JOIN_TIMEOUT:-150} $B/fixbits-cublas-scan --resume=$T \
        --probe-at=$FIXBITS_SCAN_JOIN --dtypes=f16,bf16,f8e4m3 --max-probe-mnk=8589934592 \
        --probe-timeout-s=$(( ${FIXBITS_JOIN_TIMEOUT:-150} - 30 )) \
        --probe-budget-s=$(( ${FIXBITS_JOIN_TIMEOUT:-150} - 20 )) --out=/tmp/tj.tsv > "$OUT/join.log" 2>&1
      echo "join rc=$?"
      grep -a -E "^probe |join|descriptor:|^summary" "$OUT/join.log" | cut -c1-240 | tail -8
      [ -s /tmp/tj.tsv ] && T=/tmp/tj.tsv
    fi
    # 1. The classes left without a descriptor (the table's reason column): by default
    #    the 23 whose probes the budget of earlier scans never reached (or cut short, or
    #    a 90 s limit stopped: 205), fp8's four included; FIXBITS_SCAN_CLASSES and
    #    FIXBITS_SCAN_MAXK pick others (the 29 classes seen only at K > 65536 need a
    #    larger --max-probe-k; FIXBITS_SCAN_EXTRA adds arguments, e.g. --probe-at=...).
    #    8 slices take turns on the GPU; the budget counts from
    #    program start (resume load included), a probe stops at 150 s, then the merge.
    classes=${FIXBITS_SCAN_CLASSES:-20,26,30,54,76,101,104,133,146,149,157,158,159,160,199,205,244,287,288,316,352}
    el "scan --jobs=8 --retry-failed --classes=$classes"
    L timeout ${FIXBITS_SCAN_TIMEOUT:-330} $B/fixbits-cublas-scan --resume=$T --jobs=8 --retry-failed \
      --classes=$classes --dtypes=f16,bf16,f8e4m3 --small-probe-k=16 \
      --probe-batch=128 --max-probe-mnk=8589934592 --max-probe-k=${FIXBITS_SCAN_MAXK:-131072} \
      --probe-timeout-s=${FIXBITS_SCAN_PROBE_TIMEOUT:-150} --probe-budget-s=${FIXBITS_SCAN_BUDGET:-160} --out=/tmp/t1.tsv \
      ${FIXBITS_SCAN_EXTRA:-} > "$OUT/scan.log" 2>&1; echo "scan rc=$?"
    [ -s /tmp/t1.tsv ] && T=/tmp/t1.tsv
    gzip -9 -c $T > "$OUT/cublas_sm90.tsv.gz"
    # -a: a line with bytes that are not text is copied, not dropped (sessions 31-32's
    # search lines never reached this log; a malformed line should show, not vanish).
    grep -a -h -E "^probe |^  search |probe took|descriptor:" /tmp/t1.tsv.slice*.log > "$OUT/probe_at.log" 2>/dev/null
    tail -4 "$OUT/scan.log" | cut -c1-240
    # Each listed class's descriptor or note, and how many open probes (probes a stopped
    # visit finished; the next scan starts from them) the table keeps for it.
    awk -F'\t' -v c=",$classes," '$1=="class" && index(c, ","$2",") { k[++m] = $2; t[$2] = ($7 ~ /^gemm/ ? substr($7,1,110) : substr($8,1,110)) }
      $1=="probed" { n[$2]++ }
      END { for (i = 1; i <= m; i++) print "class " k[i] ": " t[k[i]] (n[k[i]] ? " [" n[k[i]] " open probe(s) kept]" : "") }' $T
    # 2. The match on that table (it also checks the tile cap on classes 5/24/25);
    #    FIXBITS_CUBLAS_MATCH=0 leaves it to a `match` call of its own.
    if [ "${FIXBITS_CUBLAS_MATCH:-1}" = 0 ]; then el done; exit 0; fi
    left=$(( ${FIXBITS_CUBLAS_END:-560} - ($(date +%s) - T0) )); mb=$(( left - 15 ))
    el "match on $T (timeout $left, budget $mb)"
    # FIXBITS_MATCH_EXTRA adds arguments, as the match step's (e.g. the wide draws).
    L timeout $left $B/fixbits-cublas-match --table=$T --jobs=14 --draws=2 --budget-s=$mb --show=60 \
      --differing-shapes-out="$OUT/differing.txt" --no-desc-shapes-out="$OUT/nodesc.txt" \
      ${FIXBITS_MATCH_EXTRA:-} > "$OUT/match.log" 2>&1; echo "match rc=$?"
    el done
    grep -A16 "^family" "$OUT/match.log" | cut -c1-200
    grep -A20 "^answers without" "$OUT/match.log" | grep -E '^  [0-9]' | cut -c1-150 || true
    ;;
  widen)
    # #7: the table's maps widened to M, N <= FIXBITS_WIDEN_MN (65536; --widen-mn, profile/
    #    WidenMap.h: only the new cells are asked, so the old keep the answers of the GPU
    #    that scanned them), one process, no probe; then the probes its last "widen plan"
    #    line asks for (the classes it made, the earlier classes' new variants) by 8
    #    slices, with what is left of FIXBITS_WIDEN_END (560 s). The widened table (and,
    #    if the probes ran, the probed one) comes back gzip'ed.
    table_in > /tmp/t0.tsv
    el "widen to M, N <= ${FIXBITS_WIDEN_MN:-65536}"
    L timeout ${FIXBITS_WIDEN_TIMEOUT:-330} $B/fixbits-cublas-scan --resume=/tmp/t0.tsv \
      --widen-mn=${FIXBITS_WIDEN_MN:-65536} --refine=${FIXBITS_WIDEN_REFINE:-3} --no-probe \
      --max-probe-mnk=8589934592 --dtypes=f16,bf16,f8e4m3 --out=/tmp/tw.tsv > "$OUT/widen.log" 2>&1
    echo "widen rc=$?"
    grep -E "^widen [a-z0-9]+:|^resume|^summary|error" "$OUT/widen.log" | cut -c1-400
    [ -s /tmp/tw.tsv ] || exit 1
    gzip -9 -c /tmp/tw.tsv > "$OUT/cublas_sm90_widened.tsv.gz"
    plan=$(grep "^widen plan:" "$OUT/widen.log" | tail -1)
    cls=$(echo "$plan" | grep -oE -- "--classes=[0-9,]+")
    pat=$(echo "$plan" | grep -oE -- "--probe-at=[0-9a-z:,x]+")
    echo "plan: ${cls:-no new class} ${pat:-no gained variant}" | cut -c1-600
    if [ -n "$cls$pat" ]; then
      left=$(( ${FIXBITS_WIDEN_END:-560} - ($(date +%s) - T0) ))
      el "probe (timeout $left)"
      L timeout $left $B/fixbits-cublas-scan --resume=/tmp/tw.tsv --jobs=8 $cls $pat \
        --dtypes=f16,bf16,f8e4m3 --small-probe-k=16 --probe-batch=128 --max-probe-mnk=8589934592 \
        --probe-timeout-s=${FIXBITS_WIDEN_PROBE_TIMEOUT:-120} --probe-budget-s=$(( left - 45 )) \
        --out=/tmp/tp.tsv > "$OUT/widen_probe.log" 2>&1; echo "probe rc=$?"
      grep -a -h -E "^probe |probe took" /tmp/tp.tsv.slice*.log > "$OUT/widen_probe_at.log" 2>/dev/null
      [ -s /tmp/tp.tsv ] && gzip -9 -c /tmp/tp.tsv > "$OUT/cublas_sm90.tsv.gz"
      grep -E "^probe-at|^summary" "$OUT/widen_probe.log" | cut -c1-300
      ids=",$(echo "$cls" | cut -d= -f2),"
      awk -F'\t' -v c="$ids" '$1=="class" && index(c, ","$2",") { print "class " $2 " " $3 " {" $4 "}: " ($7 ~ /^gemm/ ? substr($7,1,150) : substr($8,1,150)) }' \
        $( [ -s /tmp/tp.tsv ] && echo /tmp/tp.tsv || echo /tmp/tw.tsv )
    fi
    el done
    ;;
  reduce)
    # 1. The bits: kept passes and cluster strips in shared memory (cp.async, one commit
    #    group a kept pass since session 20), against the reference and the register-kept
    #    kernels, each of the test's three tests under its own limit.
    for t in TheBenchClusterCase:90 SoftmaxClusterCase:80 OneBlockPerRow:60; do
      el "jit_reduce_keep_in_shared_gpu_test *${t%%:*}*"
      L timeout ${t##*:} $B/jit_reduce_keep_in_shared_gpu_test --gtest_filter="*${t%%:*}*" \
        >> "$OUT/gputest.log" 2>&1; echo "gputest ${t%%:*} rc=$?"
    done
    grep -c "^\[case\]" "$OUT/gputest.log" | sed 's/^/cases started: /'
    grep -E "^\[ *(OK|FAILED|PASSED|SKIP)|Failure|element" "$OUT/gputest.log" | head -20 | cut -c1-220
    # 2. The speed: every candidate's median (FIXBITS_BENCH_TRACE) for the rows of the
    #    open target at 16 warps x 4 (session 18's fastest), then the same with
    #    .stage/old/reduce_bench_waitall where it was staged (the same tree, every staged
    #    use waiting for all the thread's copies: session 20's A/B of commit groups; the
    #    cache is off, so both compile every candidate).
    for bin in $B/reduce_bench .stage/old/reduce_bench_waitall; do
      [ -x $bin ] || continue
      tag=$(basename $bin)
      el "$tag"
      FIXBITS_CACHE=off FIXBITS_BENCH_VS_FREE=0 FIXBITS_BENCH_TRACE=1 FIXBITS_BENCH_CONFIGS=16x4 \
        L timeout 130 $bin --benchmark_filter='CopyBandwidth/1024|rmsnorm_pinned_bf16/(256|2048)/' \
        --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=0.05 \
        --benchmark_out="$OUT/$tag.json" --benchmark_out_format=json > "$OUT/$tag.log" 2>&1
      echo "$tag rc=$?"
      grep -E "_median|CopyBandwidth" "$OUT/$tag.log" | cut -c1-220
    done
    echo "fastest shared-memory candidates:"
    grep -E "^\[tune\].* sh=1 " "$OUT/reduce_bench.log" | awk -F': ' '{print $NF " | " $0}' | sort -g | head -8 | cut -c1-220
    # 3. Where session 18's fastest 256 x 131072 kernel (cluster 16 x 4, P 4, 8 strips in
    #    shared memory, 3 blocks an SM) spends its time: one launch under Nsight Compute.
    el "ncu"
    FIXBITS_BENCH_CONFIGS=16x4 ncu_once 80 'w16_e4_k8s_mb3_p4_cluster' 'rmsnorm_pinned_bf16/256/' ncu.log
    echo "ncu rc=$?"
    el done
    grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Waves Per SM|Warp Cycles Per Issued|Eligible Warps|Issued Warp|Stall|stall" "$OUT/ncu.log" | head -30 | cut -c1-200
    ;;
  whole)
    # #4, session 21: the cluster kernel for rows of whole strips (ReduceConfig.whole_strips,
    # no per-element masks) and the fold of whole groups of 16 strip results.
    # 1. The bits: whole_strips' cluster kernels against the reference, one test an op.
    gtests $B/jit_reduce_whole_strips_gpu_test whole_bits.log RmsNorm:110 Softmax:110
    # 2. The speed: every candidate's median at 16 warps x 4, the cluster ones with and
    #    without whole_strips (label ws=1) in the same run (cache off: each compiles).
    el "reduce_bench"
    FIXBITS_CACHE=off FIXBITS_BENCH_VS_FREE=0 FIXBITS_BENCH_TRACE=1 FIXBITS_BENCH_CONFIGS=16x4 \
      L timeout 150 $B/reduce_bench --benchmark_filter='CopyBandwidth/1024|rmsnorm_pinned_bf16/(256|2048)/' \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=0.05 \
      --benchmark_out="$OUT/reduce_bench.json" --benchmark_out_format=json > "$OUT/reduce_bench.log" 2>&1
    echo "reduce_bench rc=$?"
    # 3. The bench's kernel with whole strips under Nsight Compute (one launch).
    el "ncu"
    FIXBITS_BENCH_CONFIGS=16x4 ncu_once 70 'w16_e4_k8s_mb3_p4_cluster_ws' 'rmsnorm_pinned_bf16/256/' ncu.log
    echo "ncu rc=$?"
    el done
    grep -E "Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issued Warp|Spilling Requests  " "$OUT/ncu.log" | head -12 | cut -c1-160
    echo "fastest candidates, 256 x 131072 (ws=1: whole strips):"
    fastest " 256x131072 .*cl=1" 12
    grep -E "_median|CopyBandwidth" "$OUT/reduce_bench.log" | cut -c1-230
    ;;
  waves)
    # #4, session 21: after VectorCombine left the pipeline (c3e36a8), whole_strips' bits
    # again, then the 256 x 131072 RMSNorm over cluster sizes P = 2..8 (rows * P blocks
    # fill the block slots in other numbers of waves), then what ptxas makes of the
    # bench kernel (SASS opcode counts, with and without whole_strips).
    # (whole_strips' GPU tests run in `gputests`.)
    el "reduce_bench, P = 2..8"
    FIXBITS_CACHE=off FIXBITS_BENCH_VS_FREE=0 FIXBITS_BENCH_TRACE=1 FIXBITS_BENCH_CONFIGS=16x4 \
      FIXBITS_BENCH_CLUSTER_PARTS=2,3,4,5,6,7,8 FIXBITS_BENCH_WHOLE_STRIPS=1 \
      L timeout 100 $B/reduce_bench --benchmark_filter='CopyBandwidth/1024|rmsnorm_pinned_bf16/256/' \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=0.05 \
      --benchmark_out="$OUT/reduce_bench.json" --benchmark_out_format=json > "$OUT/reduce_bench.log" 2>&1
    echo "reduce_bench rc=$?"
    el "sass"
    sass .stage/ptx/rmsnorm_*.ptx
    el done
    echo "fastest cluster candidates, 256 x 131072:"
    fastest " 256x131072 .*cl=1" 14
    grep -E "_median|CopyBandwidth" "$OUT/reduce_bench.log" | cut -c1-230
    ;;
  table)
    # #4: the RMSNorm and softmax rows of the bench's five sizes, pinned against free
    # order (vs_free) and the copy (vs_copy), over four warps x elements configurations
    # (the fastest of every earlier table among them), whole strips and clusters in.
    # FIXBITS_TABLE_ROWS picks the rows (a regex over the benchmark names after
    # "BM_Reduce/"; the two ops take more than one call's 280 s: session 23 ran
    # 'rmsnorm_pinned_bf16/' and 'softmax_pinned_bf16/' in two calls).
    rows=${FIXBITS_TABLE_ROWS:-(rmsnorm|softmax)_pinned_bf16/}
    el "reduce_bench $rows pinned vs free"
    FIXBITS_BENCH_TRACE=1 FIXBITS_BENCH_CONFIGS=${FIXBITS_BENCH_CONFIGS:-2x8,4x8,8x8,16x4} \
      FIXBITS_CACHE_DIR=/tmp/fixbits-cache \
      L timeout ${FIXBITS_TABLE_TIMEOUT:-280} $B/reduce_bench \
      --benchmark_filter="CopyBandwidth/1024|$rows" \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=0.05 \
      --benchmark_out="$OUT/table_bench.json" --benchmark_out_format=json > "$OUT/table_bench.log" 2>&1
    echo "reduce_bench rc=$?"
    el done
    grep -E "_median|CopyBandwidth" "$OUT/table_bench.log" | cut -c1-250
    ;;
  occupancy)
    # #4, session 27: softmax 8192 x 4096's 8 x 8, keep 1, whole strips, rd kernel ran
    # 60.4 us in session 24 and 78.8 us after session 25's exp (48 -> 50 registers here);
    # the same kernel capped to 48 registers (mb 5) ran 79.3 us. One launch of each under
    # Nsight Compute: registers, theoretical and achieved occupancy, issue and stalls;
    # then the SASS of both and of session 24's kernel (staged PTX), where the loads sit.
    for k in k1_ws_rd k1_mb5_ws_rd; do
      el "ncu $k"
      # REG_CAP: the bench builds the capped (mb) candidates only under it (session 28's
      # run found no k1_mb5 kernel to profile without it).
      FIXBITS_BENCH_REG_CAP=48 FIXBITS_BENCH_CONFIGS=8x8 ncu_once 90 "^fixbits_softmax_bf16_bf16_pinned_s4096_w8_e8_${k}\$" \
        'softmax_pinned_bf16/8192/' ncu_$k.log
      echo "ncu $k rc=$?"
    done
    el "sass"
    sass .stage/ptx/softmax_8x8_*.ptx
    latency
    for k in k1_ws_rd k1_mb5_ws_rd; do
      echo "== $k"
      grep -E "Duration|DRAM Throughput|Registers Per|Theoretical Occupancy|Achieved Occupancy|Block Limit Reg|Warp Cycles Per Issued|Issued Warp|Eligible Warps" "$OUT/ncu_$k.log" | head -12 | cut -c1-160
    done
    ;;
  latency)
    latency
    ;;
  phases)
    # #4, session 35: softmax 256 x 131072 runs at half the copy (99.6 us), RMSNorm's
    # same-shaped kernel at 0.87. The model to test: a block's phases serialize (load,
    # max, barrier, exp and sum, barrier, outputs) and its 2 blocks an SM start together,
    # so the SM's issue slots and the DRAM take turns: per wave of 240 blocks (the 30
    # clusters of 8 the driver holds at once, session 34's `c8x30`) about 3 us of loads,
    # 4.4 us of exp arithmetic, 3 us of stores, 8.53 waves. If so, ncu shows
    # softmax's DRAM throughput near half and its issue slots busy well under half, where
    # RMSNorm's DRAM is near the copy. One launch of each winner under Nsight Compute
    # (the bench tunes every 16 x 4 candidate first, slowly under ncu: session 35's 120 s
    # saw 160 softmax kernels, not yet the winner; 260 s each, <= 540 s in all).
    for k in softmax:w16_e4_k4s_p8_cluster_ws_rd_se rmsnorm:w16_e4_k6s_mb4_p6_cluster_ws; do
      op=${k%%:*}; name=${k#*:}
      el "ncu $op $name"
      FIXBITS_BENCH_CONFIGS=16x4 ncu_once ${FIXBITS_PHASES_TIMEOUT:-260} "^fixbits_${op}_bf16_bf16_pinned_s4096_${name}\$" \
        "${op}_pinned_bf16/256/" ncu_$op.log
      echo "ncu $op rc=$?"
    done
    for op in softmax rmsnorm; do
      echo "== $op"
      grep -E "Duration|DRAM Throughput|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Issued Warp|No Eligible|Achieved Occupancy|Registers Per|Block Limit Shared" \
        "$OUT/ncu_$op.log" | head -14 | cut -c1-160
    done
    ;;
  clusters)
    # #4, session 33: what the driver's occupancy calculator says of the cluster kernels
    # (session 31 found RMSNorm 256 x 131072's cluster kernels 1.5-2.3x slower than
    # session 24 with the same PTX). The cluster GPU test's occupancy lines, then the
    # table rows (default: that row and softmax 2048 and 256, 16 x 4 and 8 x 8), each
    # [tune] line ending in its occupancy (b blocks an SM, r registers, l local bytes, c
    # cluster x clusters held); last, that row's six fastest and session 24's winner.
    FIXBITS_TEST='jit_reduce_cluster_gpu_test:*Occupancy*' FIXBITS_TEST_TIMEOUT=60 bash "$0" test
    grep -a "occupancy\]" "$OUT/test.log"
    FIXBITS_BENCH_VS_FREE=0 FIXBITS_BENCH_CONFIGS=${FIXBITS_BENCH_CONFIGS:-16x4,8x8} \
      FIXBITS_TABLE_ROWS=${FIXBITS_TABLE_ROWS:-'rmsnorm_pinned_bf16/256/|softmax_pinned_bf16/(2048|256)/'} \
      FIXBITS_TABLE_TIMEOUT=${FIXBITS_TABLE_TIMEOUT:-470} bash "$0" table
    echo "== RMSNorm 256 x 131072: the six fastest"
    grep -a "^\[tune\].*op=rms_norm.* 256x131072 " "$OUT/table_bench.log" | awk -F': ' '{print $NF" | "$0}' |
      sort -n | head -6 | cut -c1-300
    echo "== session 24's winner (16 x 4, cluster P 6, keep 6 in shared, mb 4, ws)"
    grep -a "^\[tune\].*op=rms_norm.* 256x131072 warps=16 elems=4 bpr=6 keep=6 sh=1 mb=4 cl=1" \
      "$OUT/table_bench.log" | cut -c100-340
    ;;
  test)
    # One staged GPU test binary under a gtest filter: FIXBITS_TEST=<binary>:<filter>,
    # under FIXBITS_TEST_TIMEOUT seconds (default 200); every line in $OUT/test.log, the
    # verdicts printed.
    bin=${FIXBITS_TEST%%:*}
    filter=${FIXBITS_TEST#*:}
    el "$bin --gtest_filter=$filter"
    L timeout ${FIXBITS_TEST_TIMEOUT:-200} $B/$bin --gtest_filter="$filter" >> "$OUT/test.log" 2>&1
    echo "$bin rc=$?"
    el done
    grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure" "$OUT/test.log" | cut -c1-200 | tail -20
    ;;
  rows)
    # #4, sessions 40-41: rows_per_block's GPU test (each R's bits against R = 1 and the CPU
    # reference; the next row in registers, and staged in shared memory), then the softmax
    # rows it can change tuned over 8 x 8 and 16 x 4 with its candidates on
    # (FIXBITS_BENCH_ROWS_PER_BLOCK=2,4), and per row the fastest candidate with one row a
    # block, and with several rows a block kept in registers (sh=0) or staged (sh=1)
    # (<= 440 s).
    el "jit_reduce_rows_per_block_gpu_test"
    L timeout ${FIXBITS_ROWS_TEST_TIMEOUT:-150} $B/jit_reduce_rows_per_block_gpu_test > "$OUT/rows_test.log" 2>&1
    echo "jit_reduce_rows_per_block_gpu_test rc=$?"
    el "reduce_bench softmax rows with rows_per_block"
    FIXBITS_BENCH_TRACE=1 FIXBITS_BENCH_VS_FREE=0 FIXBITS_BENCH_ROWS_PER_BLOCK=2,4 \
      FIXBITS_BENCH_CONFIGS=${FIXBITS_BENCH_CONFIGS:-8x8,16x4} FIXBITS_CACHE_DIR=/tmp/fixbits-cache \
      L timeout ${FIXBITS_TABLE_TIMEOUT:-270} $B/reduce_bench \
      --benchmark_filter="CopyBandwidth/1024|${FIXBITS_TABLE_ROWS:-softmax_pinned_bf16/(8192|2048|32768|16384)/}" \
      --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_min_time=0.05 \
      --benchmark_out="$OUT/rows_bench.json" --benchmark_out_format=json > "$OUT/rows_bench.log" 2>&1
    echo "reduce_bench rc=$?"
    el done
    grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure" "$OUT/rows_test.log" | cut -c1-200 | tail -8
    grep -E "_median|CopyBandwidth" "$OUT/rows_bench.log" | cut -c1-250
    # The fastest tuned candidate a row, with (rb>1) and without (rb=1) several rows a block.
    grep -h "^\[tune\]" "$OUT/rows_bench.log" | grep " us" | awk '{
        shape = $0; sub(/^.* strip=[0-9]+} /, "", shape); split(shape, a, " ");
        rb = $0; sub(/^.* rb=/, "", rb); sub(/:.*/, "", rb);
        sh = $0; sub(/^.* sh=/, "", sh); sub(/ .*/, "", sh);
        us = $0; sub(/^.*: /, "", us); sub(/ us.*/, "", us); k = a[1] " rb" (rb > 1 ? ">1 sh=" sh : "=1");
        if (!(k in best) || us + 0 < best[k] + 0) { best[k] = us; line[k] = $0 } }
      END { for (k in best) print k, best[k], substr(line[k], index(line[k], "warps="), 120) }' | sort
    ;;
  match)
    # #7: the match alone on the staged table (session 18: the committed table after
    # withdrawing the four descriptors of classes 69, 143, 71 and 145: docs/cublas.md).
    table_in > /tmp/t0.tsv
    el "match on the staged table"
    # FIXBITS_MATCH_BUDGET (s, default 230) fits it into what a session has left;
    # FIXBITS_MATCH_EXTRA adds arguments (session 37: --max-dim=65536 --max-elems=... for
    # shapes in the widened cells).
    MB=${FIXBITS_MATCH_BUDGET:-230}
    L timeout $((MB + 20)) .stage/bin/fixbits-cublas-match --table=/tmp/t0.tsv --jobs=14 --draws=2 --budget-s=$MB --show=60 \
      --differing-shapes-out="$OUT/differing.txt" --no-desc-shapes-out="$OUT/nodesc.txt" \
      ${FIXBITS_MATCH_EXTRA:-} > "$OUT/match.log" 2>&1; echo "match rc=$?"
    el done
    grep -A16 "^family" "$OUT/match.log" | cut -c1-200
    grep -A12 "^answers whose" "$OUT/match.log" | cut -c1-150
    grep -A30 "^answers without" "$OUT/match.log" | grep -E '^  [0-9]' | cut -c1-150
    tail -1 "$OUT/match.log" | cut -c1-200
    ;;
  bits)
    # #4: keep_in_shared's bits alone, each case's line and time in the log (session 18:
    # the test passed its 200 s limit in `reduce` without a verdict).
    # Each of the test's three tests in its own run and limit, so each gets a verdict
    # (the kept kernels build in about 2 s since session 19's codegen gate, 17-44 s before).
    for t in TheBenchClusterCase:190 SoftmaxClusterCase:190 OneBlockPerRow:170; do
      el "jit_reduce_keep_in_shared_gpu_test *${t%%:*}*"
      L timeout ${t##*:} .stage/bin/jit_reduce_keep_in_shared_gpu_test --gtest_filter="*${t%%:*}*" \
        >> "$OUT/bits.log" 2>&1; echo "bits ${t%%:*} rc=$?"
    done
    el done
    grep -c "^\[case\]" "$OUT/bits.log" | sed 's/^/cases started: /'
    grep -E "^\[reference\]" "$OUT/bits.log" | cut -c1-160
    grep -E "^\[case\]" "$OUT/bits.log" | tail -5 | cut -c1-220
    grep -E "^\[ *(OK|FAILED|PASSED|SKIP)|Failure|element" "$OUT/bits.log" | head -20 | cut -c1-220
    ;;
  *)
    echo "usage: $0 stage|gputests|table|cublas|reduce|match|bits|whole|waves" >&2
    exit 2
    ;;
esac
