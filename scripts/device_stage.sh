#!/usr/bin/env bash
# Stages what a GPU run needs into .stage/ (git-ignored through .git/info/exclude):
# the GPU test binaries, the samples, the benchmarks, and the shared libraries they
# need (scripts/device_bundle.sh). Then: device run with carry [".device", ".stage"]
# and command `scripts/device_run.sh`. Build first (./scripts/test.sh or cmake --build build).
set -euo pipefail
cd "$(dirname "$0")/.."
exclude=$(git rev-parse --git-path info/exclude)  # a worktree's .git is a file
mkdir -p "$(dirname "$exclude")"
grep -qx '/.stage/' "$exclude" 2>/dev/null || echo '/.stage/' >> "$exclude"
rm -rf .stage && mkdir -p .stage/bin
# verify_bench is CPU-only: it is run here, not there.
for f in build/tests/*_gpu_test build/samples/*/fixbits-* build/bench/*_bench; do
  [ "$(basename "$f")" = verify_bench ] && continue
  [ -x "$f" ] && [ -f "$f" ] && cp "$f" .stage/bin/
done
scripts/device_bundle.sh --build-dir .stage .stage/bin/*
du -sh .stage
