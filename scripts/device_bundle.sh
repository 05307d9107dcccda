#!/usr/bin/env bash
# device_bundle.sh: makes binaries built here runnable on the GPU machine (Ubuntu
# 24.04, no abseil/gtest/benchmark installed) by copying the shared libraries they
# need into <build>/devlibs. There, run them with LD_LIBRARY_PATH=<build>/devlibs
# (after `source .device/env.sh`, which provides libLLVM).
#
# Copies every library `ldd` resolves for the given binaries, except:
#   - glibc, libstdc++ and libgcc_s (the GPU machine has newer ones),
#   - libLLVM and every library libLLVM itself needs (they travel via .device/ or are
#     already on the GPU machine, where the .device recipe is known to work).
# Fails, naming the library, when ldd cannot resolve one here.
#
# Usage: scripts/device_bundle.sh [--build-dir DIR] BINARY...   (DIR defaults to build)
# Example: scripts/device_bundle.sh build/tests/runtime_driver_gpu_test
set -euo pipefail

build=build
if [ "${1:-}" = "--build-dir" ]; then
  build=${2:?"--build-dir needs a directory"}
  shift 2
fi
if [ $# -eq 0 ]; then
  echo "usage: $0 [--build-dir DIR] BINARY..." >&2
  exit 2
fi
out="$build/devlibs"
mkdir -p "$out"

# Sonames never copied: the C/C++ runtime of the GPU machine.
is_system() {
  case "$1" in
    linux-vdso.so.*|ld-linux*.so.*|libc.so.*|libm.so.*|libmvec.so.*|libpthread.so.*|\
    libdl.so.*|librt.so.*|libresolv.so.*|libutil.so.*|libstdc++.so.*|libgcc_s.so.*|\
    libLLVM*.so*)
      return 0 ;;
  esac
  return 1
}

# "soname path" for each library ldd resolves for $1; fails on "not found".
resolved() {
  local listing
  listing=$(ldd "$1") || { echo "device_bundle: ldd failed on $1" >&2; return 1; }
  if grep -q "not found" <<<"$listing"; then
    echo "device_bundle: $1 needs libraries ldd cannot find here:" >&2
    grep "not found" <<<"$listing" >&2
    return 1
  fi
  awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$listing"
}

declare -A skip=()
declare -A copied=()
for bin in "$@"; do
  [ -f "$bin" ] || { echo "device_bundle: no such binary: $bin" >&2; exit 1; }
  # libLLVM's own closure stays behind with it.
  while read -r name path; do
    case "$name" in
      libLLVM*)
        while read -r dep _; do skip[$dep]=1; done < <(resolved "$path")
        ;;
    esac
  done < <(resolved "$bin")
  while read -r name path; do
    if is_system "$name" || [ -n "${skip[$name]:-}" ] || [ -n "${copied[$name]:-}" ]; then
      continue
    fi
    cp -fL "$path" "$out/$name"
    copied[$name]=1
  done < <(resolved "$bin")
done

# Check: with only devlibs added, every binary resolves the copied libraries from it.
for bin in "$@"; do
  for name in "${!copied[@]}"; do
    if ldd "$bin" | grep -q "^[[:space:]]*$name "; then
      where=$(LD_LIBRARY_PATH="$out" ldd "$bin" | awk -v n="$name" '$1 == n { print $3 }')
      case "$where" in
        "$out"/*|"$(cd "$out" && pwd)"/*) ;;
        *) echo "device_bundle: $bin resolves $name to $where, not $out" >&2; exit 1 ;;
      esac
    fi
  done
done
echo "device_bundle: ${#copied[@]} libraries in $out ($(du -sh "$out" | cut -f1)); run with LD_LIBRARY_PATH=$out"
