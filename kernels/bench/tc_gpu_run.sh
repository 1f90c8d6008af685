#!/usr/bin/env bash
# One run of everything the tensor-core kernel needs on an NVIDIA GPU: its test suite, the GPU
# benchmark (fp16 and bf16 next to the fp32 kernel and the cuBLAS three-step baseline, causal
# and not) and PyTorch's SDPA in fp16 / bf16 with each backend forced, on the same shapes.
#
#   kernels/bench/tc_gpu_run.sh BIN_DIR OUT_DIR
#
# BIN_DIR holds prebuilt tst_cuda_tensor_core and flashviz-gpu-bench (shared libraries other
# than CUDA's in BIN_DIR/lib); OUT_DIR receives the logs and CSV files.
set -u -o pipefail
bin=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
root=$(cd "$(dirname "$0")/../.." && pwd)
cap=${TC_RUN_TIMEOUT:-300}

. "$root/kernels/bench/device_env.sh"
use_carried_libraries "$bin"
export PYTHONUNBUFFERED=1

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm,temperature.gpu \
  --format=csv 2>&1 | tee "$out/nvidia-smi.txt"
status=0

timeout "$cap" "$bin/tst_cuda_tensor_core" >"$out/tst_cuda_tensor_core.log" 2>&1 || status=1
grep -E '^(Totals|FAIL!)' -A2 "$out/tst_cuda_tensor_core.log" | head -30

# fp32: only the fp32 FMA kernels d64_br64_bc128_m2_sw_u8x4 and d128_br128_bc64_m1_pad_u32x4
# (ids 2 and 7: rows of kernels/kernel_configs.h; the defaults when latest/tc-* was measured,
# then ids 0 and 2); every tensor-core variant.
for causal in "" "--causal"; do
  tag=${causal:+-causal}
  timeout "$cap" "$bin/flashviz-gpu-bench" --variants --only 2,7 --tc fp16,bf16 --repeats 10 \
    $causal --csv "$out/tc-flash$tag.csv" >"$out/tc-bench$tag.log" 2>&1 || status=1
  timeout "$cap" python3 "$root/kernels/bench/sdpa_bench.py" --dtypes fp16,bf16 --repeats 10 \
    $causal --csv "$out/tc-torch$tag.csv" --flash-csv "$out/tc-flash$tag.csv" \
    >"$out/tc-torch$tag.log" 2>&1 || status=1
  sed -n '/^FlashViz tensor-core/,$p' "$out/tc-torch$tag.log"
done
exit $status
