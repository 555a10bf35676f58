#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# smartio plan and borrow --best (docs/cli.md) on the default cluster
# (borrower 0 with an IOMMU; lender-a 1: nvme0, gpu0, gpu1 under its PEX8796
# switch, no IOMMU; lender-b 2: nvme0, gpu0 on root ports, IOMMU on):
#   the acceptance case (accel,accel for p2p-read picks lender-a's two GPUs),
#   its JSON and bottleneck, the ranking against the timing model's own
#   same-vs-different-lender figures (smartio-fig26/27, which bench/figures
#   prints beside the emulated P2P runs), devices lent to others left out,
#   nothing available (exit 1), usage errors (exit 2, the valid choices
#   listed), and borrow --best taking what plan ranks first.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

GPU_A0=0x00080500 GPU_A1=0x00080600 NVME_A=0x00080400 NVME_B=0x000c0200

check "cluster up (default topology)" "$SMARTIO" cluster up

# --- the acceptance case ---
check "plan --need accel,accel --host 0 --for p2p-read" \
	"$SMARTIO" plan --need accel,accel --host 0 --for p2p-read
expect "rank 1 is lender-a's gpu0 + gpu1" \
	"^1 +lender-a:gpu[01] \\(0x00080[56]00\\) \\+ lender-a:gpu[01] \\(0x00080[56]00\\)"
expect "the bottleneck hop is named (a link between two named hops)" \
	"^1 .* lender-a\\.gpu[01] → lender-a\\.chassis \\(Gen3 x16\\)"
expect "an explanation with the numbers" "^For p2p-read, host 0 \\(borrower\\) should use" \
	"Predicted [0-9]+ ns per 64-byte read and [0-9.]+ GB/s" "The next best"

check "plan --json" "$SMARTIO" plan --need accel,accel --host 0 --for p2p-read --json
cp "$OUT" "$WORK/p2p.json"
json_check "JSON: rank 1 = both accelerators of lender-a, ids as hex strings" "$WORK/p2p.json" \
	"(sorted(x['fdid'] for x in d['plans'][0]['devices']) == ['$GPU_A0', '$GPU_A1'] and
	  all(x['lender_name'] == 'lender-a' for x in d['plans'][0]['devices']))"
json_check "JSON: numbers, bottleneck, path, no NTB on the winner" "$WORK/p2p.json" \
	"(d['plans'][0]['latency_ns'] > 0 and d['plans'][0]['bw_gbs'] > 0 and
	  'lender-a.chassis' in d['plans'][0]['bottleneck'] and d['plans'][0]['ntbs'] == 0 and
	  d['plans'][1]['ntbs'] == 2 and d['for'] == 'p2p-read' and d['need'] == ['accel', 'accel'])"
json_check "JSON: ranks are 1.. in order, each pair once" "$WORK/p2p.json" \
	"([p['rank'] for p in d['plans']] == list(range(1, len(d['plans']) + 1)) and
	  len(d['plans']) == 3)"

# --- the ranking against the model's own figures (same vs different lenders) ---
"$SMARTIO" predict figure smartio-fig26 --json >"$WORK/fig26.json"
"$SMARTIO" predict figure smartio-fig27 --json >"$WORK/fig27.json"
for w in p2p-read p2p-write; do
	"$SMARTIO" plan --need accel,accel --host 0 --for "$w" --size 64K --json >"$WORK/$w.json"
	if python3 - "$WORK/$w.json" "$WORK/fig26.json" "$WORK/fig27.json" >"$OUT" 2>&1 <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
fig26 = json.load(open(sys.argv[2]))["figures"][0]["model"]
fig27 = json.load(open(sys.argv[3]))["figures"][0]["model"]
def series(fig, label):
    return next(s for s in fig if s["label"] == label)
def at(s, size):
    return next(y for x, y in s["points"] if x == size)
# The model's figures: same lender is faster (GB/s at 64 KiB) and quicker (ping-pong ns).
same_bw, diff_bw = (at(series(fig26, l), 65536) for l in ("same lender", "different lenders"))
same_ns, diff_ns = (series(fig27, l)["points"][0][1] for l in ("same lender", "different lenders"))
fig_same_first = same_bw > diff_bw and same_ns < diff_ns
kinds = ["same" if len({x["lender"] for x in p["devices"]}) == 1 else "diff"
         for p in plan["plans"]]
plan_same_first = kinds[0] == "same" and "diff" in kinds and \
    all(k == "diff" for k in kinds[kinds.index("diff"):])
print("figures same-first:", fig_same_first, "plan order:", kinds)
sys.exit(0 if fig_same_first == plan_same_first and plan_same_first else 1)
PY
	then ok "$w: same-lender pairs rank before cross-lender ones, as smartio-fig26/27 order them"
	else not_ok "$w: ranking agrees with smartio-fig26/27"; fi
done

