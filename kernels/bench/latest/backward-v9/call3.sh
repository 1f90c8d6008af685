#!/usr/bin/env bash
# Session 21, call 3: dQ added by tiles (cp.reduce.async.bulk from a fragment-order tile), rows
# first in the table for now. (1) the backward suite whole and the other GPU suites; (2) racecheck,
# memcheck, synccheck on the tiles rows; (3) every variant both masks; (4) the defaults beside
# PyTorch; (5) ncu on the d = 128 tiles row. Everything in one tarball ($1.tar).
set -u
out=$1
here=kernels/bench
start=$(date +%s); left() { echo $(( ${BUDGET:-480} - ($(date +%s) - start) )); }
. $here/device_env.sh
unpack_product .device/pack/product.tar.xz
mkdir -p $out
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee $out/gpu.txt
s=$product/tst_cuda_tensor_core_backward
for t in tst_cuda_tensor_core_backward tst_cuda_backward tst_gpu_scene; do
  timeout 150 $product/$t > $out/$t.log 2>&1; echo "$t: exit $? $(grep Totals $out/$t.log)"
  grep -E "^FAIL" -A6 $out/$t.log | head -30
done
grep -E "QINFO.*(defaultIs|differ between)" $out/tst_cuda_tensor_core_backward.log | cut -c1-200
echo "tiles rows: $(grep -E '^(PASS|FAIL).*_tiles' $out/tst_cuda_tensor_core_backward.log | awk '{print $1}' | sort | uniq -c | tr '\n' ' ')"
echo "worst ratio (tiles): $(grep '_tiles' $out/tst_cuda_tensor_core_backward.log | grep -o 'ratio [0-9.]*' | sort -k2 -n | tail -1); overall $(grep -o 'ratio [0-9.]*' $out/tst_cuda_tensor_core_backward.log | sort -k2 -n | tail -1)"
timeout 40 $product/tst_cli runBackwardOnCudaRunsTheCheckAsked > $out/tst_cli.log 2>&1; echo "tst_cli: exit $? $(grep Totals $out/tst_cli.log)"
for tool in racecheck memcheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $s "everyVariant:wgmma_bwd_d64_bc128_br64_wg2_s2_dqturns_tiles bf16" "everyVariant:wgmma_bwd_d128_bc128_br64_wg2_s2_dqturns_tiles fp16" > $out/san-$tool.log 2>&1
  echo "$tool: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $out/san-$tool.log)) $(grep Totals $out/san-$tool.log)"
done
echo "left $(left) s"
for c in "" --causal; do
  timeout 80 $product/flashviz-gpu-bench --tc bf16 --backward-variants --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/variants$c.txt 2>&1
  echo "== variants ${c:-non-causal} (exit $?)"; grep -E "^(64|128) " $out/variants$c.txt | grep wgmma_bwd | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}' | sed 's/tcbwd-bf16-wgmma_bwd_//'
done
echo "left $(left) s"
for c in "" --causal; do
  [ $(left) -lt 80 ] && { echo "defaults/torch skipped"; continue; }
  timeout 40 $product/flashviz-gpu-bench --tc bf16 --backward --no-fp32 --no-baseline --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/defaults$c.txt 2>&1
  echo "== defaults ${c:-non-causal}"; grep -E "^(64|128) " $out/defaults$c.txt | grep tcbwd | awk '{printf "%s %s %s %s\n",$1,$2,$3,$5}'
  timeout 45 python3 $here/sdpa_bench.py --dtypes bf16 --backward --d 64,128 --n 4096,8192,16384 --repeats 10 $c > $out/torch$c.txt 2>&1
  echo "== torch ${c:-non-causal}"; grep -- "-bwd" $out/torch$c.txt | awk '{print $1, $2, $5, $8}'
done
if [ $(left) -gt 60 ]; then
  timeout $(( $(left) - 20 )) ncu --kernel-name-base mangled --kernel-name "regex:hopperBackwardKernel.*Li128ELi2ELNS_7kernels7DqSplitE2ELb1.*TcElementE1ELb0" --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    $product/flashviz-gpu-bench --tc bf16 --backward --no-fp32 --no-baseline --d 128 --n 4096 --repeats 1 > $out/ncu-d128-tiles.txt 2>&1
  echo "ncu d128 tiles: exit $?"; grep -E "Duration|Compute \(SM\) Throughput|L1/TEX Cache|L2 Cache Throughput|Issue Slots Busy|highest-utilized" $out/ncu-d128-tiles.txt | cut -c1-120 | head -10
fi
tar -C $(dirname $out) -cf $out.tar $(basename $out) && rm -rf $out
echo "left $(left) s"
