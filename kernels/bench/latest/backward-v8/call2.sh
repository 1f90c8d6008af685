#!/usr/bin/env bash
# Session 21, after the flip to dQ in turns: the GPU suites whole, the app suites' GPU tests, the
# defaults at n = 4096 / 8192 / 16384 beside PyTorch (both masks), every variant without the mask.
# Everything lands in one tarball ($1.tar) besides the summary printed here.
set -u
out=$1
here=kernels/bench
start=$(date +%s); left() { echo $(( ${BUDGET:-420} - ($(date +%s) - start) )); }
. $here/device_env.sh
unpack_product .device/pack/product.tar.xz
mkdir -p $out
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $out/gpu.txt
for t in tst_cuda_tensor_core_backward tst_cuda_backward tst_gpu_scene; do
  timeout 150 $product/$t > $out/$t.log 2>&1; echo "$t: exit $? $(grep Totals $out/$t.log)"
  grep -E "^FAIL" -A4 $out/$t.log | head -20
done
grep -E "QINFO.*defaultIs" $out/tst_cuda_tensor_core_backward.log | cut -c1-180
echo "worst ratio: $(grep -o 'ratio [0-9.]*' $out/tst_cuda_tensor_core_backward.log | sort -k2 -n | tail -1)"
timeout 40 $product/tst_cli runBackwardOnCudaRunsTheCheckAsked > $out/tst_cli.log 2>&1; echo "tst_cli: exit $? $(grep Totals $out/tst_cli.log)"
echo "left $(left) s"
for round in 1 2; do
  for c in "" --causal; do
    timeout 40 $product/flashviz-gpu-bench --tc bf16 --backward --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/defaults$c-$round.txt 2>&1
    echo "== defaults ${c:-non-causal} round $round (exit $?)"; grep -E "^(64|128) " $out/defaults$c-$round.txt | grep tcbwd | awk '{printf "%s %s %s %s %s\n",$1,$2,$3,$4,$5}'
  done
  [ $round = 1 ] && for c in "" --causal; do
    timeout 45 python3 $here/sdpa_bench.py --dtypes bf16 --backward --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/torch$c.txt 2>&1
    echo "== torch ${c:-non-causal}"; grep -- "-bwd" $out/torch$c.txt | awk '{print $1, $2, $5, $8}'
  done
done
echo "left $(left) s"
if [ $(left) -gt 90 ]; then
  timeout 70 $product/flashviz-gpu-bench --tc bf16 --backward-variants --no-fp32 --no-baseline --d 64,128 --n 4096,16384 --repeats 10 > $out/variants.txt 2>&1
  echo "== variants non-causal (exit $?)"; grep -E "^(64|128) " $out/variants.txt | grep wgmma_bwd | awk '{printf "%s %s %s %s %s\n",$1,$2,$3,$4,$5}'
fi
if [ $(left) -gt 60 ]; then
  timeout $(( $(left) - 20 )) ncu --kernel-name-base mangled --kernel-name "regex:hopperBackwardKernel.*Li128ELi2ELNS_7kernels7DqSplitE2.*TcElementE1ELb0" --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    $product/flashviz-gpu-bench --tc bf16 --backward --no-fp32 --no-baseline --d 128 --n 4096 --repeats 1 > $out/ncu-d128-turns.txt 2>&1
  echo "ncu d128 turns: exit $?"; grep -E "Duration|Compute \(SM\) Throughput|L1/TEX Cache|L2 Cache Throughput|Issue Slots Busy|highest-utilized" $out/ncu-d128-turns.txt | cut -c1-120 | head -10
fi
tar -C $(dirname $out) -cf $out.tar $(basename $out) && rm -rf $out
echo "left $(left) s"
