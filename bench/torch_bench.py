#!/usr/bin/python3
"""One round of the comparison workloads in PyTorch (eager CPU and torch._lazy).

Systems: torch_eager (device cpu) and torch_lazy (torch._lazy with its
TorchScript backend, device "lazy"). Workload ids, shapes and units are the
contract shared with the lazytensor C++ benchmarks (bench/*.cpp).

Every (workload, system) pair runs in its own child process: torch._lazy can
abort the interpreter (deep graphs, fallbacks), and a fresh process keeps one
workload's caches and allocator state out of the next one's numbers.

Output (--out): a JSON list of records
  {"workload", "system", "value" (float or null), "unit", "samples", "note"}
where value is the median of samples; null means failed or not applicable,
with the reason in note.

Usage: bench/torch_bench.py --threads 2 --out /tmp/torch.json [--quick]
"""
import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time

SYSTEMS = ("torch_eager", "torch_lazy")

# id -> (unit, systems it applies to)
WORKLOADS = {
    "record_op": ("ns/op", ("torch_lazy",)),
    "dispatch_tiny": ("ns/op", ("torch_eager",)),
    "mark_step_100": ("us", ("torch_lazy",)),
    "mark_step_1000": ("us", ("torch_lazy",)),
    "chain8": ("ms", SYSTEMS),
    "softmax": ("ms", SYSTEMS),
    "layer_norm": ("ms", SYSTEMS),
    "matmul_512": ("ms", SYSTEMS),
    "matmul_1024": ("ms", SYSTEMS),
    "conv2d": ("ms", SYSTEMS),
    "mlp_step": ("steps/s", SYSTEMS),
    "transformer_step": ("steps/s", SYSTEMS),
    "lstm_step": ("steps/s", SYSTEMS),
    "charlm_step": ("steps/s", SYSTEMS),
    "resnet_step": ("steps/s", SYSTEMS),
    "compile_mlp_step": ("ms", ("torch_lazy",)),
    "peak_rss_mlp_step": ("MB", SYSTEMS),
    "peak_rss_transformer_step": ("MB", SYSTEMS),
}

NOT_APPLICABLE = {
    "record_op": "not applicable: eager has no recording step (see dispatch_tiny)",
    "dispatch_tiny": "not applicable: a lazy op is recorded, not run (see record_op)",
    "mark_step_100": "not applicable: eager has no barrier",
    "mark_step_1000": "not applicable: eager has no barrier",
    "compile_mlp_step": "not applicable: eager does not compile",
}


# ---------------------------------------------------------------- child side

class Ctx:
    """What a workload needs: torch, its device, the barrier and the wait."""

    def __init__(self, system, quick):
        import torch
        self.torch = torch
        self.quick = quick
        self.lazy = system == "torch_lazy"
        if self.lazy:
            import torch._lazy
            import torch._lazy.metrics
            import torch._lazy.ts_backend
            torch._lazy.ts_backend.init()
            self.device = torch.device("lazy")
        else:
            self.device = torch.device("cpu")
        # Few samples per round: rounds (driver) give the between-run spread.
        self.n_samples = 3 if quick else 5
        self.min_time = 0.02 if quick else 0.25  # seconds per sample

    def barrier(self):
        if self.lazy:
            self.torch._lazy.mark_step()

    def wait(self):
        if self.lazy:
            self.torch._lazy.wait_device_ops()

    def sync(self):
        self.barrier()
        self.wait()

    def reset_fallbacks(self):
        if self.lazy:
            self.torch._lazy.metrics.reset()

    def fallbacks(self):
        """aten:: counters are ops torch._lazy ran on CPU instead of tracing."""
        if not self.lazy:
            return []
        names = self.torch._lazy.metrics.counter_names()
        return sorted(n for n in names if n.startswith("aten::"))


def sample_time(fn, min_time):
    """Mean seconds per call of fn, calling it until min_time has passed."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / calls


def timed_samples(ctx, fn, scale):
    """ctx.n_samples samples of fn's mean time per call, times scale."""
    return [sample_time(fn, ctx.min_time) * scale for _ in range(ctx.n_samples)]


def w_record_op(ctx):
    torch, n = ctx.torch, 1000  # <= 1000 nodes: deeper graphs crash torch._lazy
    x = torch.rand(4).to(ctx.device)
    ctx.sync()
    samples = []
    for i in range(ctx.n_samples + 1):
        s = x
        start = time.perf_counter()
        for _ in range(n):
            s = s + x
        elapsed = time.perf_counter() - start
        del s
        ctx.sync()  # nothing live is pending: the chain is discarded
        if i:  # the first chain is a warm-up
            samples.append(elapsed / n * 1e9)
    return samples


