#!/usr/bin/env bash
# The README's first command: set up, build, run the main sample.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build --target fixbits-reduce
./build/samples/reduce/fixbits-reduce "$@"
