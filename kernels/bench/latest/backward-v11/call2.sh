#!/usr/bin/env bash
# Session 23, call 2: why fp16 runs slower than bf16 at d = 64 under the mask at n = 16384 on the
# same kernel (call 1: 435 against 466 TFLOP/s; cuDNN 439 and 437). (1) the default, fp16 then
# bf16, 50 repeats each, and PyTorch's cuDNN likewise, with the GPU's SM clock, power and
# throttle reasons sampled every 100 ms (nvidia-smi) and each phase's start and end marked;
# (2) Nsight Compute, which locks the clocks, on one launch of each type: equal durations there
# put the gap in the clocks, not the kernel. First the backward suite on the final tree. One
# tarball ($1.tar).
set -u
here=kernels/bench
. $here/device_env.sh
BUDGET=${BUDGET:-300}
device_preamble "$1"
# The final tree (the staggered rows gone again): the backward suite once more.
timeout 90 $product/tst_cuda_tensor_core_backward > $out/tst_cuda_tensor_core_backward.log 2>&1
echo "tst_cuda_tensor_core_backward: exit $? $(grep Totals $out/tst_cuda_tensor_core_backward.log)"
grep -E "^FAIL" -A6 $out/tst_cuda_tensor_core_backward.log | head -20
reasons=clocks_event_reasons.active
nvidia-smi --query-gpu=$reasons --format=csv,noheader > /dev/null 2>&1 || reasons=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,$reasons --format=csv,noheader -lms 100 > $out/smi.csv 2>&1 &
smi=$!
mark() { echo "$1 $(date +%s.%N)" >> $out/marks.txt; }
sleep 1
for t in fp16 bf16; do
  mark "flashviz-$t-start"
  timeout 60 $product/flashviz-gpu-bench --tc $t --backward --causal --no-fp32 --no-baseline --d 64 --n 16384 --repeats 50 > $out/flashviz-$t.txt 2>&1
  mark "flashviz-$t-end"
  echo "== FlashViz $t (exit $?)"; grep -E "^64 " $out/flashviz-$t.txt | awk '{printf "%s %s %s %s %s\n",$1,$2,$3,$4,$5}'
  sleep 2
done
for t in fp16 bf16; do
  mark "torch-$t-start"
  timeout 60 python3 $here/sdpa_bench.py --dtypes $t --backward --causal --d 64 --n 16384 --repeats 50 > $out/torch-$t.txt 2>&1
  mark "torch-$t-end"
  echo "== torch $t (exit $?)"; grep -- "-bwd" $out/torch-$t.txt | awk '{print $1, $2, $5, $8}'
  sleep 2
done
kill $smi
# Each phase's samples: median SM clock, mean power, the throttle reasons seen.
python3 - "$out" <<'PY'
import sys, datetime, statistics
out = sys.argv[1]
marks = {}
for line in open(f"{out}/marks.txt"):
    name, t = line.split(); marks[name] = float(t)
rows = []
for line in open(f"{out}/smi.csv"):
    f = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((ts, float(f[1].split()[0]), float(f[2].split()[0]), f[3], f[4]))
    except Exception:
        pass
for phase in ["flashviz-fp16", "flashviz-bf16", "torch-fp16", "torch-bf16"]:
    a, b = marks[phase + "-start"], marks[phase + "-end"]
    s = [r for r in rows if a + 2 <= r[0] <= b]  # after the set-up
    if not s: print(phase, "no samples"); continue
    print(f"{phase}: {len(s)} samples, SM clock median {statistics.median(r[1] for r in s):.0f} MHz "
          f"(min {min(r[1] for r in s):.0f}), power mean {statistics.mean(r[2] for r in s):.0f} W "
          f"(max {max(r[2] for r in s):.0f}), temp max {max(r[3] for r in s)}, throttle {sorted(set(r[4] for r in s))}")
PY
for t in 0 1; do
  [ $(left) -lt 40 ] && { echo "ncu $t skipped"; continue; }
  timeout 40 ncu --kernel-name-base mangled --kernel-name "regex:hopperBackwardKernel.*Li64ELi2ELNS_7kernels7DqSplitE3ELb1ELb0EEELNS0_9TcElementE${t}ELb1" --launch-count 1 \
    --section SpeedOfLight $product/flashviz-gpu-bench --tc $([ $t = 0 ] && echo fp16 || echo bf16) --backward --causal --no-fp32 --no-baseline --d 64 --n 16384 --once > $out/ncu-$t.txt 2>&1
  echo "ncu element $t: exit $?"; grep -E "Duration|SM Frequency|Compute \(SM\) Throughput" $out/ncu-$t.txt | head -4
done
pack_outputs
echo "left $(left) s"
