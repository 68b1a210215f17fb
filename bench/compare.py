#!/usr/bin/python3
"""Compare lazytensor with PyTorch 1.13 eager and torch._lazy on this machine.

Runs the lazytensor Google Benchmark programs (<build-dir>/bench/bench_*) and
bench/torch_bench.py in interleaved rounds (A B A B ...), so that machine drift
hits every system alike, then writes to --out-dir:
  latest.json  machine info, per-(workload, system) statistics, raw records
  latest.md    one row per workload, and speedups of lazytensor over PyTorch
  ratios.svg   those speedups as a log-scale bar chart

Contract with the C++ side: a benchmark named <workload>/<system>[/...] with
system in lt_eager, lt_interp, lt_mlir reports its headline in the user counter
`value`, its unit in the label. Benchmarks whose workload starts with
peak_rss run one per process. Everything else (e.g. BM_*) is ignored.

Usage: bench/compare.py [--rounds 3] [--threads 2] [--quick] [--skip-torch]
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LT_SYSTEMS = ("lt_eager", "lt_interp", "lt_mlir", "cblas")  # cblas: the matmul reference
TORCH_SYSTEMS = ("torch_eager", "torch_lazy")
SYSTEMS = LT_SYSTEMS + TORCH_SYSTEMS
# The lazytensor figure a ratio uses: compiled if there, else eager, else interp.
LT_PREFERENCE = ("lt_mlir", "lt_eager", "lt_interp")
TIME_UNITS = {"ms", "us", "ns", "s", "ns/op", "us/op", "MB", "KB", "GB"}
RATE_UNITS = {"steps/s", "GB/s", "GFLOP/s", "items/s", "ops/s"}
WORKLOAD_ORDER = (
    "record_op", "dispatch_tiny", "mark_step_100", "mark_step_1000", "chain8",
    "softmax", "layer_norm", "matmul_512", "matmul_1024", "conv2d", "mlp_step",
    "transformer_step", "compile_mlp_step", "peak_rss_mlp_step",
    "peak_rss_transformer_step")


def log(msg):
    print("[compare] " + msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------ environment

def child_env(threads):
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "LT_NUM_THREADS"):
        env[var] = str(threads)
    # No OMP_WAIT_POLICY: each system runs its OpenMP runtime's defaults (lazytensor's libomp
    # spins 1 ms before sleeping; PyTorch's libgomp its own spin count). The systems run one
    # at a time, so nobody's spinning steals another's cores.
    return env


def torch_version(env):
    proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True, env=env)
    return proc.stdout.strip() if proc.returncode == 0 else None


def ensure_torch(env):
    """torch's version, installing the Debian package if we may; None if absent."""
    version = torch_version(env)
    if version or os.geteuid() != 0 or not shutil.which("apt-get"):
        return version
    log("import torch failed: installing python3-torch with apt-get")
    apt_env = dict(env, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update"], ["apt-get", "install", "-y", "python3-torch"]):
        if subprocess.run(cmd, env=apt_env, stdout=subprocess.DEVNULL).returncode:
            return None
    return torch_version(env)


def read_first(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split("=" if "=" in line else ":", 1)[1].strip()
    except OSError:
        pass
    return None


def git(*argv):
    proc = subprocess.run(["git", "-C", REPO] + list(argv), capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def machine_info(args, torch_ver):
    commit = git("rev-parse", "--short", "HEAD")
    if commit and git("status", "--porcelain", "--untracked-files=no"):
        commit += "+dirty"
    blas = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
    return {
        "cpu": read_first("/proc/cpuinfo", "model name") or platform.processor(),
        "cores": os.cpu_count(),
        "threads": args.threads,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "torch": torch_ver,
        "system_blas": os.path.realpath(blas) if os.path.exists(blas) else None,
        "git_commit": commit,
        "lt_build_type": read_first(os.path.join(args.build_dir, "CMakeCache.txt"),
                                    "CMAKE_BUILD_TYPE:"),
        "rounds": args.rounds,
        "quick": args.quick,
    }


# ---------------------------------------------------- lazytensor binaries

def find_lt_binaries(build_dir):
    bench_dir = os.path.join(build_dir, "bench")
    if not os.path.isdir(bench_dir):
        return []
    paths = (os.path.join(bench_dir, n) for n in sorted(os.listdir(bench_dir))
             if n.startswith("bench_"))
    return [p for p in paths if os.path.isfile(p) and os.access(p, os.X_OK)]


def contract_key(name):
    """(workload, system) for a <workload>/<system>[/...] name, else None."""
    parts = name.split("/")
    if len(parts) >= 2 and parts[1] in LT_SYSTEMS:
        return parts[0], parts[1]
    return None


def ere_escape(name):
    # Google Benchmark 1.7 compiles filters as std::regex::extended, whose
    # libstdc++ scanner accepts only these escapes ('\/', '\]', '\}' are errors).
    return "".join("\\" + c if c in "\\.[()*+?{|^$" else c for c in name)


def list_tests(binary, env):
    proc = subprocess.run([binary, "--benchmark_list_tests=true"],
                          capture_output=True, text=True, env=env, timeout=120)
    if proc.returncode:
        raise RuntimeError("--benchmark_list_tests failed: " + last_line(proc.stderr))
    return [l.strip() for l in proc.stdout.splitlines() if l.strip()]


def last_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


def load_gbench_json(path):
    """Entries of a Google Benchmark JSON file, also of one cut short by a crash."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return []
    for fixed in (text, text.rstrip().rstrip(",") + "\n]\n}", text.rstrip() + "\n]\n}"):
        try:
            return json.loads(fixed).get("benchmarks", [])
        except ValueError:
            continue
    return []


def run_gbench(binary, names, args, env, tmpdir):
    """Runs exactly `names`; returns ({name: [entries]}, returncode, stderr)."""
    out = os.path.join(tmpdir, "gbench.json")
    if os.path.exists(out):
        os.remove(out)
    regex = "^(" + "|".join(ere_escape(n) for n in names) + ")$"
    cmd = [binary, "--benchmark_filter=" + regex, "--benchmark_format=json",
           "--benchmark_out=" + out, "--benchmark_out_format=json"]
    if args.quick:
        cmd.append("--benchmark_min_time=0.05")  # 1.7 takes seconds as a plain number
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=args.timeout)
        rc, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        rc, err = -signal.SIGKILL, "timed out after %d s" % args.timeout
    entries = {}
    for e in load_gbench_json(out):
        if e.get("run_type", "iteration") == "iteration":
            entries.setdefault(e["name"], []).append(e)
    return entries, rc, err


def run_names(binary, names, args, env, tmpdir):
    """{name: entries or failure note}; after a crash, reruns the rest."""
    results, pending = {}, list(names)
    while pending:
        entries, rc, err = run_gbench(binary, pending, args, env, tmpdir)
        results.update({n: entries[n] for n in pending if n in entries})
        rest = [n for n in pending if n not in entries]
        if not rest:
            break
        if rc == 0:  # no crash, yet not reported (e.g. a filter the binary rejects)
            results.update({n: "not reported: %s" % last_line(err) for n in rest})
            break
        # Benchmarks run in listing order: the first missing one crashed.
        results[rest[0]] = "crashed (%s): %s" % (exit_text(rc), last_line(err))
        pending = rest[1:]
    return results


def exit_text(rc):
    if rc < 0:
        try:
            return "killed by " + signal.Signals(-rc).name
        except ValueError:
            return "killed by signal %d" % -rc
    return "exit code %d" % rc


def entry_record(key, entries):
    workload, system = key
    rec = {"workload": workload, "system": system, "value": None, "unit": "",
           "samples": [], "note": ""}
    if isinstance(entries, str):
        rec["note"] = entries
        return rec
    rec["unit"] = entries[0].get("label", "")
    bad = [e for e in entries if e.get("error_occurred")]
    if bad:
        rec["note"] = "error: " + str(bad[0].get("error_message", ""))
    elif any("value" not in e for e in entries):
        rec["note"] = "no 'value' counter in the benchmark output"
    else:
        rec["samples"] = [float(e["value"]) for e in entries]
        rec["value"] = statistics.median(rec["samples"])
    return rec


def run_lt_binary(binary, args, env, tmpdir):
    """Contract records of one binary; peak_rss benchmarks each in a fresh process."""
    keyed = [(n, contract_key(n)) for n in list_tests(binary, env)]
    keyed = [(n, k) for n, k in keyed if k]
    if not keyed:
        log("%s: no <workload>/<system> benchmarks, skipped" % os.path.basename(binary))
        return []
    rss = [n for n, k in keyed if k[0].startswith("peak_rss")]
    rest = [n for n, k in keyed if not k[0].startswith("peak_rss")]
    results = run_names(binary, rest, args, env, tmpdir) if rest else {}
    for name in rss:
        results.update(run_names(binary, [name], args, env, tmpdir))
    return [entry_record(k, results[n]) for n, k in keyed]


def run_lt_round(binaries, args, env):
    records = []
    with tempfile.TemporaryDirectory(prefix="lt_bench_") as tmpdir:
        for binary in binaries:
            log("running " + binary)
            try:
                records += run_lt_binary(binary, args, env, tmpdir)
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                log("%s: %s" % (binary, e))
    return records


# ------------------------------------------------------------------ torch

def run_torch_round(args, env):
    with tempfile.NamedTemporaryFile(suffix=".json", prefix="torch_bench_") as tmp:
        cmd = [sys.executable, os.path.join(HERE, "torch_bench.py"),
               "--threads", str(args.threads), "--out", tmp.name]
        if args.quick:
            cmd.append("--quick")
        log("running " + " ".join(cmd[1:]))
        if subprocess.run(cmd, env=env).returncode:
            log("torch_bench.py failed")
            return []
        with open(tmp.name) as f:
            return json.load(f)


# ------------------------------------------------------------- statistics

def aggregate(raw):
    """One stats record per (workload, system): over the per-round values."""
    groups = {}
    for rec in raw:
        groups.setdefault((rec["workload"], rec["system"]), []).append(rec)
    return [stats_record(key, recs) for key, recs in sorted(groups.items(), key=sort_key)]


def sort_key(item):
    (workload, system), _ = item
    order = WORKLOAD_ORDER.index(workload) if workload in WORKLOAD_ORDER else len(WORKLOAD_ORDER)
    return order, workload, SYSTEMS.index(system) if system in SYSTEMS else len(SYSTEMS)


def stats_record(key, recs):
    values = [r["value"] for r in recs if r["value"] is not None]
    notes = []
    for r in recs:
        if r.get("note") and r["note"] not in notes:
            notes.append(r["note"])
    units = sorted({r["unit"] for r in recs if r.get("unit")})  # >1: a contract mismatch
    rec = {"workload": key[0], "system": key[1], "unit": ", ".join(units),
           "median": None, "min": None, "max": None, "spread": None,
           "rounds": len(recs), "n": len(values), "samples": values,
           "inner_samples": [r.get("samples", []) for r in recs], "notes": notes}
    if values:
        med = statistics.median(values)
        rec.update(median=med, min=min(values), max=max(values),
                   spread=(max(values) - min(values)) / med if med else None)
    return rec


def speedup(lt, torch_rec):
    """How many times better lazytensor is (>1: better); None if not comparable."""
    if not lt or not torch_rec or lt["unit"] != torch_rec["unit"]:
        return None
    a, b = lt["median"], torch_rec["median"]
    if a is None or b is None or a <= 0 or b <= 0:
        return None
    if lt["unit"] in TIME_UNITS:
        return b / a
    if lt["unit"] in RATE_UNITS:
        return a / b
    return None


def table_rows(stats):
    """[(workload, {system: stats}, lt_system, vs_eager, vs_lazy)] in report order."""
    by_workload = {}
    for rec in stats:
        by_workload.setdefault(rec["workload"], {})[rec["system"]] = rec
    rows = []
    for workload, cells in by_workload.items():
        lt_sys = next((s for s in LT_PREFERENCE
                       if s in cells and cells[s]["median"] is not None), None)
        lt = cells.get(lt_sys)
        rows.append((workload, cells, lt_sys, speedup(lt, cells.get("torch_eager")),
                     speedup(lt, cells.get("torch_lazy"))))
    return rows


# --------------------------------------------------------------- markdown

def fmt(v):
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 100:
        return "%.0f" % v
    if a >= 10:
        return "%.1f" % v
    if a >= 1:
        return "%.2f" % v
    return "%.3g" % v


def cell(rec):
    if not rec or rec["median"] is None:
        return "n/a"
    spread = "" if rec["spread"] is None else " [%.0f%%]" % (100 * rec["spread"])
    return fmt(rec["median"]) + spread


def ratio_cell(ratio, lt_sys):
    if ratio is None:
        return "n/a"
    text = "%.2fx" % ratio if ratio < 10 else "%.1fx" % ratio
    return text if lt_sys == "lt_mlir" else "%s (%s)" % (text, lt_sys)


def machine_line(m):
    if not m:
        return "Machine: not recorded."
    fields = (m.get("cpu"), m.get("cores"), m.get("threads"), m.get("kernel"),
              m.get("torch") or "(skipped)", m.get("git_commit"),
              m.get("lt_build_type") or "unknown", m.get("date"), m.get("rounds"),
              ", quick" if m.get("quick") else "")
    return ("Machine: %s, %s cores, %s threads, Linux %s, torch %s, lazytensor %s "
            "(%s build), %s, %s round(s)%s." % fields)


def render_md(report):
    m, stats = report["machine"], report["records"]
    head = ["workload", "unit"] + list(SYSTEMS) + [
        "lazytensor vs PyTorch eager", "lazytensor vs PyTorch lazy"]
    lines = [
        "# lazytensor vs PyTorch",
        "",
        "Reproduce: `make bench` (bench/compare.py). " + machine_line(m),
        "",
        "Cells: median over rounds [spread = (max - min) / median]. Ratios are speedups of "
        "lazytensor (lt_mlir; else lt_eager or lt_interp, as marked) over PyTorch: >1 means "
        "lazytensor is better (torch/lt for times and MB, lt/torch for rates).",
        "",
        "Every system ran with the same threads (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, "
        "MKL_NUM_THREADS, LT_NUM_THREADS, torch.set_num_threads), each OpenMP runtime with its default wait policy. "
        "Allocators: lazytensor keeps freed tensor buffers of 64 KiB and more in a size-bucketed "
        "cache (reuse without page faults); PyTorch 1.13 uses glibc malloc with its defaults "
        "(no MALLOC_* variables are set for anyone), so its large temporaries are fresh mmaps.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * 2 + "---:|" * (len(head) - 2),
    ]
    for workload, cells, lt_sys, vs_eager, vs_lazy in table_rows(stats):
        unit = next((c["unit"] for c in cells.values() if c["unit"]), "")
        row = [workload, unit] + [cell(cells.get(s)) for s in SYSTEMS]
        row += [ratio_cell(vs_eager, lt_sys), ratio_cell(vs_lazy, lt_sys)]
        lines.append("| " + " | ".join(row) + " |")
    notes = ["- %s / %s: %s" % (r["workload"], r["system"], "; ".join(r["notes"]))
             for r in stats if r["notes"] and not r["notes"][0].startswith("not applicable")]
    if notes:
        lines += ["", "Notes:", ""] + notes
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------- svg

SVG_COLORS = {"eager": "#4e79a7", "lazy": "#f28e2b"}


def svg_scale(ratios, x0, width):
    """x(ratio) on a log scale over whole decades, at least 0.1x..10x, at most 1e-3..1e3."""
    logs = [math.log10(r) for r in ratios if r]
    lo = max(-3, min(-1, math.floor(min(logs, default=0))))
    hi = min(3, max(1, math.ceil(max(logs, default=0))))

    def x(r):
        lg = max(lo, min(hi, math.log10(r)))
        return x0 + (lg - lo) / (hi - lo) * width
    return x, (lo, hi)


def svg_text(x, y, text, anchor="start", size=11, fill="#222"):
    return ('<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s" fill="%s">%s</text>'
            % (x, y, size, anchor, fill, escape(text)))


def svg_axis(x, decades, top, bottom):
    out = []
    lo, hi = decades
    ticks = [10.0 ** k for k in range(lo, hi + 1)]
    ticks += [t for t in (0.5, 2.0) if hi - lo <= 2 and 10.0 ** lo < t < 10.0 ** hi]
    for t in sorted(ticks):
        style = 'stroke="#000" stroke-width="1.5"' if t == 1 else 'stroke="#ccc"'
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" %s/>'
                   % (x(t), top, x(t), bottom, style))
        out.append(svg_text(x(t), bottom + 14, "%gx" % t, "middle", 10))
    return out


def svg_bar(x, y, ratio, color, height):
    if ratio is None:
        return [svg_text(x(1) + 4, y + height - 1, "n/a", size=9, fill="#888")]
    left, right = sorted((x(1), x(ratio)))
    label_x, anchor = (right + 3, "start") if ratio >= 1 else (left - 3, "end")
    return ['<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>'
            % (left, y, max(right - left, 1), height, color),
            svg_text(label_x, y + height - 1, "%.2fx" % ratio, anchor, 9)]


def render_svg(report):
    rows = table_rows(report["records"])
    label_w, plot_w, bar_h, row_h, top = 200, 520, 9, 26, 50
    x, decades = svg_scale([r for row in rows for r in row[3:]], label_w, plot_w)
    height = top + row_h * len(rows) + 40
    width = label_w + plot_w + 70
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif">' % (width, height),
           '<rect width="100%" height="100%" fill="#fff"/>',
           svg_text(10, 18, "lazytensor speedup over PyTorch (log scale; >1x: lazytensor "
                            "better)", size=13)]
    for i, (name, color) in enumerate((("vs PyTorch eager", SVG_COLORS["eager"]),
                                       ("vs PyTorch lazy", SVG_COLORS["lazy"]))):
        out.append('<rect x="%d" y="28" width="10" height="10" fill="%s"/>'
                   % (10 + 150 * i, color))
        out.append(svg_text(24 + 150 * i, 37, name, size=11))
    out += svg_axis(x, decades, top - 4, top + row_h * len(rows))
    for i, (workload, _, _, vs_eager, vs_lazy) in enumerate(rows):
        y = top + row_h * i
        out.append(svg_text(label_w - 8, y + bar_h + 4, workload, "end"))
        out += svg_bar(x, y + 2, vs_eager, SVG_COLORS["eager"], bar_h)
        out += svg_bar(x, y + 3 + bar_h, vs_lazy, SVG_COLORS["lazy"], bar_h)
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------- main

def write_outputs(report, out_dir, with_json=True):
    os.makedirs(out_dir, exist_ok=True)
    files = {"latest.md": render_md(report), "ratios.svg": render_svg(report)}
    if with_json:
        files["latest.json"] = json.dumps(report, indent=1) + "\n"
    for name, text in files.items():
        with open(os.path.join(out_dir, name), "w") as f:
            f.write(text)
    log("wrote " + ", ".join(os.path.join(out_dir, n) for n in files))


def load_report(path):
    """A latest.json, or a bare list of raw records (e.g. torch_bench.py output)."""
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, list):
        return {"machine": {}, "records": aggregate(data), "raw": data}
    return data


def measure(args):
    env = child_env(args.threads)
    torch_ver = None
    if not args.skip_torch:
        torch_ver = ensure_torch(env)
        if not torch_ver:
            log("PyTorch is not importable (and cannot be installed as non-root): "
                "skipping torch_eager and torch_lazy")
    binaries = [] if args.skip_lt else find_lt_binaries(args.build_dir)
    if not args.skip_lt and not binaries:
        log("no bench_* executables in %s/bench: build them first" % args.build_dir)
    raw = []
    for r in range(args.rounds):  # interleaved: lazytensor, torch, lazytensor, ...
        log("round %d/%d" % (r + 1, args.rounds))
        recs = run_lt_round(binaries, args, env)
        if torch_ver:
            recs += run_torch_round(args, env)
        raw += [dict(rec, round=r) for rec in recs]
    return {"machine": machine_info(args, torch_ver), "records": aggregate(raw), "raw": raw}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build-dir", default="build")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out-dir", default=os.path.join("bench", "results"))
    p.add_argument("--quick", action="store_true", help="short runs, for smoke tests")
    p.add_argument("--skip-torch", action="store_true")
    p.add_argument("--skip-lt", action="store_true")
    p.add_argument("--from-json", metavar="FILE", help="re-render the report from FILE only")
    p.add_argument("--timeout", type=int, default=3600,
                   help="seconds per lazytensor benchmark process")
    return p.parse_args()


def main():
    args = parse_args()
    if args.from_json:
        report = load_report(args.from_json)
        write_outputs(report, args.out_dir, with_json=False)
    else:
        report = measure(args)
        write_outputs(report, args.out_dir)
    print(render_md(report), end="")
    measured = [r for r in report["records"] if r["median"] is not None]
    log("%d of %d (workload, system) pairs measured" % (len(measured), len(report["records"])))
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main())
