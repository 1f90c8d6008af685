#!/usr/bin/env bash
# One device call's worth for the Hopper kernel: its checks, compute-sanitizer (memcheck,
# racecheck, synccheck) on small shapes, the SASS's wgmma count, the timing table beside the
# sm_80 kernel, and PyTorch's SDPA backends (flash, cuDNN) on the same shapes.
#
#   [PRODUCT_BIN=DIR] [HOPPER_SKIP_CHECK=1] [HOPPER_NO_TORCH=1] [HOPPER_N=LIST] \
#     [BENCH_ARGS=...] kernels/bench/hopper/run.sh BIN_DIR OUT_DIR      (BIN_DIR from build.sh)
#
# With PRODUCT_BIN (the release build's tst_cuda_tensor_core and flashviz-gpu-bench, the shared
# libraries other than CUDA's in DIR/lib) it also runs the product's tensor-core suite, once under
# compute-sanitizer on the Hopper kernel's variants, and the benchmark with every variant.
set -u -o pipefail
bin=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
root=$(cd "$(dirname "$0")/../../.." && pwd)
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,temperature.gpu --format=csv | tee "$out/nvidia-smi.txt"
status=0
if [ -z "${HOPPER_SKIP_CHECK:-}" ]; then
# Per Hopper kernel: its wgmma instructions and the waits around them in the machine code.
cuobjdump -sass "$bin/hopper_check" >"$out/sass.txt" 2>/dev/null
awk '/Function : .*hopperFlashKernel/ {name=$3} /Function : / && !/hopperFlashKernel/ {name=""}
     name && /HGMMA/ {h[name]++} name && /WARPGROUP.DEPBAR/ {w[name]++} name && /WARPGROUP.ARRIVE/ {a[name]++}
     END {for (n in h) printf "%6d HGMMA %4d DEPBAR %4d ARRIVE  %s\n", h[n], w[n], a[n], n}' "$out/sass.txt" | sort -k7 | head -40
timeout 240 "$bin/hopper_check" --n "${HOPPER_N:-1024,4096,8192,16384}" >"$out/check.log" 2>&1 || status=1
grep -E "^FAIL|passed|FAILED" "$out/check.log" | head -40
sed -n '/^TFLOP/,$p' "$out/check.log"
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/hopper_check" --sanitize \
    >"$out/sanitizer-$tool.log" 2>&1
  echo "compute-sanitizer $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log"))"
done
fi
if [ -n "${PRODUCT_BIN:-}" ]; then
  product=$(cd "$PRODUCT_BIN" && pwd)
  . "$(cd "$(dirname "$0")/.." && pwd)/device_env.sh"
  use_carried_libraries "$product"
  timeout 300 "$product/tst_cuda_tensor_core" >"$out/tst_cuda_tensor_core.log" 2>&1 || status=1
  grep -E "^(Totals|FAIL!)|QINFO.*defaultIs" -A1 "$out/tst_cuda_tensor_core.log" | head -24
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$product/tst_cuda_tensor_core" \
    everyVariant >"$out/tst-sanitizer-memcheck.log" 2>&1
  echo "tst_cuda_tensor_core everyVariant under memcheck: exit $? ($(grep -m1 'ERROR SUMMARY' "$out/tst-sanitizer-memcheck.log"))"
  for causal in "" "--causal"; do
    timeout 200 "$product/flashviz-gpu-bench" --no-fp32 ${BENCH_ARGS:---variants --n 8192} --tc fp16,bf16 --repeats 5 \
      $causal --csv "$out/gpu-bench${causal:+-causal}.csv" >"$out/gpu-bench${causal:+-causal}.log" 2>&1 || status=1
    grep -E "^d=" "$out/gpu-bench${causal:+-causal}.log" | cut -c1-120
  done
fi
if [ -z "${HOPPER_NO_TORCH:-}" ]; then
  for causal in "" "--causal"; do
    timeout 200 python3 "$root/kernels/bench/sdpa_bench.py" --dtypes fp16,bf16 --n 4096,8192,16384 \
      --repeats 10 $causal --csv "$out/torch${causal:+-causal}.csv" >"$out/torch${causal:+-causal}.log" 2>&1
    grep -E "flash|cudnn|cuDNN|torch " "$out/torch${causal:+-causal}.log" | head -40
  done
fi
exit $status
