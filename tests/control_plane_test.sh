#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/control-plane and its load generator bench_ctl, end to end but short:
# every op kind succeeds against real daemons with the CLIENT role only, the
# report is complete, and the driver's before/after pipeline (here A/A: the
# same build on both sides) writes its JSON and table and leaves nothing up.
# What the numbers are is not tested: these are measurements.
set -euo pipefail
. "$(dirname "$0")/tap.sh"

CTL=$(realpath "$BUILD/bench/bench_ctl")
J=$WORK/ctl.json

check "cluster up" "$SMARTIO" cluster up
check "bench_ctl: 4 clients, every phase, no failed op" \
	sh -c "'$CTL' --dir '$SMARTIO_CLUSTER' --clients 4 --duration 0.15 --warmup 0.05 --json >'$J'"
json_check "report: 3 hosts, 4 clients spread from the last host, partner the next host" "$J" \
	'd["hosts"] == 3 and d["clients"] == 4 and d["placement"] == [[2, 0], [1, 2], [0, 1], [2, 0]]'
json_check "every phase ran ops and none failed" "$J" \
	'([p["phase"] for p in d["phases"]] == ["route", "lspci", "seg", "borrow", "mix"] and
	  all(p["all"]["n"] > 0 and p["errors"] == 0 for p in d["phases"]))'
json_check "each op sends what it should" "$J" \
	'[sorted(p["calls"]) for p in d["phases"][:4]] == [["ROUTE"], ["CFG_DUMP", "FUNC_LIST"],
	 ["SEG_AVAILABLE", "SEG_CONNECT", "SEG_CREATE", "SEG_DISCONNECT", "SEG_REMOVE"],
	 ["DEV_BORROW", "DEV_LIST", "DEV_RETURN"]]'
json_check "the mix runs all four kinds" "$J" \
	'sorted(d["phases"][4]["by_op"]) == ["borrow", "lspci", "route", "seg"]'
json_check "latencies are ordered: p50 <= p99 <= max" "$J" \
	'all(0 < p["all"]["p50_us"] <= p["all"]["p99_us"] <= p["all"]["max_us"] for p in d["phases"])'
check_fails "bench_ctl without a cluster fails (exit 3)" "$CTL" --dir "$WORK/none" --clients 1
check "cluster down" "$SMARTIO" cluster down

D=$WORK/cp
mkdir "$WORK/tmp"
check "bench/control-plane A/A, one pass" env TMPDIR="$WORK/tmp" \
	"$SRC/bench/control-plane" "$BUILD" --no-build \
	--before-build "$BUILD" --passes 1 --clients 2 --topologies default --phases route,seg \
	--duration 0.1 --warmup 0 --no-plot --out "$D"
expect "it prints the table with ratios" '^default +2 route +\|' '^default +2 seg +\|' \
	'ratio = after / before'
json_check "result.json: after and before of every cell, a ratio, no errors" "$D/result.json" \
	'(len(d["cells"]) == 2 and d["errors"] == 0 and
	  all("after" in c and "before" in c and c["ratio"]["ops_per_s"] > 0 for c in d["cells"]))'
check "result.txt written" test -s "$D/result.txt"
check "its clusters are down and their directories gone" sh -c \
	"[ -z \"\$(ls -A '$WORK/tmp')\" ] && ! pgrep -f '[s]martiod --cluster $WORK/tmp/' >/dev/null"
check_fails "an unknown phase is a usage error" "$SRC/bench/control-plane" --phases nope
tap_done
