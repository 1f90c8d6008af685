#!/usr/bin/env bash
# Ran with persistent-queue.patch (this folder) applied to 89ab48e: the rows, the queue and
# hopper_check's --match and --skip are not in the tree since (HOPPER_NOTES.md v8). Asked for an
# H200 and an H100 (seven starts failed), then for any kind; ran on an H100.
# Session 25, call 1. Issue 17, v8: the persistent rows with a run-time queue of query blocks
# (FlashAttention-3's dynamic scheduler) checked, under compute-sanitizer, and timed beside every
# other Hopper row, with PyTorch's cuDNN between FlashViz's passes (full mask twice, causal once).
# Then every variant's trace recorded by the CLI and the tensor-core suite, from the carried
# product (.device/pack) of this tree. hopper_check built by kernels/bench/hopper/build.sh into
# .device/hc. One tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-560}
device_preamble "$1"
hc=.device/hc/hopper_check
time_rows() { # $1: label; the rest: hopper_check's options
  local label=$1; shift
  timeout 120 $hc --time-only --n 4096,8192,16384 --repeats 30 "$@" > $out/time-$label.txt 2>&1
  echo "== hopper_check timing $label (exit $?)"
  grep -E "^(fp16|bf16) " $out/time-$label.txt | grep -v sm80 | awk '{printf "%s %s %s %s %s %s\n",$1,$2,$3,$4,$5,$7}'
}
torch_cudnn() { # $1: label; the rest: sdpa_bench's options
  local label=$1; shift
  timeout 120 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backends cudnn --d 64,128 --n 4096,8192,16384 --repeats 30 "$@" > $out/torch-$label.txt 2>&1
  echo "== torch $label (exit $?)"; grep -E "torch-(fp16|bf16)-cudnn" $out/torch-$label.txt | awk '{print $1, $2, $5, $8}'
}
timeout 150 $hc --check-only --match persistent > $out/check.txt 2>&1
status=$?
echo "== checks of the persistent rows (exit $status): $(tail -1 $out/check.txt)"
grep -E "FAIL" $out/check.txt | head
# A persistent row that hangs or fails is left out of the timing; the others still run.
only=(); [ $status -ne 0 ] && only=(--skip persistent)
echo "left $(left) s"
time_rows full --full-only "${only[@]}"
torch_cudnn full
echo "left $(left) s"
time_rows causal --causal-only "${only[@]}"
torch_cudnn causal --causal
echo "left $(left) s"
time_rows full-again --full-only "${only[@]}"
torch_cudnn full-again
echo "left $(left) s"
for tool in racecheck memcheck synccheck; do
  [ $(left) -lt 170 ] || [ $status -ne 0 ] && { echo "$tool skipped"; continue; }
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 9 $hc --sanitize --match persistent > $out/san-$tool.txt 2>&1
  echo "compute-sanitizer $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-$tool.txt))"
done
echo "left $(left) s"
[ $(left) -gt 90 ] && { timeout 70 $product/flashviz-cli hopper-trace --all-variants --out $out/hopper-traces.json > $out/hopper-trace.txt 2>&1; echo "hopper-trace --all-variants: exit $?"; grep -E "^wgmma|wrote" $out/hopper-trace.txt | head -20; }
[ $(left) -gt 40 ] && { timeout $(( $(left) - 15 )) $product/tst_cuda_tensor_core > $out/tst_cuda_tensor_core.log 2>&1; echo "tst_cuda_tensor_core: exit $? $(grep Totals $out/tst_cuda_tensor_core.log)"; grep -E "^FAIL" -A4 $out/tst_cuda_tensor_core.log | head -20; }
pack_outputs
echo "left $(left) s"
