#!/usr/bin/env bash
# Installs everything fixbits needs to build and test on Debian 12, from Debian's
# own registry only. Idempotent: packages already present are left alone.
set -euo pipefail
pkgs=(cmake ninja-build g++ pkg-config python3 llvm-22-dev llvm-22-tools libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev libzstd-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "fixbits setup: all packages present"
