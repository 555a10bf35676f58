#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Report of bench/vm: reads the fio JSON of every pass, `smartio vm stats`
and `smartio predict figure smartio-fig31 --json`, and writes vm.txt (also
printed), vm.json, and the gnuplot scripts + data for vm.png and
vm-fig31.png.

usage: vm-report.py WORKDIR OUTDIR SECONDS PASSES ACCEL VM_SKIP NPROC LOADAVG
"""
import json
import os
import sys

ROWS = [  # key, label
    ("vm", "VM: guest's Linux nvme driver (MDEV)"),
    ("kernel", "bare metal: host's in-kernel driver (Device Lending)"),
    ("user", "bare metal: distributed userspace driver (fio engine)"),
]


def fio_result(path):
    with open(path) as f:
        d = json.load(f)
    job = d["jobs"][0]
    if job.get("error"):
        raise SystemExit(f"bench/vm: {path}: fio job error {job['error']}")
    r = job["read"]
    lat = r["lat_ns"]
    pct = lat.get("percentile", {})
    return {"iops": r["iops"], "p50_us": pct.get("50.000000", 0) / 1e3,
            "p99_us": pct.get("99.000000", 0) / 1e3, "mean_us": lat["mean"] / 1e3,
            "ios": r["total_ios"]}


def collect(work):
    res = {}
    for key, _label in ROWS:
        for qd in (1, 32):
            runs = [fio_result(os.path.join(work, n)) for n in sorted(os.listdir(work))
                    if n.startswith(f"{key}_qd{qd}.r") and n.endswith(".json")]
            if not runs:
                continue
            # the pass with the median IOPS stands for the row; spread = min..max
            runs.sort(key=lambda x: x["iops"])
            pick = dict(runs[(len(runs) - 1) // 2])
            pick["passes_iops"] = [round(x["iops"]) for x in runs]
            pick["passes_p50_us"] = sorted(round(x["p50_us"], 1) for x in runs)
            res.setdefault(key, {})[f"qd{qd}"] = pick
    return res


def vm_stats(work):
    """The last pass's `vm stats` of the VM's device (messages, interrupts)."""
    names = sorted(n for n in os.listdir(work) if n.startswith("vmstats.r"))
    for n in reversed(names):
        try:
            with open(os.path.join(work, n)) as f:
                d = json.load(f)
        except (OSError, ValueError):
            continue
        if d:
            return d[0]
    return None


def fig31(work):
    with open(os.path.join(work, "fig31.json")) as f:
        fig = json.load(f)["figures"][0]
    plateau = {s["label"]: s["points"][-1][1] for s in fig["model"]}
    at4k = {s["label"]: s["points"][0][1] for s in fig["model"]}
    return fig, plateau, at4k


def fmt(v, spec):
    return format(v, spec) if v is not None else "-"


def main():
    work, out, secs, passes, accel, vm_skip, nproc, load = sys.argv[1:9]
    res = collect(work)
    stats = vm_stats(work)
    fig, plateau, at4k = fig31(work)

    def get(key, qd, field):
        r = res.get(key, {}).get(f"qd{qd}")
        return r[field] if r else None

    def ratio(a, b):
        return a / b if a and b else None

    emulated = accel.lower() != "kvm"
    lines = [f"# bench/vm: 4 KiB random reads of lender-b's NVMe (default cluster, lender "
             f"IOMMU on), {secs} s per point, {passes} interleaved passes, {nproc} CPUs, "
             f"load after {load}",
             "# IOPS and p50: the pass with the median IOPS; spread: min..max IOPS over "
             "the passes"]
    if vm_skip:
        lines.append(f"# VM row skipped: {vm_skip}")
    else:
        lines.append(f"# VM: QEMU accelerator {accel.upper()}" +
                     (" - the guest's CPU is emulated: NOT a performance figure"
                      if emulated else ""))
    lines.append(f"{'driver':<56} {'QD':>3} {'IOPS':>9} {'p50 us':>9} {'p99 us':>9} "
                 f"{'spread (IOPS)':>17}")
    for key, label in ROWS:
        if key == "vm" and not vm_skip:
            label += f" [{accel.upper()}]"
        for qd in (1, 32):
            r = res.get(key, {}).get(f"qd{qd}")
            if not r:
                lines.append(f"{label:<56} {qd:>3} {'skipped':>9}")
                continue
            sp = f"{r['passes_iops'][0]}..{r['passes_iops'][-1]}"
            lines.append(f"{label:<56} {qd:>3} {r['iops']:>9.0f} {r['p50_us']:>9.1f} "
                         f"{r['p99_us']:>9.1f} {sp:>17}")
    ratios = {}
    for qd in (1, 32):
        ratios[f"qd{qd}"] = {
            "vm_over_kernel_iops": ratio(get("vm", qd, "iops"), get("kernel", qd, "iops")),
            "vm_over_user_iops": ratio(get("vm", qd, "iops"), get("user", qd, "iops")),
            "user_over_kernel_iops": ratio(get("user", qd, "iops"), get("kernel", qd, "iops")),
        }
        q = ratios[f"qd{qd}"]
        lines.append(f"ratios QD{qd:<2} IOPS: vm/kernel {fmt(q['vm_over_kernel_iops'], '.2f')}, "
                     f"vm/user {fmt(q['vm_over_user_iops'], '.2f')}, "
                     f"user/kernel {fmt(q['user_over_kernel_iops'], '.2f')}")
    if stats:
        ios = sum(get("vm", qd, "ios") or 0 for qd in (1, 32))
        lines.append(f"vm stats (last pass, after both fio runs): {stats.get('messages')} "
                     f"messages to the MDEV parent ({stats.get('bars')} BARs, "
                     f"{stats.get('vectors')} vectors, at start), {stats.get('interrupts')} "
                     f"interrupts relayed, for {ios} reads measured")

    lines.append("")
    lines.append(f"# the timing model, {fig['source']}: {fig['title']}")
    lines.append("# (real PCIe hardware as the paper's: K40c DMA of the borrower's RAM; "
                 "smartio predict figure smartio-fig31)")
    lines.append(f"{'scenario':<16} {'model 4 KiB':>12} {'model 128 MiB':>14}  paper")
    stated = {c["id"]: c["stated"] for c in fig.get("paper", [])}
    paper_says = {
        "no-IOMMU read": f"{stated.get('iommu-off-read', '-')} GB/s",
        "IOMMU read": f"{stated.get('iommu-on-read', '-')} GB/s (\"a little over 1.5\")",
        "MDEV read": "\"almost identical\" to IOMMU (no number)",
        "no-IOMMU write": "no number",
        "IOMMU write": "drops, \"not as bad as reads\"",
        "MDEV write": "\"almost identical\" to IOMMU",
    }
    for s in fig["model"]:
        lab = s["label"]
        lines.append(f"{lab:<16} {at4k[lab]:>8.3f} GB/s {plateau[lab]:>9.3f} GB/s  "
                     f"{paper_says.get(lab, '')}")
    mdev_vs_bm = {rw: ratio(plateau.get(f"MDEV {rw}"), plateau.get(f"IOMMU {rw}"))
                  for rw in ("read", "write")}
    lines.append(f"model MDEV / bare-metal IOMMU: read {fmt(mdev_vs_bm['read'], '.3f')}, "
                 f"write {fmt(mdev_vs_bm['write'], '.3f')} (same data path: the parent is "
                 f"on the control path only)")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(os.path.join(out, "vm.txt"), "w") as f:
        f.write(text)

    doc = {"seconds": float(secs), "passes": int(passes), "nproc": int(nproc),
           "loadavg": load, "accelerator": None if vm_skip else accel,
           "vm_is_performance_figure": (not vm_skip) and not emulated,
           "vm_skipped": vm_skip or None, "results": res, "ratios": ratios,
           "vm_stats": stats,
           "fig31_model": {"source": fig["source"], "plateau_gbs": plateau,
                           "at_4k_gbs": at4k, "mdev_over_iommu": mdev_vs_bm,
                           "paper": fig.get("paper", [])}}
    with open(os.path.join(out, "vm.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")

    # vm.png: IOPS per driver at QD1 and QD32 (log scale: they span decades).
    with open(os.path.join(out, "vm.dat"), "w") as f:
        f.write("# driver qd1_iops qd32_iops qd1_min qd1_max qd32_min qd32_max\n")
        for key, _label in ROWS:
            v = [get(key, qd, "iops") or 0 for qd in (1, 32)]
            sp = []
            for qd in (1, 32):
                p = res.get(key, {}).get(f"qd{qd}", {}).get("passes_iops", [0])
                sp += [p[0], p[-1]]
            name = f"vm-{accel.upper()}" if key == "vm" else key
            f.write(f"{name} {v[0]:.0f} {v[1]:.0f} {sp[0]} {sp[1]} {sp[2]} {sp[3]}\n")
    with open(os.path.join(out, "vm.gp"), "w") as f:
        f.write(f"""set terminal pngcairo size 900,500
