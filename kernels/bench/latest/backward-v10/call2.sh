#!/usr/bin/env bash
# NOT RUN in session 22 (no machine could be started after call 1); session 23's backward-v11/call1.sh ran what it asked (the suite on the new table, the d = 64 defaults beside PyTorch) and more.
# Session 22, call 2: v10's table (d = 64 split by rows first). (1) the backward suite on it (the
# defaults' names on a GPU); (2) the d = 64 defaults, fp16 and bf16, both masks, beside PyTorch's
# flash and cuDNN in the same call (call 1's one point behind cuDNN: fp16 causal n = 16384).
# One tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-200}
device_preamble "$1"
timeout 60 $product/tst_cuda_tensor_core_backward > $out/tst_cuda_tensor_core_backward.log 2>&1
echo "tst_cuda_tensor_core_backward: exit $? $(grep Totals $out/tst_cuda_tensor_core_backward.log)"
grep -E "^FAIL" -A6 $out/tst_cuda_tensor_core_backward.log | head -20
grep -E "QINFO.*defaultIs" $out/tst_cuda_tensor_core_backward.log | cut -c1-200
for c in "" --causal; do
  [ $(left) -lt 40 ] && { echo "${c:-non-causal} skipped"; continue; }
  timeout 40 $product/flashviz-gpu-bench --tc fp16,bf16 --backward --no-fp32 --no-baseline --d 64 --n 4096,8192,16384 --repeats 10 $c > $out/flashviz$c.txt 2>&1
  echo "== FlashViz ${c:-non-causal} (exit $?)"; grep -E "^64 " $out/flashviz$c.txt | grep -E "tcbwd-" | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}'
  timeout 50 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backward --d 64 --n 4096,8192,16384 --repeats 10 $c > $out/torch$c.txt 2>&1
  echo "== torch ${c:-non-causal} (exit $?)"; grep -E "bwd" $out/torch$c.txt | awk '{print $1, $2, $5, $8}'
  echo "left $(left) s"
done
pack_outputs
