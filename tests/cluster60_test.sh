#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The SmartIO 60-node setup (topologies/cluster-60.yaml): 60 daemons come up,
# a borrower on the last subswitch reaches the lender's RAM through three
# cluster switches (and the lender's IOMMU), and everything goes down
# leaving no process, socket or file behind. TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

check "60 hosts come up" "$SMARTIO" cluster up "$SRC/topologies/cluster-60.yaml"
check "cluster status: all up" "$SMARTIO" cluster status
expect "status counts 60 of 60" "^60 of 60 hosts up"
check "60 daemon sockets" test "$(ls "$SMARTIO_CLUSTER"/host-*.sock | wc -l)" -eq 60

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
