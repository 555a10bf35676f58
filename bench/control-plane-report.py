#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Report of bench/control-plane: medians per cell over the passes, spreads,
after/before ratios; writes result.json, result.txt (also printed) and, with
gnuplot, result.png. Can be re-run on a kept raw.json.

usage: control-plane-report.py RAW.json OUTDIR [--no-plot]
Exit status: 0, or 1 when some operation failed in the runs.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

METRICS = ("ops_per_s", "p50_us", "p99_us", "max_us")
TOPO_LABEL = {"default": "default (3 hosts)", "cluster-60": "cluster-60 (60 hosts)"}


def quantile(xs, q):
    """Linear-interpolation quantile of a non-empty sorted list."""
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values):
    xs = sorted(values)
    return {"median": statistics.median(xs), "min": xs[0], "max": xs[-1],
            "q1": quantile(xs, 0.25), "q3": quantile(xs, 0.75), "values": values}


def paired(runs):
    """{(topo, clients, phase): {metric: [after/before of each pass]}}: the two
    builds of a pass ran back to back, so their ratio cancels slow drifts."""
    by = {}
    for r in runs:
        for ph in r["report"]["phases"]:
            by[(r["topology"], r["clients"], ph["phase"], r["pass"], r["variant"])] = ph["all"]
    out = {}
    for (topo, clients, phase, pas, variant), a in by.items():
        b = by.get((topo, clients, phase, pas, "before"))
        if variant != "after" or not b:
            continue
        d = out.setdefault((topo, clients, phase), {m: [] for m in METRICS})
        for m in METRICS:
            if b[m] and (m == "ops_per_s" or (a["n"] and b["n"])):
                d[m].append(a[m] / b[m])
    return out


def collect(runs):
    """{(topo, clients, phase): {variant: {metric: [per pass], errors, first_error, calls}}}"""
    cells = {}
    for r in runs:
        for ph in r["report"]["phases"]:
            key = (r["topology"], r["clients"], ph["phase"])
            v = cells.setdefault(key, {}).setdefault(r["variant"], {
                "ops_per_s": [], "p50_us": [], "p99_us": [], "max_us": [], "errors": 0, "error": "",
                "calls": {}})
            v["ops_per_s"].append(ph["all"]["ops_per_s"])
            # A pass in which no op completed has no latency (not 0).
            if ph["all"]["n"]:
                for m in ("p50_us", "p99_us", "max_us"):
                    v[m].append(ph["all"][m])
            v["errors"] += ph["errors"]
            v["error"] = v["error"] or ph["error"]
            for name, c in ph["calls"].items():
                d = v["calls"].setdefault(name, {"p50_us": [], "p99_us": [], "ops_per_s": []})
                for m in ("p50_us", "p99_us", "ops_per_s"):
                    d[m].append(c[m])
    return cells


def ratio(a, b):
    return a / b if b else None


def build_cells(cells, order, pairs):
    out = []
    for key in order:
        topo, clients, phase = key
        c = {"topology": topo, "clients": clients, "phase": phase}
        for variant in ("after", "before"):
            v = cells[key].get(variant)
            if not v:
                continue
            c[variant] = {m: summary(v[m]) if v[m] else None for m in METRICS}
            c[variant]["errors"] = v["errors"]
            c[variant]["first_error"] = v["error"]
            c[variant]["calls"] = {n: {m: statistics.median(d[m]) for m in d}
                                   for n, d in sorted(v["calls"].items())}
        if "after" in c and "before" in c:
            c["ratio"] = {m: ratio(c["after"][m]["median"], c["before"][m]["median"])
                          if c["after"][m] and c["before"][m] else None for m in METRICS}
            c["paired_ratio"] = {m: summary(v) for m, v in pairs.get(key, {}).items() if v}
        out.append(c)
    return out


def fmt_num(x):
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_spread(s):
    if not s:
        return "-"
    return f"{fmt_num(s['median'])} [{fmt_num(s['min'])}-{fmt_num(s['max'])}]"


def table(meta, cells):
    cfg = meta["config"]
    lines = [
        f"control plane, {meta['date']}: after = {meta['after']['tree']} "
        f"({meta['after']['buildtype']}), before = {meta['before']['ref']} "
        f"({str(meta['before']['commit'])[:12]})",
        f"{cfg['passes']} passes per build (alternating), phases of {cfg['duration_s']} s "
        f"after {cfg['warmup_s']} s warm-up; ROUTE "
        f"{'through' if cfg['route_cached'] else 'bypassing'} the route cache; "
        f"{'peer connections opened first' if cfg.get('primed', True) else 'not primed'}; "
        f"{meta['machine']['cpus']} CPUs, load {meta['machine']['loadavg_start']:.2f} at start",
        "median [min-max] over the passes; ratio = after / before of the medians, "
        "(min-max) of the passes' own ratios",
        "(ops/s: > 1 is better; latency: < 1 is better)",
        "",
        f"{'cluster':<11}{'cl':>3} {'op':<7}| {'ops/s after':>22} {'ops/s before':>22} "
        f"{'ratio':>17} | {'p50 us after':>13} {'before':>8} {'ratio':>6} | "
        f"{'p99 us after':>22} {'p99 before':>22} {'ratio':>17}",
    ]
    prev = None
    notes = []
    for c in cells:
        if prev and (prev["topology"], prev["clients"]) != (c["topology"], c["clients"]):
            lines.append("")
        prev = c
        a, b, r = c.get("after"), c.get("before"), c.get("ratio", {})
        pr = c.get("paired_ratio", {})

        def rat(m):
            if m not in pr:
                return fmt_num(r.get(m))
            return f"{fmt_num(r.get(m))} ({pr[m]['min']:.2f}-{pr[m]['max']:.2f})"
        err = ""
        for variant in ("after", "before"):
            v = c.get(variant)
            if v and v["errors"]:
                err = "  *"
                notes.append(f"  {c['topology']} {c['clients']} clients {c['phase']}, {variant}: "
                             f"{v['errors']} failed ops; first: {v['first_error']}")
        lines.append(
            f"{c['topology']:<11}{c['clients']:>3} {c['phase']:<7}| "
            f"{fmt_spread(a['ops_per_s']) if a else '-':>22} "
            f"{fmt_spread(b['ops_per_s']) if b else '-':>22} "
            f"{rat('ops_per_s'):>17} | "
            f"{fmt_num(a['p50_us']['median']) if a and a['p50_us'] else '-':>13} "
            f"{fmt_num(b['p50_us']['median']) if b and b['p50_us'] else '-':>8} "
            f"{fmt_num(r.get('p50_us')):>6} | "
            f"{fmt_spread(a['p99_us']) if a else '-':>22} "
            f"{fmt_spread(b['p99_us']) if b else '-':>22} "
            f"{rat('p99_us'):>17}{err}")
    if notes:
        lines += ["", "* operations failed (a pass without any completed op counts 0 ops/s "
                  "and no latency):"] + notes
    return "\n".join(lines) + "\n"


