#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The multicast half of bench/cluster60 (TOCS'21 7.4.2 (b)): one multicast
Identify to N subscribers vs N unicast Identify commands.

  mcast-report.py DIR

DIR (bench/out/cluster60/raw/multicast) holds what bench/cluster60 gathered:
  tree.json        `smartio route --json` of the controller's write into the
                   group: its hops up to the ingress switch and the switches'
                   fan-out tree (receivers with their switch, each link once)
  predict.D.json   `smartio predict path --json` of the controller's 4 KiB
                   write to the RAM of one receiver D switches deep
  mc.R.json        bench_identify --multicast, round R (1: cold, 2: warm)
  u.H.json         bench_identify on host H: each unicast command's time
  wall.json        wall times of the two series (CLI processes included)
  topo.json        `smartio topo --json` (switch names)
  same.txt         how many hosts' copies (both rounds) equal the unicast Identify

Bytes per link are computed from the fan-out tree, not counted: the emulated
fabric moves bytes through shared memory and keeps no per-link counters.
Multicast: every link of the tree carries the write once. Unicast: the write to
receiver R crosses the ingress cable, the cascades from the ingress switch to
R's switch and R's cable, so a link carries one copy per receiver behind it.
Payload bytes (4096 per copy) and wire bytes (TLP headers and framing, from the
model's wire_bytes) are both given.

The model's predictions combine `smartio predict path` of the deepest
receiver's route the way timing_multicast() does (src/fabric/timing_mcast.c):
multicast = the slowest root-to-receiver path; unicast = that path plus
(N - 1) serialisations of the 4 KiB at the path's sustained bandwidth.

Prints one JSON object; writes DIR/links.dat and DIR/times.dat for the plot.
"""
import glob
import json
import os
import sys


def load(p):
    with open(p) as f:
        return json.load(f)


def main(d):
    tree = load(os.path.join(d, "tree.json"))["multicast"]
    wall = load(os.path.join(d, "wall.json"))
    mc1 = load(os.path.join(d, "mc.1.json"))     # cold: first window, first maps
    mc = load(os.path.join(d, "mc.2.json"))
    uni = [load(p) for p in sorted(glob.glob(os.path.join(d, "u.*.json")))]
    with open(os.path.join(d, "same.txt")) as f:
        same = int(f.read().split()[0])
    preds = {int(p.rsplit(".", 2)[-2]): load(p) for p in glob.glob(os.path.join(d, "predict.*.json"))}
    names = {}
    if os.path.exists(os.path.join(d, "topo.json")):
        names = {i: c["name"] for i, c in enumerate(load(os.path.join(d, "topo.json"))["cswitches"])}
    sw = lambda i: names.get(i, f"switch {i}")
    recv = tree["receivers"]
    n = len(recv)
    size = 4096
    ingress = tree["ingress_switch"]
    # Tree links, outward from the ingress switch; who is behind each one.
    up = {}                      # switch -> the cascade link that feeds it
    for i, l in enumerate(tree["links"]):
        if l["kind"] == "cascade":
            up[l["to_switch"]] = i
    behind = [0] * len(tree["links"])
    for r in recv:
        # every receiver is behind the ingress cable, its cascades, its cable
        for i, l in enumerate(tree["links"]):
            if l["kind"] == "ingress" or (l["kind"] == "egress" and l["host"] == r["host"]):
                behind[i] += 1
        s = r["switch"]
        while s != ingress:
            i = up[s]
            behind[i] += 1
            s = tree["links"][i]["from_switch"]
    deepest = max(preds)
    worst = preds[deepest]
    wire = worst["wire_bytes"]          # the same TLPs on every link
    links = []
    for i, l in enumerate(tree["links"]):
        name = {"ingress": lambda: f"host {l['host']} -> {sw(l['to_switch'])}",
                "cascade": lambda: f"{sw(l['from_switch'])} -> {sw(l['to_switch'])}",
                "egress": lambda: f"{sw(l['from_switch'])} -> host {l['host']}"}[l["kind"]]()
        links.append({"kind": l["kind"], "link": name, "gen": l["gen"], "width": l["width"],
                      "receivers_behind": behind[i],
                      "multicast_bytes": size, "multicast_wire_bytes": wire,
                      "unicast_bytes": size * behind[i], "unicast_wire_bytes": wire * behind[i]})
    uni_us = [u["us"] for u in uni]
    model_mc_ns = max(p["latency_ns"] for p in preds.values())
    model_uni_ns = model_mc_ns + (n - 1) * size / worst["bw_gbs"]
    out = {
        "status": "ok",
        "group": tree["group"], "receivers": n, "tree_links": len(links), "size": size,
        "copies_equal_unicast": same,
        "measured": {
            "multicast": {"command_us": mc["us"], "wall_s": wall["multicast_s"]},
            "multicast_first": {"command_us": mc1["us"], "wall_s": wall["multicast_first_s"]},
            "unicast": {"commands": len(uni), "command_us_sum": sum(uni_us),
                        "command_us_median": sorted(uni_us)[len(uni_us) // 2] if uni_us else None,
                        "wall_s": wall["unicast_s"]},
            "unicast_over_multicast_command": sum(uni_us) / mc["us"] if mc["us"] else None,
            "unicast_over_multicast_wall": wall["unicast_s"] / wall["multicast_s"]
            if wall["multicast_s"] else None,
        },
        "bytes": {
            "source": "computed from the fan-out tree (smartio route): the emulated fabric "
                      "keeps no per-link byte counters",
            "multicast_total": size * len(links), "multicast_wire_total": wire * len(links),
            "unicast_total": sum(x["unicast_bytes"] for x in links),
            "unicast_wire_total": sum(x["unicast_wire_bytes"] for x in links),
            "max_link_multicast": size, "max_link_unicast": max(x["unicast_bytes"] for x in links),
            "links": links,
        },
        "model": {
            "multicast_ns": model_mc_ns, "unicast_ns": model_uni_ns,
            "ratio": model_uni_ns / model_mc_ns,
            "path_bw_gbs": worst["bw_gbs"], "wire_bytes_per_link": wire,
            "paths": {str(k): {"latency_ns": v["latency_ns"], "bw_gbs": v["bw_gbs"],
                               "nhops": v["nhops"]} for k, v in sorted(preds.items())},
            "how": "smartio predict path of the controller's 4 KiB write to a receiver's RAM "
                   "per depth, combined as timing_multicast() does",
        },
    }
    with open(os.path.join(d, "links.dat"), "w") as f:
        f.write("# index kind multicast_bytes unicast_bytes\n")
        order = {"ingress": 0, "cascade": 1, "egress": 2}
        for i, x in enumerate(sorted(links, key=lambda x: order[x["kind"]])):
            f.write(f"{i} {x['kind']} {x['multicast_bytes']} {x['unicast_bytes']}\n")
    with open(os.path.join(d, "times.dat"), "w") as f:
        f.write("# x unicast_us multicast_us (0: measured commands, 1: model)\n")
        f.write(f"0 {sum(uni_us)} {mc['us']}\n1 {model_uni_ns / 1e3} {model_mc_ns / 1e3}\n")
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
