#!/usr/bin/env bash
# One device call for the tensor-core backward (issue 18): its GPU suite, compute-sanitizer's
# memcheck, racecheck and synccheck on it, and the benchmark beside PyTorch's flash and cuDNN
# backward passes (bf16 unless TYPES says otherwise, causal and not, batch x n = 16k tokens,
# heads x d = 2048).
#
#   kernels/bench/backward_run.sh PRODUCT_TARBALL OUT_DIR [N_LIST] [TYPES]
# (PRODUCT_TARBALL from kernels/bench/hopper/pack_product.sh.)
set -u -o pipefail
tarball=$1 out=$2 lengths=${3:-4096,8192,16384} types=${4:-bf16}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
. "$here/device_env.sh"
unpack_product "$tarball"
work=$(mktemp -d)
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/summary.txt"

timeout 300 "$product/tst_cuda_tensor_core_backward" >"$out/suite.log" 2>&1 || status=1
grep -E "^(Totals|FAIL!)" -A1 "$out/suite.log" | tee -a "$out/summary.txt"
# The forward suite too: the forward kernels write the log-sum-exp the backward reads.
timeout 300 "$product/tst_cuda_tensor_core" >"$out/forward-suite.log" 2>&1 || status=1
grep -E "^(Totals|FAIL!)" -A1 "$out/forward-suite.log" | tee -a "$out/summary.txt"

for causal in "" --causal; do
  name=bench${causal:+-causal}
  timeout 240 "$product/flashviz-gpu-bench" --tc "$types" --backward-variants --no-fp32 --no-baseline \
    --d 64,128 --n "$lengths" --repeats 20 $causal --csv "$out/$name.csv" >"$out/$name.txt" 2>&1 || status=1
  timeout 300 python3 "$here/sdpa_bench.py" --dtypes "$types" --backward --d 64,128 --n "$lengths" \
    --repeats 20 $causal --flash-csv "$out/$name.csv" >"$out/$name-torch.txt" 2>&1 || status=1
  echo "== ${causal:-non-causal}" >>"$out/summary.txt"
  sed -n '/FlashViz backward/,$p' "$out/$name-torch.txt" | tee -a "$out/summary.txt"
  grep -E "^(d|\s*[0-9])" "$out/$name.txt" | grep -E "tc-|tcbwd" | tail -n 20 >>"$out/summary.txt"
done

# The library call the window's benchmark page makes, backward and both.
for pass in backward forward+backward; do
  timeout 120 "$product/flashviz-gpu-bench" --api --d 128 --n 4096,16384 --repeats 5 --pass "$pass" \
    >"$out/api-${pass/+/-}.txt" 2>&1 || status=1
  echo "== --api --pass $pass" >>"$out/summary.txt"
  grep -vE "^progress" "$out/api-${pass/+/-}.txt" >>"$out/summary.txt"
done

export FLASHVIZ_GPU_TEST_SANITIZER=1
for tool in memcheck synccheck racecheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 "$product/tst_cuda_tensor_core_backward" everyVariant \
    >"$work/tst-$tool.log" 2>&1
  echo "tst_cuda_tensor_core_backward everyVariant, $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$work/tst-$tool.log"); $(grep -m1 Totals "$work/tst-$tool.log"))" | tee -a "$out/summary.txt"
done
tail -n 30 "$work"/tst-*.log >"$out/sanitizer-tails.log"
# Few files come back from the device: everything but the summary and the suites' logs in one.
(cd "$out" && tar -czf "$work/details.tar.gz" --exclude=summary.txt --exclude='*suite.log' . &&
  find . -type f ! -name summary.txt ! -name '*suite.log' -delete && mv "$work/details.tar.gz" .)
exit $status
