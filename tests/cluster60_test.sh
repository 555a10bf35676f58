#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The SmartIO 60-node setup (topologies/cluster-60.yaml): 60 daemons come up,
# a borrower on the last subswitch reaches the lender's RAM through three
# cluster switches (and the lender's IOMMU), and everything goes down
# leaving no process, socket or file behind; on the way, the multicast
# Identify to all 59 other hosts. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

check "60 hosts come up" "$SMARTIO" cluster up "$SRC/topologies/cluster-60.yaml"
check "cluster status: all up" "$SMARTIO" cluster status
expect "status counts 60 of 60" "^60 of 60 hosts up"
check "60 daemon sockets" test "$(ls "$SMARTIO_CLUSTER"/host-*.sock | wc -l)" -eq 60

# --- The multicast Identify to 59 hosts (issue 15, TOCS'21 7.4.2) ---
# One SISCI subscriber (examples/sisci/mcast_subscribe) per host 1-59 on group
# 7; one Identify --multicast from host 1's client; every host's 4 KiB, read
# back from its own memory by its subscriber, must equal a unicast Identify.
NVME=$(realpath "$BUILD/tools/smartio-nvme/smartio-nvme")
SUB=$(realpath "$BUILD/examples/sisci/mcast_subscribe")
MGR_PID=
SUB_PIDS=()
stop_mcast() {
	for p in "${SUB_PIDS[@]}" $MGR_PID; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${SUB_PIDS[@]}" $MGR_PID; do wait "$p" 2>/dev/null || true; done
	SUB_PIDS=()
	MGR_PID=
}
trap 'stop_mcast; tap_cleanup' EXIT
"$SMARTIO" exec --host 0 -- "$NVME" manager -d nvme0 --ready-file "$WORK/ready" \
	>"$WORK/manager.log" 2>&1 &
MGR_PID=$!
for _ in $(seq 200); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
check "the NVMe manager serves on host 0" test -e "$WORK/ready"
for h in $(seq 1 59); do
	"$SMARTIO" exec --host "$h" -- "$SUB" -g 7 -w 30000 -o "$WORK/id.$h" >"$WORK/sub.$h" 2>&1 &
	SUB_PIDS+=($!)
done
for h in $(seq 1 59); do
	for _ in $(seq 400); do grep -q subscribed "$WORK/sub.$h" 2>/dev/null && break; sleep 0.05; done
done
check "59 hosts subscribe to group 7" \
	sh -c "cat $WORK/sub.* | grep -c '^subscribed' | grep -qx 59"
# The switches' fan-out tree from the lender's NTB into group 7 (mxs-top's
# multicast range starts at 0x3f0000000000, groups of 1 MiB; windows of 128 MiB).
check "host 0: a window onto the multicast range" \
	"$SMARTIO" ntb --host 0 lut set auto 0xffffffff 0x3f0000000000
mwin=$(sed -n 's/^window: local bus address \(0x[0-9a-f]*\).*/\1/p' "$OUT")
mentry=$(sed -n 's/.*LUT\[\([0-9]*\)\].*/\1/p' "$OUT")
"$SMARTIO" route --host 0 --addr "$(printf '0x%x' $((mwin + 0x700000)))" --len 4096 --json \
	>"$WORK/tree.json" 2>&1 || true
json_check "the tree reaches 59 receivers" "$WORK/tree.json" \
	'len(d["multicast"]["receivers"]) == 59'
json_check "each link once: 1 ingress cable, 6 cascades, 59 egress cables" "$WORK/tree.json" \
	'len(d["multicast"]["links"]) == 66'
check "host 0: the window goes" "$SMARTIO" ntb --host 0 lut clear "${mentry:-0}"
check "unicast Identify from host 59 (--raw)" \
	"$SMARTIO" exec --host 59 -- "$NVME" identify -d nvme0 --raw "$WORK/id.unicast"
check "multicast Identify to group 7 from host 1" \
	"$SMARTIO" exec --host 1 -- "$NVME" identify -d nvme0 --multicast 7
bad=0
for i in "${!SUB_PIDS[@]}"; do wait "${SUB_PIDS[$i]}" || bad=$((bad + 1)); done
SUB_PIDS=()
check "all 59 subscribers saw a write land" test "$bad" -eq 0
same=0
for h in $(seq 1 59); do cmp -s "$WORK/id.unicast" "$WORK/id.$h" && same=$((same + 1)); done
check "every host's copy equals the unicast Identify ($same of 59)" test "$same" -eq 59
stop_mcast

check "host 59 maps a window to the lender" "$SMARTIO" ntb --host 59 lut set auto 0 0
win=$(sed -n 's/^window: local bus address \(0x[0-9a-f]*\).*/\1/p' "$OUT")
addr=$(printf '0x%x' $((win + 0x100040)))
"$SMARTIO" route --host 59 --addr "$addr" --len 64 >"$OUT" 2>&1 || true
expect "lender IOMMU on: the arriving NTB faults until mapped" "IOMMU fault"
ntb_bdf=$("$SMARTIO" lspci --host 0 | awk '/Dolphin/ {print $1}')
check "lender: IOMMU domain" "$SMARTIO" iommu --host 0 domain alloc
check "lender: attach its NTB ($ntb_bdf)" "$SMARTIO" iommu --host 0 attach 1 "$ntb_bdf"
check "lender: map IOVA 0 -> RAM 0x4000000" "$SMARTIO" iommu --host 0 map 1 0 0x4000000 2M rw
check "host 59 -> lender RAM resolves" "$SMARTIO" route --host 59 --addr "$addr" --len 64
expect "target is the lender's RAM at the IOMMU-translated offset" "target: host 0 RAM at 0x4100040"
expect "path crosses mxs6" "mxs6"
expect "path crosses mxs-top" "mxs-top"
expect "path crosses mxs1" "mxs1"
check "host 1 (same subswitch as the lender) also resolves" \
	sh -c "'$SMARTIO' ntb --host 1 lut set auto 0 0 >/dev/null &&
	       '$SMARTIO' route --host 1 --addr $addr --len 64 | grep -v mxs-top | grep -q 'host 0 RAM'"

pids=$(cat "$SMARTIO_CLUSTER"/host-*.pid)
check "cluster down" "$SMARTIO" cluster down
check "no daemon of this cluster left" sh -c "! pgrep -f '[s]martiod --cluster $SMARTIO_CLUSTER' >/dev/null"
# Exited daemons may linger as zombies until their reaper collects them.
left=0
for p in $pids; do
	if [ -r "/proc/$p/stat" ] && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
		left=$((left + 1))
	fi
done
check "every daemon pid is gone" test "$left" -eq 0
check "only the hosts' logs are left" only_logs_left

tap_done
