#!/usr/bin/env python3
"""PyTorch scaled_dot_product_attention on the shapes flashviz-gpu-bench times.

batch x n = 16k tokens, heads x d = 2048, non-causal by default (--causal: bottom-right is the
same as top-left here, n_q = n_k). In fp32 (default): the memory-efficient kernel (PyTorch's
fp32 flash-style path, which on sm_80 and later multiplies on tensor cores in three TF32
products, CUTLASS's OpMultiplyAddFastF32) and the math path (matmul, softmax, matmul; TF32 off). With --dtypes
fp16,bf16 each 16-bit type runs with every backend forced in turn: flash (FlashAttention-2),
cuDNN, memory-efficient and math; TFLOP/s halved for causal.
Medians over repeats with CUDA events, TFLOP/s = 4 n^2 d batch heads / t, peak memory above the
inputs from torch.cuda.max_memory_allocated. With --backward the 16-bit flash and cuDNN backends'
backward passes are timed too (torch.autograd.grad of the output against Q, K, V with a fixed
dO; TFLOP/s = 2.5 x the forward's count). With --flash-csv (flashviz-gpu-bench's --csv
output) it prints one table with FlashViz's kernels beside PyTorch's and the ratios.
"""
import argparse
import csv
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

# The 16-bit backends by the names --backends takes, in the order they run; the backward pass is
# timed for the first two.
BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
BACKWARD_BACKENDS = ("flash", "cudnn")


def time_ms(fn, repeats):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), min(times), max(times)


