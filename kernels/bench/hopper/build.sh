#!/usr/bin/env bash
# Builds hopper_check (kernels/bench/hopper/hopper_check.cu) with nvcc alone, for sm_90a, into
# OUT_DIR, with the ptxas report beside it. Runs here (no GPU needed); the binary runs on a Hopper
# GPU with only the driver (the CUDA runtime is linked statically).
#
#   kernels/bench/hopper/build.sh OUT_DIR
set -euo pipefail
out=$1
root=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$nvcc" -std=c++17 -O3 -lineinfo -I"$root" -gencode arch=compute_90a,code=sm_90a -Xptxas=-v \
    "$root/kernels/bench/hopper/hopper_check.cu" "$root/kernels/cuda/sm90/hopper_launch.cu" \
    "$root/kernels/cuda/sm90/tensor_maps.cu" \
    "$root/kernels/cuda/runtime/check.cpp" "$root/core/errors.cpp" \
    -o "$out/hopper_check" 2>"$out/ptxas.txt" || { cat "$out/ptxas.txt" >&2; exit 1; }
grep -E "C75|[1-9][0-9]* bytes spill stores|warning" "$out/ptxas.txt" || true
