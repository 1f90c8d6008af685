#!/usr/bin/env bash
# Session 23, call 3, on the first H200 lent: the issues' tables in one run. The defaults'
# forward (issue 17) and backward (issue 18), fp16 and bf16, d = 64 and 128, n = 4096 / 8192 /
# 16384, without and with the mask, PyTorch's flash and cuDNN (forward and backward) after each.
# One tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-420}
device_preamble "$1"
for c in "" --causal; do
  timeout 60 $product/flashviz-gpu-bench --tc fp16,bf16 --backward --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/flashviz$c.txt 2>&1
  echo "== FlashViz ${c:-non-causal} (exit $?)"; grep -E "^(64|128) " $out/flashviz$c.txt | grep -E " tc(bwd)?-" | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}'
  echo "left $(left) s"
  timeout 120 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backward --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/torch$c.txt 2>&1
  echo "== torch ${c:-non-causal} (exit $?)"; grep -E "torch-(fp16|bf16)-(flash|cudnn)" $out/torch$c.txt | awk '{print $1, $2, $5, $8}'
  echo "left $(left) s"
done
[ $(left) -gt 60 ] && { timeout 50 $product/flashviz-gpu-bench --tc fp16,bf16 --backward --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 > $out/flashviz-again.txt 2>&1
  echo "== FlashViz non-causal again (exit $?)"; grep -E "^(64|128) " $out/flashviz-again.txt | grep -E " tc(bwd)?-" | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}'; }
pack_outputs
echo "left $(left) s"