def time_backward(args, d, n, batch, heads, flops, dtype_name, q, k, v):
    """The flash and cuDNN backends' backward: dQ, dK, dV for a fixed dO, timed alone."""
    rows = []
    q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
    dout = torch.randn_like(q)
    for name, backend in ((f"torch-{dtype_name}-{b}-bwd", BACKENDS[b]) for b in BACKWARD_BACKENDS
                          if b in args.backends):
        try:
            with sdpa_kernel([backend]):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
                run = lambda: torch.autograd.grad(out, (q, k, v), dout, retain_graph=True)
                run()
                med, lo, hi = time_ms(run, args.repeats)
            del out
        except (torch.OutOfMemoryError, RuntimeError) as error:
            print(f"d={d} n={n} {name}: not run ({str(error).splitlines()[0][:100]})")
            torch.cuda.empty_cache()
            continue
        row = dict(d=d, n=n, batch=batch, heads=heads, method=name, median_ms=med, min_ms=lo,
                   max_ms=hi, tflops=2.5 * flops / (med * 1e-3) / 1e12, peak_bytes=0,
                   rel_vs_efficient=0.0)
        rows.append(row)
        print(f"d={d:<4} n={n:<6} B={batch:<3} H={heads:<3} {name:<22} {med:9.3f} ms "
              f"{row['tflops']:6.2f} TFLOP/s", flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--n", default="1024,2048,4096,8192,16384")
    parser.add_argument("--tokens", type=int, default=16384)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--dtypes", default="fp32", help="comma list of fp32, fp16, bf16")
    parser.add_argument("--backward", action="store_true",
                        help="also time the 16-bit flash and cuDNN backward passes")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help=f"comma list of the 16-bit backends to time ({', '.join(BACKENDS)})")
    parser.add_argument("--backward-only", action="store_true",
                        help="time the 16-bit backward passes and no forward pass (implies --backward)")
    parser.add_argument("--csv", help="write PyTorch's rows here")
    parser.add_argument("--flash-csv", help="flashviz-gpu-bench --csv output to compare with")
    args = parser.parse_args()
    args.backends = args.backends.split(",")
    unknown = [b for b in args.backends if b not in BACKENDS]
    if unknown:
        parser.error(f"unknown backend {', '.join(unknown)}; known: {', '.join(BACKENDS)}")
    args.backward = args.backward or args.backward_only

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(dev)}, {args.dtypes}, "
          f"{'causal' if args.causal else 'non-causal'}, {args.repeats} repeats (median)")
    rows = []
    for d in [int(x) for x in args.d.split(",")]:
        for n in [int(x) for x in args.n.split(",")]:
            batch, heads = args.tokens // n, args.width // d
            flops = 4.0 * n * n * d * batch * heads * (0.5 if args.causal else 1.0)
            for dtype_name in args.dtypes.split(","):
                dtype = dtypes[dtype_name]
                gen = torch.Generator(device=dev).manual_seed(n * 1000 + d)
                q, k, v = (torch.randn(batch, heads, n, d, device=dev, dtype=dtype,
                                       generator=gen) for _ in range(3))
                reference = None
                if dtype == torch.float32:
                    backends = (("torch-efficient", SDPBackend.EFFICIENT_ATTENTION),
                                ("torch-math", SDPBackend.MATH))
                else:
                    backends = tuple((f"torch-{dtype_name}-{b}", backend)
                                     for b, backend in BACKENDS.items() if b in args.backends)
                if args.backward_only:
                    backends = ()
                for name, backend in backends:
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
                    base = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                    try:
                        with sdpa_kernel([backend]):
                            run = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
                            out = run()
                            torch.cuda.synchronize()
                            peak = (torch.cuda.max_memory_allocated() - base
                                    - out.numel() * out.element_size())
                            err = 0.0
                            if reference is None:
                                reference = out.double()
                            else:
                                err = ((out.double() - reference).norm() / reference.norm()).item()
                            del out
                            med, lo, hi = time_ms(run, args.repeats)
                    except torch.OutOfMemoryError:
                        print(f"d={d} n={n} {name}: out of memory")
                        torch.cuda.empty_cache()
                        continue
                    except RuntimeError as error:  # a backend that refuses this dtype or shape
                        print(f"d={d} n={n} {name}: not run ({str(error).splitlines()[0][:100]})")
                        continue
                    row = dict(d=d, n=n, batch=batch, heads=heads, method=name, median_ms=med,
                               min_ms=lo, max_ms=hi, tflops=flops / (med * 1e-3) / 1e12,
                               peak_bytes=max(peak, 0), rel_vs_efficient=err)
                    rows.append(row)
                    print(f"d={d:<4} n={n:<6} B={batch:<3} H={heads:<3} {name:<16} {med:9.3f} ms "
                          f"{row['tflops']:6.2f} TFLOP/s  peak {row['peak_bytes'] / 2**30:7.2f} GiB  "
                          f"rel vs first backend {err:.1e}", flush=True)
                if args.backward and dtype != torch.float32:
                    rows += time_backward(args, d, n, batch, heads, flops, dtype_name, q, k, v)
                del q, k, v, reference
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)

    if not args.flash_csv:
        return 0
    with open(args.flash_csv) as f:
        ours = list(csv.DictReader(f))
    torch_rows = {(r["d"], r["n"], r["method"]): r for r in rows}
    print("\nFlashViz vs cuBLAS three-step vs PyTorch SDPA (fp32, TFLOP/s; x = ratio of times)")
    print(f"{'d':>4} {'n':>6} {'flashviz kernel':<30} {'flash':>7} {'3-step':>7} {'torch-eff':>9} "
          f"{'torch-math':>10} {'vs 3-step':>9} {'vs eff':>7} {'flash scratch':>13} "
          f"{'3-step peak':>11} {'eff peak':>9}")
    for d in sorted({int(r["d"]) for r in ours}):
        for n in sorted({int(r["n"]) for r in ours if int(r["d"]) == d}):
            mine = [r for r in ours if int(r["d"]) == d and int(r["n"]) == n]
            base = next((r for r in mine if r["method"] == "cublas-3step"), None)
            # The best variant of each arithmetic: 3xTF32 on tensor cores, fp32 FMA.
            groups = ([r for r in mine if r["method"].startswith("flash-tf32x3_")],
                      [r for r in mine if r["method"].startswith("flash-")
                       and not r["method"].startswith("flash-tf32x3_")])
            for flashes in groups:
                if not flashes:
                    continue
                best = max(flashes, key=lambda r: float(r["tflops"]))
                eff = torch_rows.get((d, n, "torch-efficient"))
                math = torch_rows.get((d, n, "torch-math"))
                f_t = float(best["tflops"])
                b_t = float(base["tflops"]) if base else float("nan")
                e_t = eff["tflops"] if eff else float("nan")
                m_t = math["tflops"] if math else float("nan")
                gib = lambda x: f"{float(x) / 2**30:.2f}G"
                print(f"{d:>4} {n:>6} {best['method'][6:]:<30} {f_t:7.2f} {b_t:7.2f} {e_t:9.2f} "
                      f"{m_t:10.2f} {f_t / b_t:8.2f}x {f_t / e_t:6.2f}x "
                      f"{float(best['scratch_bytes']) / 2**20:11.1f}M "
                      f"{gib(base['peak_bytes']) if base else '-':>11} "
                      f"{gib(eff['peak_bytes']) if eff else '-':>9}")

    # The tensor-core backward (flashviz-gpu-bench --tc --backward) against PyTorch's.
    for dt in ("fp16", "bf16"):
        bwd = [r for r in ours if r["method"].startswith(f"tcbwd-{dt}-")]
        if not bwd:
            continue
        print(f"\nFlashViz backward {dt} vs PyTorch's ({'causal' if args.causal else 'non-causal'}; "
              f"TFLOP/s = 2.5 x 4 n^2 d BH / t)")
        print(f"{'d':>4} {'n':>6} {'flashviz kernel':<30} {'ours':>7} {'flash':>7} {'cudnn':>7} "
              f"{'/flash':>7} {'/cudnn':>7}")
        for d in sorted({int(r["d"]) for r in bwd}):
            for n in sorted({int(r["n"]) for r in bwd if int(r["d"]) == d}):
                best = max((r for r in bwd if int(r["d"]) == d and int(r["n"]) == n),
                           key=lambda r: float(r["tflops"]))
                t = float(best["tflops"])
                theirs = [torch_rows.get((d, n, f"torch-{dt}-{b}-bwd")) for b in ("flash", "cudnn")]
                vals = [x["tflops"] if x else float("nan") for x in theirs]
                print(f"{d:>4} {n:>6} {best['method'][11:]:<30} {t:7.1f} "
                      + " ".join(f"{v:7.1f}" for v in vals) + " "
                      + " ".join(f"{t / v:6.2f}x" for v in vals))

    # The tensor-core kernel (flashviz-gpu-bench --tc) against PyTorch's 16-bit backends.
    for dt in ("fp16", "bf16"):
        tc_rows = [r for r in ours if r["method"].startswith(f"tc-{dt}-")]
        if not tc_rows:
            continue
        print(f"\nFlashViz tensor-core {dt} vs PyTorch SDPA {dt} "
              f"({'causal' if args.causal else 'non-causal'}; TFLOP/s; ours / theirs as ratios; "
              f"3-step = our fp32 cuBLAS standard attention)")
        print(f"{'d':>4} {'n':>6} {'flashviz kernel':<30} {'ours':>7} {'flash':>7} {'cudnn':>7} "
              f"{'effic':>7} {'math':>7} {'3-step':>7} {'/flash':>7} {'/cudnn':>7} {'/effic':>7} "
              f"{'/math':>7} {'/3step':>7} {'our peak':>9} {'math peak':>9}")
        for d in sorted({int(r["d"]) for r in tc_rows}):
            for n in sorted({int(r["n"]) for r in tc_rows if int(r["d"]) == d}):
                mine = [r for r in tc_rows if int(r["d"]) == d and int(r["n"]) == n]
                best = max(mine, key=lambda r: float(r["tflops"]))
                base = next((r for r in ours if int(r["d"]) == d and int(r["n"]) == n
                             and r["method"] == "cublas-3step"), None)
                t = float(best["tflops"])
                theirs = [torch_rows.get((d, n, f"torch-{dt}-{b}"))
                          for b in ("flash", "cudnn", "efficient", "math")]
                vals = [x["tflops"] if x else float("nan") for x in theirs]
                b_t = float(base["tflops"]) if base else float("nan")
                math_peak = theirs[3]["peak_bytes"] / 2**30 if theirs[3] else float("nan")
                print(f"{d:>4} {n:>6} {best['method'][8:]:<30} {t:7.1f} "
                      + " ".join(f"{v:7.1f}" for v in vals) + f" {b_t:7.1f} "
                      + " ".join(f"{t / v:6.2f}x" for v in vals) + f" {t / b_t:6.2f}x"
                      f" {float(best['peak_bytes']) / 2**20:8.1f}M {math_peak:8.2f}G")
    return 0


if __name__ == "__main__":
    sys.exit(main())