def plot(meta, cells, out):
    """ops/s and p99 vs clients, after (solid) vs before (dashed), per cluster."""
    gp = shutil.which("gnuplot")
    if not gp:
        print("control-plane: gnuplot is missing; no PNG (make deps)", file=sys.stderr)
        return
    topos = meta["config"]["topologies"]
    phases = meta["config"]["phases"]
    dat = os.path.join(out, "result.dat")
    series = []   # (index, topo, phase, variant)
    with open(dat, "w") as f:
        f.write("# clients ops_med ops_min ops_max p99_med p99_min p99_max (ms)\n")
        for topo in topos:
            for phase in phases:
                for variant in ("after", "before"):
                    rows = [c for c in cells if c["topology"] == topo and c["phase"] == phase
                            and variant in c]
                    if not rows:
                        continue
                    f.write(f"# {topo} {phase} {variant}\n")
                    for c in sorted(rows, key=lambda c: c["clients"]):
                        v = c[variant]
                        o, p = v["ops_per_s"], v["p99_us"]
                        lat = (f"{p['median'] / 1e3} {p['min'] / 1e3} {p['max'] / 1e3}" if p
                               else "NaN NaN NaN")
                        f.write(f"{c['clients']} {o['median']} {o['min']} {o['max']} {lat}\n")
                    f.write("\n\n")
                    series.append((len(series), topo, phase, variant))
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
    png = os.path.join(out, "result.png")
    g = [f'set terminal pngcairo size 1400,{420 * len(topos) + 60} font ",10"',
         f'set output "{png}"',
         f'set multiplot layout {len(topos)},2 title "smartiod control plane: after '
         f'{meta["after"]["tree"]} (solid) vs before {meta["before"]["ref"]} (dashed), '
         f'median and min-max of {meta["config"]["passes"]} passes"',
         "set logscale xy", "set grid", "set xlabel 'concurrent clients'",
         f"set xtics ({', '.join(str(n) for n in meta['config']['clients'])})",
         "set key outside right top", "set offsets graph 0.05, graph 0.05, 0, 0"]
    for topo in topos:
        for col, ylabel in ((1, "operations per second"), (4, "p99 latency (ms)")):
            title = TOPO_LABEL.get(topo, topo)
            g.append(f"set title '{title}: {'throughput' if col == 1 else 'p99 latency'}'")
            g.append(f"set ylabel '{ylabel}'")
            g.append("unset key" if col == 1 else "set key outside right top")
            parts = []
            for idx, t, phase, variant in series:
                if t != topo:
                    continue
                color = colors[phases.index(phase) % len(colors)]
                dash = 1 if variant == "after" else 2
                label = f"{phase} {variant}"
                parts.append(f'"{dat}" index {idx} using 1:{col + 1}:{col + 2}:{col + 3} '
                             f'with yerrorlines lw 1.5 dt {dash} lc rgb "{color}" '
                             f'title "{label}"')
            g.append("plot " + ", \\\n     ".join(parts))
    g.append("unset multiplot")
    script = os.path.join(out, "result.gp")
    with open(script, "w") as f:
        f.write("\n".join(g) + "\n")
    p = subprocess.run([gp, script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, check=False)
    if p.returncode:
        print(f"control-plane: gnuplot failed:\n{p.stdout}", file=sys.stderr)
    else:
        print(f"control-plane: plot in {png}", file=sys.stderr)


def main():
    args = [x for x in sys.argv[1:] if x != "--no-plot"]
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    raw, out = args
    with open(raw) as f:
        d = json.load(f)
    meta, runs = d["meta"], d["runs"]
    grouped = collect(runs)
    order = sorted(grouped, key=lambda k: (meta["config"]["topologies"].index(k[0]), k[1],
                                           meta["config"]["phases"].index(k[2])))
    cells = build_cells(grouped, order, paired(runs))
    text = table(meta, cells)
    errors = sum(c[v]["errors"] for c in cells for v in ("after", "before") if v in c)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "result.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump({**meta, "errors": errors, "cells": cells, "runs": runs}, f, indent=1)
    sys.stdout.write(text)
    if "--no-plot" not in sys.argv:
        plot(meta, cells, out)
    print(f"control-plane: results in {out}/result.{{json,txt"
          f"{',png' if '--no-plot' not in sys.argv else ''}}}", file=sys.stderr)
    if errors:
        print(f"control-plane: {errors} operations failed; see the table", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
