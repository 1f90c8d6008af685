#!/usr/bin/env bash
# Session 21, call 4: repeat of the defaults beside PyTorch (forward and backward, fp16 and bf16,
# both masks) on whatever card comes: a second measurement of the cuDNN comparison, and on an
# H200 the issues' own machine. One tarball ($1.tar).
set -u
out=$1
here=kernels/bench
start=$(date +%s); left() { echo $(( ${BUDGET:-300} - ($(date +%s) - start) )); }
. $here/device_env.sh
unpack_product .device/pack/product.tar.xz
mkdir -p $out
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $out/gpu.txt
for c in "" --causal; do
  timeout 60 $product/flashviz-gpu-bench --tc fp16,bf16 --backward --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/flashviz$c.txt 2>&1
  echo "== FlashViz ${c:-non-causal} (exit $?)"; grep -E "^(64|128) " $out/flashviz$c.txt | grep -E "tc(bwd)?-" | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}'
  timeout 120 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backward --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/torch$c.txt 2>&1
  echo "== torch ${c:-non-causal} (exit $?)"; grep -E "(flash|cudnn)" $out/torch$c.txt | awk '{print $1, $2, $5, $8}'
  echo "left $(left) s"
done
tar -C $(dirname $out) -cf $out.tar $(basename $out) && rm -rf $out
