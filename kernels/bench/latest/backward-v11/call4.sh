#!/usr/bin/env bash
# Session 23, call 4 (H200 if lent again): the points call 3 found behind cuDNN, again. Every
# forward variant without the mask (d = 64 and 128 at n = 4096 behind), the d = 128 backward
# variants without the mask (n = 16384 behind), and PyTorch's backends without the mask a second
# time (their noise). One tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-240}
device_preamble "$1"
timeout 70 $product/flashviz-gpu-bench --tc fp16,bf16 --variants --no-fp32 --no-baseline --d 64,128 --n 4096,16384 --repeats 10 > $out/flashviz-variants.txt 2>&1
echo "== FlashViz forward variants (exit $?)"; grep -E "^(64|128) " $out/flashviz-variants.txt | grep -E " tc-.*wgmma" | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}'
echo "left $(left) s"
timeout 40 $product/flashviz-gpu-bench --tc fp16,bf16 --backward-variants --backward-match d128_bc128_br64_wg2_s2_dqturns,d128_bc128_br64_wg2_s3 --no-fp32 --no-baseline --d 128 --n 8192,16384 --repeats 10 > $out/flashviz-bwd128.txt 2>&1
echo "== FlashViz d = 128 backward variants (exit $?)"; grep -E "^128 " $out/flashviz-bwd128.txt | grep tcbwd- | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}'
echo "left $(left) s"
timeout 100 python3 $here/sdpa_bench.py --dtypes fp16,bf16 --backward --d 64,128 --n 4096,8192,16384 --repeats 10 > $out/torch-again.txt 2>&1
echo "== torch again (exit $?)"; grep -E "torch-(fp16|bf16)-cudnn" $out/torch-again.txt | awk '{print $1, $2, $5, $8}'
pack_outputs
echo "left $(left) s"