set output '{out}/vm.png'
set title "4 KiB random reads, one NVMe, three drivers (VM under {accel.upper()}: not a performance figure)"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.6 border -1
set logscale y
set ylabel "IOPS (median pass; bars: min..max)"
set key top left
plot '{out}/vm.dat' using 2:4:5:xtic(1) title "QD1", '' using 3:6:7 title "QD32"
""")
    # vm-fig31.png: the model's curves (reads and writes), fig. 31's three scenarios.
    with open(os.path.join(out, "vm-fig31.dat"), "w") as f:
        f.write("# size_bytes " + " ".join(s["label"].replace(" ", "_")
                                           for s in fig["model"]) + "\n")
        for i in range(len(fig["model"][0]["points"])):
            f.write(f"{fig['model'][0]['points'][i][0]:.0f} " +
                    " ".join(f"{s['points'][i][1]:.4f}" for s in fig["model"]) + "\n")
    plots = []
    for i, s in enumerate(fig["model"]):
        dash = "dt 2 lw 3" if s["label"].startswith("MDEV") else "lw 2"
        plots.append(f"'{out}/vm-fig31.dat' using 1:{i + 2} with lines {dash} "
                     f"title \"{s['label']} (model)\"")
    for c in fig.get("paper", []):
        plots.append(f"'+' using ({128 * 1024 * 1024}):({c['stated']}) every ::0::0 with points "
                     f"pt 7 ps 1.5 title \"paper: {c['id']} {c['stated']} GB/s\"")
    with open(os.path.join(out, "vm-fig31.gp"), "w") as f:
        f.write(f"""set terminal pngcairo size 900,500
set output '{out}/vm-fig31.png'
set title "SmartIO fig. 31 by the timing model: bare metal, lender IOMMU off / on, vs MDEV"
set logscale x 2
set format x "%.0s%cB"
set xlabel "transfer size"
set ylabel "GB/s"
set key right center
plot {", ".join(plots)}
""")


if __name__ == "__main__":
    main()
