#!/usr/bin/python3
"""Before/after: the lazytensor benchmarks of two builds, in one run on this machine.

Runs the <workload>/<system> benchmarks of two build trees (say the last landed commit, built in
a git worktree, and the working tree) in interleaved rounds (A B, then B A, ...), so that
machine drift hits both alike, and prints one row per benchmark: the median of each build, the
ratio B/A and whether B is better or worse (times lower is better, rates higher). A change
within --noise (default 10%) is reported as noise.

Usage: bench/ab.py --a OLD_BUILD --b NEW_BUILD [--rounds 3] [--threads 2] [--filter REGEX]
       [--quick]
"""
import argparse
import os
import re
import statistics
import tempfile

import compare as cmp


def records(build, args, env, tmpdir):
    """{workload/system: (value, unit)} of the benchmarks --filter selects in one build."""
    out = {}
    for binary in cmp.find_lt_binaries(build):
        keyed = [(n, cmp.contract_key(n)) for n in cmp.list_tests(binary, env)]
        keyed = [(n, k) for n, k in keyed if k and re.search(args.filter, "/".join(k))]
        # peak_rss benchmarks each in a fresh process, as compare.py runs them
        groups = [[n for n, k in keyed if not k[0].startswith("peak_rss")]]
        groups += [[n] for n, k in keyed if k[0].startswith("peak_rss")]
        results = {}
        for names in groups:
            if names:
                results.update(cmp.run_names(binary, names, args, env, tmpdir))
        for n, k in keyed:
            rec = cmp.entry_record(k, results[n])
            if rec["value"] is not None:
                out["/".join(k)] = (rec["value"], rec["unit"])
            else:
                cmp.log("%s in %s: %s" % (n, build, rec["note"]))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", required=True, help="build tree A (before)")
    p.add_argument("--b", required=True, help="build tree B (after)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--filter", default=".", help="regex over workload/system")
    p.add_argument("--noise", type=float, default=0.10)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--timeout", type=int, default=900)
    args = p.parse_args()
    env = cmp.child_env(args.threads)
    samples = {"a": {}, "b": {}}
    units = {}
    with tempfile.TemporaryDirectory(prefix="lt_ab_") as tmpdir:
        for r in range(args.rounds):
            order = ("a", "b") if r % 2 == 0 else ("b", "a")
            for side in order:
                cmp.log("round %d/%d: build %s" % (r + 1, args.rounds, side.upper()))
                for name, (v, unit) in records(getattr(args, side), args, env, tmpdir).items():
                    samples[side].setdefault(name, []).append(v)
                    units[name] = unit
    print("| benchmark | unit | A (median) | B (median) | B/A | |")
    print("|---|---|---|---|---|---|")
    worse = 0
    for name in sorted(set(samples["a"]) & set(samples["b"])):
        a, b = statistics.median(samples["a"][name]), statistics.median(samples["b"][name])
        unit = units[name]
        ratio = b / a if a else float("nan")
        higher_better = unit in cmp.RATE_UNITS
        gain = ratio if higher_better else (1 / ratio if ratio else float("nan"))
        verdict = "noise" if abs(gain - 1) <= args.noise else ("better" if gain > 1 else "WORSE")
        worse += verdict == "WORSE"
        print("| %s | %s | %.4g | %.4g | %.3f | %s |" % (name, unit, a, b, ratio, verdict))
    print("\n%d of %d benchmarks worse beyond %.0f%% (rounds %d, threads %d)" %
          (worse, len(set(samples["a"]) & set(samples["b"])), args.noise * 100, args.rounds,
           args.threads))


if __name__ == "__main__":
    main()