# --- other workloads ---
check "plan --need nvme --for nvme-qd1" "$SMARTIO" plan --need nvme --host 0 --for nvme-qd1
expect "both NVMe drives ranked by latency, the bottleneck hop named" \
	"^1 +lender-[ab]:nvme0 .* ns .*\\(.*[0-9]+ ns\\)" "^2 +lender-[ab]:nvme0" \
	"per 4 KiB read"
check "plan --need nvme,accel --for p2p-write" \
	"$SMARTIO" plan --need nvme,accel --host 0 --for p2p-write --top 0
expect "an NVMe and an accelerator under one lender first" \
	"^1 +lender-a:nvme0 \\(0x00080400\\) \\+ lender-a:gpu[01]"
check "plan --need accel --for bandwidth" "$SMARTIO" plan --need accel --host 0 --for bandwidth
expect "the cable to the cluster switch limits every accelerator's DMA to host 0" \
	"^1 .*\\.ntb0 → mxs0 \\(Gen3 x8 cable\\)"

check "plan --need accel,accel --for bandwidth" \
	"$SMARTIO" plan --need accel,accel --host 0 --for bandwidth --json
cp "$OUT" "$WORK/bw2.json"
"$SMARTIO" plan --need accel --host 0 --for bandwidth --json >"$WORK/bw1.json"
json_check "two accelerators together: a cable both cross bounds them (no more than one)" \
	"$WORK/bw2.json" "(all(p['bottleneck'].endswith('(Gen3 x8 cable)') for p in d['plans']) and
	  d['plans'][1]['bottleneck'].endswith('borrower.ntb0 (Gen3 x8 cable)') and
	  'shared' in d['plans'][0]['limit'] and
	  abs(d['plans'][0]['bw_gbs'] - json.load(open('$WORK/bw1.json'))['plans'][0]['bw_gbs']) < 1e-3)"

# --- usage errors: exit 2 with the valid choices ---
set +e
"$SMARTIO" plan --need gpu --host 0 --for p2p-read >"$OUT" 2>&1; rc=$?
set -e
if [ "$rc" = 2 ] && has "unknown class 'gpu'" "valid: nvme, accel"; then
	ok "bad --need: exit 2, the classes listed"; else not_ok "bad --need: exit 2 ($rc)"; fi
set +e
"$SMARTIO" plan --need accel,accel --host 0 --for fastest >"$OUT" 2>&1; rc=$?
set -e
if [ "$rc" = 2 ] && has "unknown workload 'fastest'" "p2p-read, p2p-write, nvme-qd1, bandwidth"
then ok "bad --for: exit 2, the workloads listed"; else not_ok "bad --for: exit 2 ($rc)"; fi
set +e
"$SMARTIO" plan --need accel --host 0 --for p2p-read >"$OUT" 2>&1; rc=$?
set -e
if [ "$rc" = 2 ] && has "exactly two devices"; then ok "p2p with one device: exit 2"
else not_ok "p2p with one device: exit 2 ($rc)"; fi

# --- borrow --best borrows what plan ranks first ---
"$SMARTIO" plan --need nvme --host 0 --for nvme-qd1 --json >"$WORK/qd1.json"
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["plans"][0]["devices"][0]["fdid"])' \
	"$WORK/qd1.json")
check "borrow --best nvme --host 0" "$SMARTIO" borrow --best nvme --host 0
expect "it says its choice and borrows it" "best nvme for nvme-qd1 at host 0: nvme0 of lender-[ab] \\($first\\)" \
	"host 0: nvme0 from host [12] is f0:00\\.0, driver nvme"
check "devices" "$SMARTIO" devices --host 0
expect "plan's first choice is now lent to host 0" "^$first .* lent +host 0"
check "borrow --best nvme again: nothing to borrow (exit 0)" "$SMARTIO" borrow --best nvme --host 0
expect "it says host 0 already borrows it" "already borrows it: nothing to borrow"

# --- devices lent to others are left out, and said so ---
other=$([ "$first" = "$NVME_A" ] && echo "$NVME_B" || echo "$NVME_A")
check "plan at host 1 (lender-a)" "$SMARTIO" plan --need nvme --host 1 --for nvme-qd1
expect "the NVMe lent to host 0 is left out, the other ranked" \
	"Left out: nvme0 of host [12] \\($first\\) lent to host 0" "^1 +lender-[ab]:nvme0 \\($other\\)"
check "host 0 borrows the other NVMe too" "$SMARTIO" borrow "$other" --host 0
set +e
"$SMARTIO" plan --need nvme --host 2 --for nvme-qd1 >"$OUT" 2>&1; rc=$?
set -e
if [ "$rc" = 1 ] && has "nothing available to host 2" "nvme0 of host 1 is lent to host 0"; then
	ok "nothing available: exit 1 and why"; else not_ok "nothing available: exit 1 ($rc)"; fi
set +e
"$SMARTIO" borrow --best nvme --host 2 >"$OUT" 2>&1; rc=$?
set -e
if [ "$rc" = 1 ] && has "nothing available to host 2"; then ok "borrow --best with nothing: exit 1"
else not_ok "borrow --best with nothing: exit 1 ($rc)"; fi

check "cluster down" "$SMARTIO" cluster down
tap_done