def w_dispatch_tiny(ctx):
    torch = ctx.torch
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    n = 2000 if ctx.quick else 20000

    def run():
        for _ in range(n):
            a + b
    return timed_samples(ctx, run, 1e9 / n)


def mark_step_chain(ctx, n):
    torch = ctx.torch
    x = torch.rand(4).to(ctx.device)
    ctx.sync()
    reps = max(1, 2000 // n) if ctx.quick else max(1, 20000 // n)

    def one():  # the chain is built untimed; only the barrier counts
        s = x
        for _ in range(n):
            s = s + x
        start = time.perf_counter()
        ctx.sync()
        return time.perf_counter() - start

    for _ in range(2):  # compile, then check the cache is hit
        one()
    return [sum(one() for _ in range(reps)) / reps * 1e6
            for _ in range(ctx.n_samples)]


def w_mark_step_100(ctx):
    return mark_step_chain(ctx, 100)


def w_mark_step_1000(ctx):
    return mark_step_chain(ctx, 1000)


def op_samples(ctx, make_inputs, op):
    """ms per op; on lazy each call is record + mark_step + wait."""
    inputs = [t.to(ctx.device) for t in make_inputs()]
    ctx.sync()

    def run():
        out = op(*inputs)
        ctx.sync()
        return out

    for _ in range(2):  # lazy: compile and cache outside the timer
        run()
    ctx.reset_fallbacks()
    return timed_samples(ctx, run, 1e3)


def w_chain8(ctx):
    torch, n = ctx.torch, 1 << 24

    def chain8(x, y):
        return torch.sigmoid((torch.tanh(torch.exp(x * y + 1.0)) - y) * x + 0.5)
    return op_samples(ctx, lambda: (torch.rand(n), torch.rand(n)), chain8)


def w_softmax(ctx):
    torch = ctx.torch
    return op_samples(ctx, lambda: (torch.randn(4096, 1024),),
                      lambda x: torch.softmax(x, 1))


def w_layer_norm(ctx):
    torch = ctx.torch
    f = torch.nn.functional
    return op_samples(
        ctx, lambda: (torch.randn(4096, 1024), torch.ones(1024), torch.zeros(1024)),
        lambda x, w, b: f.layer_norm(x, [1024], w, b))


def matmul_samples(ctx, n):
    torch = ctx.torch
    return op_samples(ctx, lambda: (torch.randn(n, n), torch.randn(n, n)),
                      torch.matmul)


def w_matmul_512(ctx):
    return matmul_samples(ctx, 512)


def w_matmul_1024(ctx):
    return matmul_samples(ctx, 1024)


def w_conv2d(ctx):
    torch = ctx.torch
    f = torch.nn.functional
    return op_samples(
        ctx,
        lambda: (torch.randn(32, 3, 32, 32), torch.randn(64, 3, 3, 3), torch.randn(64)),
        lambda x, w, b: f.conv2d(x, w, b, stride=1, padding=1))


def make_mlp(ctx, batch):
    """An MLP training step (closure) and its model, on ctx.device."""
    torch = ctx.torch
    nn, f = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    model.to(ctx.device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = {}

    def set_batch(b):
        data["x"] = torch.randn(b, 784).to(ctx.device)
        data["y"] = torch.randint(0, 10, (b,)).to(ctx.device)
        ctx.sync()

    def step():
        opt.zero_grad()
        loss = f.cross_entropy(model(data["x"]), data["y"])
        loss.backward()
        opt.step()
        ctx.barrier()
    set_batch(batch)
    return step, set_batch


def make_transformer(ctx):
    """A TransformerEncoderLayer training step (closure), on ctx.device."""
    torch = ctx.torch
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024)
    layer.train()
    layer.to(ctx.device)
    opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
    x = torch.randn(128, 16, 256).to(ctx.device)
    ctx.sync()

    def step():
        opt.zero_grad()
        out = layer(x)
        loss = (out * out).mean()
        loss.backward()
        opt.step()
        ctx.barrier()
    return step


def make_lstm(ctx):
    """lt-train's --model lstm step: a 2-layer LSTM(28, 128) over 28 steps, batch 64, Adam."""
    torch = ctx.torch
    nn, f = torch.nn, torch.nn.functional
    lstm = nn.LSTM(28, 128, num_layers=2, batch_first=True).to(ctx.device)
    head = nn.Linear(128, 10).to(ctx.device)
    opt = torch.optim.Adam(list(lstm.parameters()) + list(head.parameters()), lr=1e-3)
    x = torch.randn(64, 28, 28).to(ctx.device)
    y = torch.randint(0, 10, (64,)).to(ctx.device)
    ctx.sync()

    def step():
        opt.zero_grad()
        out, _ = lstm(x)
        loss = f.cross_entropy(head(out[:, 27]), y)
        loss.backward()
        opt.step()
        ctx.barrier()
    return step


def make_charlm(ctx):
    """lt-train's --model charlm step: Embedding(114, 64) + positions, a 2-layer norm_first
    TransformerDecoder (4 heads, ff 256) with causal self- and memory attention, Linear(64, 114),
    batch 32 of 64 characters, Adam."""
    torch = ctx.torch
    nn, f = torch.nn, torch.nn.functional
    layer = nn.TransformerDecoderLayer(64, 4, 256, 0.1, batch_first=True, norm_first=True)
    decoder = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(64)).to(ctx.device)
    embed = nn.Embedding(114, 64).to(ctx.device)
    head = nn.Linear(64, 114).to(ctx.device)
    pos = (torch.randn(1, 64, 64) * 0.02).to(ctx.device).requires_grad_()
    params = list(embed.parameters()) + list(decoder.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params + [pos], lr=3e-3)
    mask = torch.triu(torch.full((64, 64), float("-inf")), diagonal=1).to(ctx.device)
    x = torch.randint(0, 114, (32, 64)).to(ctx.device)
    y = torch.randint(0, 114, (32 * 64,)).to(ctx.device)
    ctx.sync()

    def step():
        opt.zero_grad()
        h = embed(x) + pos
        logits = head(decoder(h, h, tgt_mask=mask, memory_mask=mask))
        loss = f.cross_entropy(logits.reshape(32 * 64, 114), y)
        loss.backward()
        opt.step()
        ctx.barrier()
    return step


