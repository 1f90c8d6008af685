#!/usr/bin/env bash
# Ran with persistent.patch (this folder) applied to d8bb570: the rows and hopper_check --match
# are not in the tree since (HOPPER_NOTES.md v7). Asked for an H200, ran on an H100.
# Session 24, call 1. Issue 17: the persistent rows (a block per SM walking query blocks, the
# next Q and keys loaded under the last P V and the O store) checked, under compute-sanitizer,
# and timed beside every other Hopper row and PyTorch's cuDNN, twice (hopper_check, built by
# kernels/bench/hopper/build.sh into .device/hc). Issue 18: next-power.sh's clock-and-power
# comparison (session 23, not run). Then this tree's tensor-core suite (new: 2 x 40 heads, more
# query blocks than SMs) and every variant's trace recorded by the CLI. One tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-400}
device_preamble "$1"
hc=.device/hc/hopper_check
time_rows() { # $1: label; the rest: hopper_check's options
  local label=$1; shift
  timeout 90 $hc --time-only --n 4096,8192,16384 --repeats 30 "$@" > $out/time-$label.txt 2>&1
  echo "== hopper_check timing $label (exit $?)"
  grep -E "^(fp16|bf16) " $out/time-$label.txt | grep -v sm80 | awk '{printf "%s %s %s %s %s %s\n",$1,$2,$3,$4,$5,$7}'
}
time_rows full --full-only
echo "left $(left) s"
timeout 150 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backends flash,cudnn --d 64,128 --n 4096,8192,16384 --repeats 30 > $out/torch-full.txt 2>&1
echo "== torch non-causal (exit $?)"; grep -E "torch-(fp16|bf16)-(flash|cudnn)" $out/torch-full.txt | awk '{print $1, $2, $5, $8}'
echo "left $(left) s"
time_rows causal --causal-only --match persistent
time_rows causal-defaults --causal-only --match _s4_overlap_pingpong
time_rows causal-d128 --causal-only --d 128 --match _s2_overlap_pingpong
timeout 150 python3 $here/sdpa_bench.py --causal --dtypes fp16,bf16 --backends flash,cudnn --d 64,128 --n 4096,8192,16384 --repeats 30 > $out/torch-causal.txt 2>&1
echo "== torch causal (exit $?)"; grep -E "torch-(fp16|bf16)-(flash|cudnn)" $out/torch-causal.txt | awk '{print $1, $2, $5, $8}'
echo "left $(left) s"
time_rows full-again --full-only --match _s2_overlap
echo "left $(left) s"
timeout 120 $hc --check-only --match persistent > $out/check.txt 2>&1
echo "== checks of the persistent rows (exit $?): $(grep -c '^ok\|PASS' $out/check.txt) lines; $(tail -1 $out/check.txt)"
grep -E "^FAIL" $out/check.txt | head
for tool in racecheck memcheck synccheck; do
  [ $(left) -lt 200 ] && { echo "$tool skipped"; continue; }
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $hc --sanitize --match persistent > $out/san-$tool.txt 2>&1
  echo "compute-sanitizer $tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-$tool.txt))"
done
echo "left $(left) s"
# Issue 18: next-power.sh's phases, 600 repeats each (about 6 s).
if [ $(left) -gt 130 ]; then
  start_clock_samples
  for n in 16384 8192; do
    for t in bf16 fp16; do
      mark "flashviz-$t-$n-start"
      timeout 30 $product/flashviz-gpu-bench --tc $t --backward --no-fp32 --no-baseline --d 128 --n $n --repeats 600 > $out/power-flashviz-$t-$n.txt 2>&1
      mark "flashviz-$t-$n-end"
      grep -E "tcbwd" $out/power-flashviz-$t-$n.txt | tail -1 | awk '{print $1, $2, $3, $5}'
      mark "torch-$t-$n-start"
      timeout 40 python3 $here/sdpa_bench.py --dtypes $t --backward --backward-only --backends cudnn --d 128 --n $n --repeats 600 > $out/power-torch-$t-$n.txt 2>&1
      mark "torch-$t-$n-end"
      grep -- "-bwd" $out/power-torch-$t-$n.txt | awk '{print $1, $2, $5, $8}'
    done
  done
  stop_clock_samples
  clock_summary
fi
echo "left $(left) s"
[ $(left) -gt 80 ] && { timeout 60 $product/flashviz-cli hopper-trace --all-variants --out $out/hopper-traces.json > $out/hopper-trace.txt 2>&1; echo "hopper-trace --all-variants: exit $?"; grep -E "^wgmma|wrote" $out/hopper-trace.txt | head -20; }
[ $(left) -gt 40 ] && { timeout $(( $(left) - 15 )) $product/tst_cuda_tensor_core > $out/tst_cuda_tensor_core.log 2>&1; echo "tst_cuda_tensor_core: exit $? $(grep Totals $out/tst_cuda_tensor_core.log)"; grep -E "^FAIL" -A4 $out/tst_cuda_tensor_core.log | head -20; }
pack_outputs
echo "left $(left) s"
