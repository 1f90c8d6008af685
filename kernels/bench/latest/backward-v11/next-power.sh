#!/usr/bin/env bash
# Session 23 left it for the next; session 24 ran its phases in latest/hopper-v7/call1.sh (on an
# H100, BACKWARD_NOTES.md "Session 24"), with PyTorch's cuDNN backward timed alone. Is the backward's shortfall at the largest n power?
# bf16 and fp16, d = 128 without the mask at n = 16384 (0.97-0.99x cuDNN on the H200), FlashViz's
# default and PyTorch's cuDNN each run for about 6 s (600 repeats), the SM clock, power and
# clock-event reasons sampled every 100 ms; then the same at n = 8192, where FlashViz leads. If
# FlashViz's clock sits lower than cuDNN's under the power cap at 16384 only, the gap is energy per
# FLOP, not the schedule. One tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-200}
device_preamble "$1"
start_clock_samples
for n in 16384 8192; do
  for t in bf16 fp16; do
    mark "flashviz-$t-$n-start"
    timeout 40 $product/flashviz-gpu-bench --tc $t --backward --no-fp32 --no-baseline --d 128 --n $n --repeats 600 > $out/flashviz-$t-$n.txt 2>&1
    mark "flashviz-$t-$n-end"
    grep -E "tcbwd" $out/flashviz-$t-$n.txt | tail -1 | awk '{print $1, $2, $3, $5}'
    mark "torch-$t-$n-start"
    timeout 40 python3 $here/sdpa_bench.py --dtypes $t --backward --d 128 --n $n --repeats 600 > $out/torch-$t-$n.txt 2>&1
    mark "torch-$t-$n-end"
    grep -- "-bwd" $out/torch-$t-$n.txt | awk '{print $1, $2, $5, $8}'
  done
done
stop_clock_samples
clock_summary
pack_outputs
echo "left $(left) s"
