#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The multicast Identify from the command line, on tests/topologies/mcast.yaml
# (two cascaded switches): examples/sisci/mcast_subscribe on hosts 1-3
# subscribes group 7; the NVMe manager runs on host 0; host 4 (not
# subscribed) asks for a unicast Identify (--raw) and for one to group 7.
# Every subscriber's 4 KiB must equal the unicast copy. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

NVME=$(realpath "$BUILD/tools/smartio-nvme/smartio-nvme")
SUB=$(realpath "$BUILD/examples/sisci/mcast_subscribe")
MGR_PID=
SUB_PIDS=()

stop_all() {
	for p in "${SUB_PIDS[@]}" $MGR_PID; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap 'stop_all; tap_cleanup' EXIT

check "cluster up (mcast.yaml)" "$SMARTIO" cluster up "$SRC/tests/topologies/mcast.yaml"
"$SMARTIO" exec --host 0 -- "$NVME" manager -d nvme0 --ready-file "$WORK/ready" \
	>"$WORK/manager.log" 2>&1 &
MGR_PID=$!
for _ in $(seq 200); do [ -e "$WORK/ready" ] && break; sleep 0.05; done
check "manager serves" test -e "$WORK/ready"

for h in 1 2 3; do
	"$SMARTIO" exec --host "$h" -- "$SUB" -g 7 -w 20000 -o "$WORK/id.$h" >"$WORK/sub.$h" 2>&1 &
	SUB_PIDS+=($!)
done
for h in 1 2 3; do
	for _ in $(seq 200); do grep -q subscribed "$WORK/sub.$h" 2>/dev/null && break; sleep 0.05; done
done
check "three subscribers" sh -c "cat $WORK/sub.1 $WORK/sub.2 $WORK/sub.3 | grep -c subscribed | grep -qx 3"

check "unicast Identify from host 4 (--raw)" \
	"$SMARTIO" exec --host 4 -- "$NVME" identify -d nvme0 --raw "$WORK/id.unicast"
check "4 KiB of Identify data" test "$(stat -c %s "$WORK/id.unicast")" -eq 4096
check "multicast Identify to group 7" \
	"$SMARTIO" exec --host 4 -- "$NVME" identify -d nvme0 --multicast 7
expect "the tool says where it went" "written to multicast group 7"
check_fails "--multicast 256 is refused" "$NVME" identify --multicast 256

for i in "${!SUB_PIDS[@]}"; do wait "${SUB_PIDS[$i]}" || true; done
SUB_PIDS=()
for h in 1 2 3; do
	check "host $h's copy equals the unicast Identify" cmp "$WORK/id.unicast" "$WORK/id.$h"
done

stop_all
MGR_PID=
check "cluster down" "$SMARTIO" cluster down
tap_done
