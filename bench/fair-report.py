#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fair sharing of one NVMe controller: shares from the controller's own
per-SQ fetch counts (two `smartio-nvme arbstat --json` snapshots taken while
every client runs) and per-client IOPS/latency from `smartio-nvme bench
--json` outputs. Used by tests/nvme_fair_test.sh and bench/cluster60.

  fair-report.py BEFORE AFTER [CLIENT.json ...] [--label L]
                 [--jain-min X] [--ratio HI/LO=R ...] [--tol F] [--starve K]

Prints one JSON object. Exit 1 if a given check fails:
  --jain-min X    Jain's index over the per-SQ shares of each class >= X
  --ratio A/B=R   mean per-SQ share of class A over class B within R*(1 +- tol)
  --starve K      max client p99 <= K * median client p99
"""
import json
import statistics
import sys


def jain(xs):
    xs = [float(x) for x in xs]
    if not xs or sum(xs) == 0:
        return 0.0
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def main(argv):
    pos, jain_min, ratios, tol, starve, label = [], None, [], 0.10, None, ""
    it = iter(argv)
    for a in it:
        if a == "--jain-min":
            jain_min = float(next(it))
        elif a == "--ratio":
            k, v = next(it).split("=")
            hi, lo = k.split("/")
            ratios.append((hi, lo, float(v)))
        elif a == "--tol":
            tol = float(next(it))
        elif a == "--starve":
            starve = float(next(it))
        elif a == "--label":
            label = next(it)
        else:
            pos.append(a)
    if len(pos) < 2:
        sys.exit(__doc__)
    with open(pos[0]) as f:
        before = json.load(f)
    with open(pos[1]) as f:
        after = json.load(f)
    b = {s["sqid"]: s["fetched"] for s in before["sqs"]}
    sqs = []
    for s in after["sqs"]:
        if s["sqid"] in b:
            sqs.append({"sqid": s["sqid"], "prio": s["prio"],
                        "fetched": s["fetched"] - b[s["sqid"]]})
    rr = after["arbitration"] == "rr"
    total = sum(s["fetched"] for s in sqs) or 1
    classes = {}
    for s in sqs:
        classes.setdefault("all" if rr else s["prio"], []).append(s["fetched"])
    out = {"label": label, "arbitration": after["arbitration"],
           "weights": [after["weight_high"], after["weight_medium"], after["weight_low"]],
           "window_fetched": total, "sqs": sqs, "classes": {}, "checks": []}
    for c, xs in classes.items():
        out["classes"][c] = {"sqs": len(xs), "share": sum(xs) / total,
                             "mean_per_sq": sum(xs) / len(xs), "jain": jain(xs)}
    clients = []
    for p in pos[2:]:
        with open(p) as f:
            try:
                j = json.load(f)
            except ValueError:
                continue
        clients.append({"file": p, "qpair": j["qpair"], "prio": j.get("prio"),
                        "iops": j["iops"], "ios": j["ios"], "errors": j["errors"],
                        "p50_us": j["lat_us"]["p50"], "p99_us": j["lat_us"]["p99"],
                        "max_us": j["lat_us"]["max"]})
    out["clients"] = clients
    if clients:
        by_cls = {}
        for c in clients:
            by_cls.setdefault(c["prio"], []).append(c["iops"])
        out["client_iops"] = {k: {"n": len(v), "mean": statistics.mean(v), "jain": jain(v)}
                              for k, v in by_cls.items()}
        out["aggregate_iops"] = sum(c["iops"] for c in clients)
        p99 = [c["p99_us"] for c in clients]
        out["p99_median_us"] = statistics.median(p99)
        out["p99_max_us"] = max(p99)
        out["max_us"] = max(c["max_us"] for c in clients)
    ok = True

    def check(name, good, value):
        nonlocal ok
        out["checks"].append({"check": name, "value": value, "ok": bool(good)})
        ok = ok and good

    if jain_min is not None:
        for c, v in out["classes"].items():
            if v["sqs"] > 1:
                check(f"jain({c}) >= {jain_min}", v["jain"] >= jain_min, round(v["jain"], 4))
    for hi, lo, r in ratios:
        h, l = out["classes"].get(hi), out["classes"].get(lo)
        got = h["mean_per_sq"] / l["mean_per_sq"] if h and l and l["mean_per_sq"] else 0
        check(f"{hi}/{lo} = {r} +- {tol:.0%}", abs(got - r) <= r * tol, round(got, 3))
    if starve is not None and clients:
        check(f"max p99 <= {starve} x median p99",
              out["p99_max_us"] <= starve * out["p99_median_us"],
              round(out["p99_max_us"] / out["p99_median_us"], 3))
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