def make_resnet(ctx):
    """lt-train's --model resnet step (tools/models.h): batch 64 of 28x28 images, Adam."""
    torch = ctx.torch
    nn, f = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

        def forward(self, x):
            h = f.relu(self.bn1(self.conv1(x)))
            h = self.bn2(self.conv2(h))
            return f.relu(h + (x if self.down is None else self.down(x)))

    w = 24  # tools/models.h's kResnetWidth
    model = nn.Sequential(nn.Conv2d(1, w, 3, 1, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(),
                          Block(w, w, 1), Block(w, 2 * w, 2), Block(2 * w, 4 * w, 2),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4 * w, 10))
    model = model.to(ctx.device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(64, 1, 28, 28).to(ctx.device)
    y = torch.randint(0, 10, (64,)).to(ctx.device)
    ctx.sync()

    def step():
        opt.zero_grad()
        loss = f.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        ctx.barrier()
    return step


def steps_per_s(ctx, step, warmup, steps):
    for _ in range(warmup):
        step()
    ctx.wait()
    ctx.reset_fallbacks()
    samples = []
    for _ in range(ctx.n_samples):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        ctx.wait()
        samples.append(steps / (time.perf_counter() - start))
    return samples


def w_mlp_step(ctx):
    step, _ = make_mlp(ctx, 64)
    return steps_per_s(ctx, step, 3, 10 if ctx.quick else 50)


def w_transformer_step(ctx):
    step = make_transformer(ctx)
    return steps_per_s(ctx, step, 2, 1 if ctx.quick else 4)


def w_lstm_step(ctx):
    return steps_per_s(ctx, make_lstm(ctx), 2, 2 if ctx.quick else 10)


def w_charlm_step(ctx):
    return steps_per_s(ctx, make_charlm(ctx), 2, 2 if ctx.quick else 10)


def w_resnet_step(ctx):
    return steps_per_s(ctx, make_resnet(ctx), 2, 2 if ctx.quick else 10)


def w_compile_mlp_step(ctx):
    step, set_batch = make_mlp(ctx, 64)
    for _ in range(3):  # the batch-64 graphs are cached; only new shapes compile
        step()
    ctx.wait()
    samples = []
    for batch in range(17, 17 + ctx.n_samples):
        set_batch(batch)  # data upload is not compilation
        start = time.perf_counter()
        step()
        ctx.wait()
        samples.append((time.perf_counter() - start) * 1e3)
    return samples


def peak_rss(ctx, step, steps):
    """RSS growth (MB) of `steps` training steps; the absolute peak goes to note."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    for _ in range(steps):
        step()
    ctx.wait()
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ctx.note.append("absolute peak %.1f MB (baseline %.1f MB)" % (after / 1024, before / 1024))
    return [(after - before) / 1024]


def w_peak_rss_mlp_step(ctx):
    step, _ = make_mlp(ctx, 64)
    return peak_rss(ctx, step, 20)


def w_peak_rss_transformer_step(ctx):
    return peak_rss(ctx, make_transformer(ctx), 5)


def run_child(workload, system, quick):
    """Run one workload; print its record as the last line of stdout."""
    unit = WORKLOADS[workload][0]
    record = {"workload": workload, "system": system, "value": None,
              "unit": unit, "samples": [], "note": ""}
    try:
        ctx = Ctx(system, quick)
        ctx.note = []
        samples = globals()["w_" + workload](ctx)
        record["samples"] = samples
        record["value"] = statistics.median(samples)
        if ctx.fallbacks():
            ctx.note.append("CPU fallbacks: " + ", ".join(ctx.fallbacks()))
        record["note"] = "; ".join(ctx.note)
    except Exception as e:  # any failure is a null result, not a crash
        msg = (str(e).strip().splitlines() or [""])[0][:300]
        record["note"] = "failed: %s: %s" % (type(e).__name__, msg)
    sys.stdout.flush()
    print("\n" + json.dumps(record))


# --------------------------------------------------------------- parent side

def null_record(workload, system, note):
    return {"workload": workload, "system": system, "value": None,
            "unit": WORKLOADS[workload][0], "samples": [], "note": note}


def crash_note(proc):
    if proc.returncode < 0:
        try:
            why = "killed by " + signal.Signals(-proc.returncode).name
        except ValueError:
            why = "killed by signal %d" % -proc.returncode
    else:
        why = "exit code %d" % proc.returncode
    return "crashed: child process %s%s" % (why, crash_reason(proc.stderr))


def crash_reason(stderr):
    """The line that says why (a glog check, an uncaught C++ exception), else the last."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for marker in ("Check failed", "what():", "terminate called", "Error"):
        for line in lines:
            if marker in line:
                return " (" + line[:300] + ")"
    return (" (" + lines[-1][:300] + ")") if lines else ""


def run_in_child(workload, system, args):
    cmd = [sys.executable, os.path.abspath(__file__), "--child",
           "--threads", str(args.threads), "--systems", system,
           "--workloads", workload] + (["--quick"] if args.quick else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return null_record(workload, system, "failed: timed out after %d s" % args.timeout)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode == 0 and lines:
        try:
            return json.loads(lines[-1])
        except ValueError:
            pass
    return null_record(workload, system, crash_note(proc))


def run_all(args, systems, workloads):
    records = []
    for workload in workloads:  # systems alternate per workload: drift hits both
        for system in systems:
            if system not in WORKLOADS[workload][1]:
                rec = null_record(workload, system, NOT_APPLICABLE[workload])
            else:
                rec = run_in_child(workload, system, args)
            records.append(rec)
            value = "null" if rec["value"] is None else "%.4g" % rec["value"]
            print("%-26s %-12s %10s %-8s %s" % (workload, system, value,
                                                rec["unit"], rec["note"]),
                  file=sys.stderr, flush=True)
    return records


def parse_list(text, allowed, what):
    items = [s for s in text.split(",") if s]
    bad = [s for s in items if s not in allowed]
    if bad:
        sys.exit("unknown %s: %s (known: %s)" % (what, ", ".join(bad), ", ".join(allowed)))
    return items


def set_threads(n):
    # Before torch loads its OpenMP runtime; same defaults as the driver sets.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(n))
    import torch
    torch.set_num_threads(n)
    try:
        torch.set_num_interop_threads(n)
    except RuntimeError:  # only settable before any inter-op work
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--systems", default=",".join(SYSTEMS))
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--out", default="-", help="JSON file ('-': stdout)")
    p.add_argument("--quick", action="store_true", help="fewer iterations (smoke test)")
    p.add_argument("--timeout", type=int, default=None,
                   help="seconds per workload and system (default 300 quick, 1200 full)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    systems = parse_list(args.systems, SYSTEMS, "system")
    workloads = parse_list(args.workloads, list(WORKLOADS), "workload")
    if args.timeout is None:
        args.timeout = 300 if args.quick else 1200
    if args.child:
        set_threads(args.threads)
        run_child(workloads[0], systems[0], args.quick)
        return
    records = run_all(args, systems, workloads)
    text = json.dumps(records, indent=1)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
