#!/usr/bin/env bash
# sass_count.sh: how many sm_90a machine instructions each kernel of some PTX files
# compiles to, on a machine without a GPU, cuobjdump or nvdisasm (this one has ptxas).
# An sm_90 instruction is 16 bytes, so a kernel's count is its cubin's .text.<kernel>
# section size / 16 (the static count: every path, the padding at the end included; not
# how many run). One line a kernel: file, kernel, instructions, ptxas's registers and
# spill stores.
#   usage: scripts/sass_count.sh a.ptx [b.ptx ...]
#   e.g.:  build/tests/codegen/golden/fixbits_emit_kernel \
#            'reduce{op=softmax axis=row in=bf16 acc=f32 out=bf16 order=pinned strip=4096}' \
#            --warps 16 --ept 4 --keep 1 --whole-strips 1 > /tmp/s.ptx && scripts/sass_count.sh /tmp/s.ptx
set -euo pipefail
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ ! -x "$PTXAS" ]; then
  echo "sass_count.sh: no ptxas (set PTXAS=/path/to/ptxas)" >&2
  exit 2
fi
[ $# -gt 0 ] || { echo "usage: $0 a.ptx [b.ptx ...]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$@"; do
  "$PTXAS" -arch=sm_90a -O3 -v "$f" -o "$tmp/k.cubin" > "$tmp/v.txt" 2>&1 \
    || { echo "$f: ptxas failed:" >&2; cat "$tmp/v.txt" >&2; exit 1; }
  regs=$(grep -o 'Used [0-9]* registers' "$tmp/v.txt" | head -1 | grep -o '[0-9]*')
  spill=$(grep -o '[0-9]* bytes spill stores' "$tmp/v.txt" | head -1 | grep -o '^[0-9]*')
  # readelf's section lines: "[Nr] Name Type Address Off Size ..." (Nr padded: "[ 9]")
  readelf -S -W "$tmp/k.cubin" 2>/dev/null | sed 's/^ *\[ *[0-9]*\] *//' \
    | awk '$1 ~ /^\.text\./ { print substr($1, 7), $5 }' | while read -r name size; do
      printf '%s\t%s\t%d instructions\t%s registers\t%s bytes spill stores\n' \
        "$f" "$name" $(( 16#$size / 16 )) "$regs" "${spill:-0}"
    done
done
