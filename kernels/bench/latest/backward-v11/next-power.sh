#!/usr/bin/env bash
# NOT RUN (session 23 left it for the next): is the backward's shortfall at the largest n power?
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
reasons=clocks_event_reasons.active
nvidia-smi --query-gpu=$reasons --format=csv,noheader > /dev/null 2>&1 || reasons=clocks_throttle_reasons.active
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,$reasons --format=csv,noheader -lms 100 > $out/smi.csv 2>&1 &
smi=$!
mark() { echo "$1 $(date +%s.%N)" >> $out/marks.txt; }
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
kill $smi
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
        rows.append((ts, float(f[1].split()[0]), float(f[2].split()[0]), f[4]))
    except Exception:
        pass
for name in sorted({k.rsplit("-", 1)[0] for k in marks}):
    a, b = marks[name + "-start"], marks[name + "-end"]
    s = [r for r in rows if a + 3 <= r[0] <= b]  # past the set-up and the first launches
    if not s: print(name, "no samples"); continue
    print(f"{name}: {len(s)} samples, SM clock median {statistics.median(r[1] for r in s):.0f} MHz, "
          f"power mean {statistics.mean(r[2] for r in s):.0f} W, reasons {sorted(set(r[3] for r in s))}")
PY
pack_outputs
echo "left $(left) s"
