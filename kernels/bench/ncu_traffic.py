#!/usr/bin/env python3
"""Measured memory traffic of FlashViz's GPU kernels, read from the hardware counters.

Runs flashviz-gpu-bench --once (each method launched once: the cuBLAS three-step standard
attention in fp32, every fp32 flash variant, every fp16 / bf16 tensor-core variant) under Nsight
Compute for each d and n, at the benchmark's fixed shape (batch x n = --tokens, heads x d =
--width), and writes one JSON file: per method and size the bytes DRAM read and wrote
(dram__bytes_read.sum, dram__bytes_write.sum), the bytes through L2 (lts__t_bytes.sum) and the
kernel time, summed over the method's kernels (three for the standard method), with each kernel
listed. It also runs flashviz-l2-bandwidth for the L2 and DRAM read rates.

Nsight Compute flushes the caches before each kernel it profiles (--cache-control all): every
kernel starts with an empty L2, which is what FlashViz's L2-aware model assumes
(core/l2_traffic.h). Clocks are left as found (--clock-control none).

    ncu_traffic.py --bench BIN/flashviz-gpu-bench --l2 BIN/flashviz-l2-bandwidth --out FILE.json

resources/measured/README.md says how the shipped file was made.
"""
import argparse
import csv
import datetime
import io
import json
import os
import re
import shutil
import subprocess
import sys

METRICS = [
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_bytes.sum",
    "gpu__time_duration.sum",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__waves_per_multiprocessor",
]
# What the L2 counter is made of, where the GPU has the metric (checked with --query-metrics):
# requests from the SMs (reads and writes), from the other L2 partition over the fabric, and the
# kernel's local memory (register spills) as the SMs' L1 sees it.
BREAKDOWN = {
    "l2FromSmBytes": ("lts__t_sectors_srcunit_tex.sum", 32),
    "l2FromSmReadBytes": ("lts__t_sectors_srcunit_tex_op_read.sum", 32),
    "l2FromSmWriteBytes": ("lts__t_sectors_srcunit_tex_op_write.sum", 32),
    "l2FabricBytes": ("lts__t_sectors_srcunit_ltcfabric.sum", 32),
    "localLoadBytes": ("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", 1),
    "localStoreBytes": ("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum", 1),
}
OURS = ("flashFastKernel", "flashTf32x3Kernel", "tcFlashKernel")
HELPERS = ("toTcKernel", "fromTcKernel", "fillKernel")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def first_line(cmd):
    try:
        out = run(cmd)
        return (out.stdout or out.stderr).strip().splitlines()[-1]
    except (OSError, IndexError):
        return "unknown"


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def read_ncu_csv(path):
    """The raw page's rows: one dict per profiled kernel, in launch order."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], rows[2:]  # rows[1] holds the units
    units = dict(zip(header, rows[1])) if len(rows) > 1 else {}
    kernels = []
    for row in body:
        if len(row) != len(header):
            continue
        record = dict(zip(header, row))
        kernels.append({"record": record, "units": units})
    return kernels


def scaled(record, units, metric):
    """A metric's value in bytes or nanoseconds, whatever unit ncu chose to print."""
    value = number(record.get(metric, ""))
    if value is None:
        return None
    unit = units.get(metric, "").strip().lower()
    factors = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
               "nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9}
    return value * factors.get(unit, 1)


def short_name(name):
    for key in OURS + HELPERS + ("softmaxRowsKernel",):
        if key in name:
            return key
    return name.split("(")[0].split("<")[0].replace("void ", "").strip()


def kernel_entry(k):
    r, u = k["record"], k["units"]
    return {
        "name": short_name(r.get("Kernel Name", "")),
        "fullName": r.get("Kernel Name", ""),
        "grid": int(number(r.get("launch__grid_size", "0")) or 0),
        "block": int(number(r.get("launch__block_size", "0")) or 0),
        "registers": int(number(r.get("launch__registers_per_thread", "0")) or 0),
        "waves": number(r.get("launch__waves_per_multiprocessor", "")),
        "dramReadBytes": scaled(r, u, "dram__bytes_read.sum"),
        "dramWriteBytes": scaled(r, u, "dram__bytes_write.sum"),
        "l2Bytes": scaled(r, u, "lts__t_bytes.sum"),
        "durationNs": scaled(r, u, "gpu__time_duration.sum"),
        **{key: (scaled(r, u, metric) * factor if scaled(r, u, metric) is not None else None)
           for key, (metric, factor) in BREAKDOWN.items() if metric in r},
    }


def family(method):
    if method == "cublas-3step":
        return "standard", "fp32"
    if method.startswith("tc-fp16-"):
        return "flash", "fp16"
    if method.startswith("tc-bf16-"):
        return "flash", "bf16"
    return "flash", "fp32"


def point(method, d, n, batch, heads, kernels, checked):
    kind, dtype = family(method)
    variant = method.split("-", 2)[-1] if method.startswith("tc-") else method.split("-", 1)[-1]
    tiles = re.search(r"br(\d+)_bc(\d+)", variant)
    total = lambda key: sum(k.get(key) or 0 for k in kernels)
    return {
        "method": method, "kind": kind, "dtype": dtype,
        "variant": "" if kind == "standard" else variant,
        "d": d, "n": n, "batch": batch, "heads": heads,
        "blockRows": int(tiles.group(1)) if tiles else 0,
        "blockCols": int(tiles.group(2)) if tiles else 0,
        "dramReadBytes": total("dramReadBytes"), "dramWriteBytes": total("dramWriteBytes"),
        "l2Bytes": total("l2Bytes"), "durationNs": total("durationNs"),
        **{key: total(key) for key in BREAKDOWN if all(key in k for k in kernels)},
        "checked": checked, "kernels": kernels,
    }


