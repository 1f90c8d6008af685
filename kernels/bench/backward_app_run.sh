#!/usr/bin/env bash
# One device call for the backward in the app (issue 18, "In the app and the CLI") and a profile
# of the tensor-core backward: the GPU suites of the backward paths (the mirror and the fast
# kernels beside it, the window's GPU scenes), flashviz-cli's backward on the CUDA backend and
# Nsight Compute's details of the backward kernel at d = 64 and
# 128 (n = 8192, bf16, 16k tokens, heads x d = 2048).
#
#   kernels/bench/backward_app_run.sh PRODUCT_TARBALL OUT_DIR
# (PRODUCT_TARBALL from WITH_SCENES=1 kernels/bench/hopper/pack_product.sh.)
set -u -o pipefail
tarball=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
. "$here/device_env.sh"
unpack_product "$tarball"
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"

for suite in tst_cuda_backward tst_gpu_scene tst_cuda_tensor_core_backward; do
  timeout 240 "$product/$suite" >"$out/$suite.log" 2>&1 || status=1
  echo "== $suite" >>"$out/summary.txt"
  grep -E "^(Totals|FAIL!)|QINFO.*(tensorCoreKernels|backwardJudges)" -A1 "$out/$suite.log" | grep -v "^--" | head -20 | tee -a "$out/summary.txt"
done

cli="$product/flashviz-cli run --algorithm backward --backend cuda"
$cli --n 256 --d 64 --br 64 --bc 64 >"$out/cli-d64.txt" 2>&1 || status=1
$cli --n 300 --nk 200 --d 128 --br 32 --bc 32 --causal >"$out/cli-d128-causal.txt" 2>&1 || status=1
$cli --n 256 --d 64 --br 64 --bc 64 --json >"$out/cli-d64.json" 2>&1 || status=1
$cli --n 8 --d 4 --br 4 --bc 4 >"$out/cli-toy.txt" 2>&1 || status=1
grep -hE "^(FlashAttention backward|check against|the (bf16|fp16)|tensor cores)" "$out"/cli-*.txt | tee -a "$out/summary.txt"

# Nsight Compute on one launch of the default backward kernel (the pre- and post-pass too).
for d in 64 128; do
  timeout 150 ncu --kernel-name regex:'tcBackwardKernel|backwardPrepare|backwardFinish' --launch-count 3 \
    --set full --page details --print-units base \
    "$product/flashviz-gpu-bench" --tc bf16 --backward --no-fp32 --no-baseline --once --d $d --n 8192 \
    >"$out/ncu-d$d.txt" 2>&1 || status=1
  echo "ncu d=$d: $(grep -c 'Section:' "$out/ncu-d$d.txt") sections" | tee -a "$out/summary.txt"
done
exit $status