def methods_in_order(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def measure(args, d, n, logdir):
    tag = f"d{d}-n{n}"
    methods_csv = os.path.join(logdir, f"methods-{tag}.csv")
    ncu_csv = os.path.join(logdir, f"ncu-{tag}.csv")
    cmd = [args.ncu, "--clock-control", "none", "--cache-control", "all", "--csv", "--page", "raw",
           "--metrics", ",".join(METRICS + args.extra), "--log-file", ncu_csv,
           args.bench, "--d", str(d), "--n", str(n), "--tokens", str(args.tokens),
           "--width", str(args.width), "--once", "--variants", "--tc", "fp16,bf16",
           "--csv", methods_csv]
    out = run(cmd, timeout=args.timeout)
    with open(os.path.join(logdir, f"bench-{tag}.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + out.stdout + out.stderr)
    if not os.path.exists(methods_csv) or not os.path.exists(ncu_csv):
        raise RuntimeError(f"{tag}: no output (exit {out.returncode}): {out.stderr[-400:]}")
    methods = methods_in_order(methods_csv)
    launches = [k for k in read_ncu_csv(ncu_csv)
                if not any(h in k["record"].get("Kernel Name", "") for h in HELPERS)]
    ours = [k for k in launches if any(o in k["record"].get("Kernel Name", "") for o in OURS)]
    first_ours = launches.index(ours[0]) if ours else len(launches)
    standard = launches[:first_ours]  # the baseline runs first: cuBLAS, softmax, cuBLAS
    flash_methods = [m for m in methods if m["method"] != "cublas-3step"]
    if len(ours) != len(flash_methods):
        raise RuntimeError(f"{tag}: {len(ours)} flash launches profiled for "
                           f"{len(flash_methods)} methods")
    points = []
    for m in methods:
        batch, heads = int(m["batch"]), int(m["heads"])
        checked = float(m["rel_err"]) if m["rel_err"] not in ("", "0") else None
        if m["method"] == "cublas-3step":
            kernels = [kernel_entry(k) for k in standard]
        else:
            kernels = [kernel_entry(ours[flash_methods.index(m)])]
        points.append(point(m["method"], d, n, batch, heads, kernels, checked))
    return points


def available_breakdown(ncu):
    """The breakdown metrics this GPU's Nsight Compute knows (a wrong name fails the whole run)."""
    out = run([ncu, "--query-metrics"], timeout=120)
    known = set(re.findall(r"^(\S+)", out.stdout, re.M))
    return [metric for metric, _ in BREAKDOWN.values() if metric.rsplit(".", 1)[0] in known]


def l2_bandwidth(path, logdir):
    out = run([path], timeout=300)
    with open(os.path.join(logdir, "l2-bandwidth.log"), "w") as f:
        f.write(out.stdout + out.stderr)
    m = re.search(r"summary: L2 read (\d+) GB/s .* DRAM read (\d+) GB/s", out.stdout)
    size = re.search(r"L2 ([\d.]+) MB", out.stdout)
    return {
        "l2ReadBytesPerSecond": float(m.group(1)) * 1e9 if m else None,
        "dramReadBytesPerSecond": float(m.group(2)) * 1e9 if m else None,
        "l2Bytes": float(size.group(1)) * 1e6 if size else None,
        "log": out.stdout.strip().splitlines(),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    ap.add_argument("--l2", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--logs", default=None)
    ap.add_argument("--dims", default="64,128")
    ap.add_argument("--ns", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--ncu", default=shutil.which("ncu") or "ncu")
    args = ap.parse_args()
    logdir = args.logs or os.path.dirname(os.path.abspath(args.out))
    args.extra = available_breakdown(args.ncu)
    os.makedirs(logdir, exist_ok=True)

    gpu = first_line(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
    result = {
        "format": "flashviz-measured-traffic", "version": 1,
        "gpu": gpu,
        "date": datetime.date.today().isoformat(),
        "driver": first_line(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
        "nvcc": first_line(["nvcc", "--version"]),
        "ncu": first_line([args.ncu, "--version"]),
        "shape": {"tokens": args.tokens, "width": args.width, "causal": False},
        "cacheControl": "all", "clockControl": "none",
        "metrics": METRICS + args.extra,
        "bandwidth": l2_bandwidth(args.l2, logdir),
        "points": [], "errors": [],
    }
    for d in [int(x) for x in args.dims.split(",")]:
        for n in [int(x) for x in args.ns.split(",")]:
            try:
                result["points"] += measure(args, d, n, logdir)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
                result["errors"].append(str(e))
                print("error:", e, file=sys.stderr)
            with open(args.out, "w") as f:  # after every size: a cut-off run keeps what it had
                json.dump(result, f, indent=1)
            done = [p for p in result["points"] if p["d"] == d and p["n"] == n]
            for p in done:
                print(f"d={d:<4} n={n:<6} {p['method']:<40} DRAM read {p['dramReadBytes']/1e6:9.1f} MB"
                      f" write {p['dramWriteBytes']/1e6:8.1f} MB  L2 {p['l2Bytes']/1e9:8.3f} GB"
                      f"  {p['durationNs']/1e6:8.3f} ms", flush=True)
    return 1 if result["errors"] or not result["points"] else 0


if __name__ == "__main__":
    sys.exit(main())
