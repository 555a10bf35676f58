#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Integration test of the smartio CLI against a private default cluster:
# lspci (own formats and the real lspci on our dumps), topo, route, ntb,
# exec and cluster up/down. TAP output; exits non-zero on any failure.
#
# Binaries come from $SMARTIO_BUILD_DIR (default ./build).
set -euo pipefail

. "$(dirname "$0")/tap.sh"

# BAR address N of function BDF, from the real lspci on a dump.
bar_addr() {
	lspci -F "$1" -vv -s "$2" 2>/dev/null | sed -n 's/.*Region '"$3"': Memory at \([0-9a-f]*\) .*/\1/p'
}

# ---- cluster ----
check "cluster up" "$SMARTIO" cluster up
check "cluster status exits 0" "$SMARTIO" cluster status
expect "cluster status: 3 of 3 hosts up" "^3 of 3 hosts up"

# ---- lspci, own formats ----
check "lspci --host 1" "$SMARTIO" lspci --host 1
expect "lspci shows NVMe, accelerators, Dolphin NTB, switch ports" \
	"^04:00\.0 Non-Volatile memory controller: Device 534d:0001$" "^05:00\.0 Processing accelerators: Device 534d:0002" \
	"^06:00\.0 Processing accelerators: Device 534d:0002" "^01:00\.0 .*Dolphin" "^03:0[0-2]\.0 PCI bridge: " \
	"^00:00\.0 Host bridge: "
check "lspci -nn" "$SMARTIO" lspci --host 1 -nn
expect "lspci -nn shows class and IDs" "^04:00\.0 Non-Volatile memory controller \[0108\]: .*\[[0-9a-f]{4}:[0-9a-f]{4}\]"
check "lspci -n -s 04:00.0" "$SMARTIO" lspci --host 1 -n -s 04:00.0
expect "lspci -n: numeric line" "^04:00\.0 0108: [0-9a-f]{4}:[0-9a-f]{4}"
check "lspci -xxxs 05:00.0" "$SMARTIO" lspci --host 1 -xxxs 05:00.0
expect "lspci -xxx: 256-byte dump" "^00: [0-9a-f]{2}( [0-9a-f]{2}){15}$" "^f0: "
expect_not "lspci -xxx stops at 0xff" "^100: "
check "lspci -xxxx" "$SMARTIO" lspci --host 1 -xxxx -s 05:00.0
expect "lspci -xxxx: 4096-byte dump with 3-digit offsets" "^ff0: ( ?[0-9a-f]{2}){16}$"

# ---- the real lspci on our dumps ----
for h in 0 1 2; do
	D=$WORK/host$h.dump
	check "lspci --host $h --dump" "$SMARTIO" lspci --host "$h" --dump "$D"
	check "lspci -F dump -vvv (host $h)" lspci -F "$D" -vvv
	expect_not "lspci -vvv host $h: no decoding complaints" \
		"unknown" "<\?>" "Unknown header type" "chain broken" "!!!" "<broken"
	expect "lspci -vvv host $h: root port, endpoint, MSI, MSI-X, ACS" \
		"Express \(v2\) Root Port" "Express \(v2\) Endpoint" "MSI-X: Enable" "MSI: Enable" \
		"Access Control Services"
	check "lspci -F dump -t (host $h)" lspci -F "$D" -t
	expect "lspci -t host $h: a tree" '^-\[0000:00\]-\+-00\.0' '\\-0[1-3]\.0-\['
done
check "lspci -vvv host 1 again" lspci -F "$WORK/host1.dump" -vvv
expect "host 1: switch upstream and downstream ports" "Express \(v2\) Upstream Port" \
	"Express \(v2\) Downstream Port"
check "smartio lspci -tv runs the real lspci" "$SMARTIO" lspci --host 1 -tv
expect "smartio lspci -tv: tree with names" 'Device 534d:0001'

# ---- topo ----
check "topo" "$SMARTIO" topo
expect "topo: hosts, switch, NTB" '^host 1 "lender-a"' "switch chassis" "ntb ntb0" "^cluster switch mxs0"
check "topo --dot | dot -Tsvg" bash -c "'$SMARTIO' topo --dot | dot -Tsvg >/dev/null"

# ---- route ----
check "route: CPU -> local RAM" "$SMARTIO" route --host 0 --addr 0x1000
expect "route: target host 0 RAM" "^target: host 0 RAM"
GPU0=05:00.0
GPU1_BAR2=0x$(bar_addr "$WORK/host1.dump" 06:00.0 2)
check "route: gpu0 -> gpu1 BAR2 ($GPU1_BAR2)" "$SMARTIO" route --host 1 --from $GPU0 --addr "$GPU1_BAR2" --len 4096
expect "route: P2P below the switch" "peer-to-peer" "^target: host 1 BAR2 of 06:00\.0"
expect_not "route: P2P does not cross the root complex" "^ +[0-9]+ +root "

check "ntb lut set auto 1 0x0" "$SMARTIO" ntb --host 0 lut set auto 1 0x0
WIN=$(sed -n 's/^window: local bus address \(0x[0-9a-f]*\),.*/\1/p' "$OUT")
[ -n "$WIN" ] || WIN=0x$(bar_addr "$WORK/host0.dump" 01:00.0 2)
check "route: CPU -> NTB window $WIN" "$SMARTIO" route --host 0 --addr "$WIN" --len 64
expect "route: through ntb, cable, cluster switch to host 1 RAM" \
	"^ +[0-9]+ +ntb " "^ +[0-9]+ +cable " "^ +[0-9]+ +cluster-switch " "^target: host 1 RAM"
ENTRY_SZ=$("$SMARTIO" ntb --host 0 info | sed -n 's/.*windows of \(0x[0-9a-f]*\)).*/\1/p' || true)
ENTRY_SZ=${ENTRY_SZ:-0x8000000}
UNPROG=$(printf '0x%x' $((WIN + 8 * ENTRY_SZ)))
check_fails "route: unprogrammed window $UNPROG exits 1" "$SMARTIO" route --host 0 --addr "$UNPROG"
expect "route: says not programmed" "not programmed"
check "ntb link down" "$SMARTIO" ntb --host 0 link down
check_fails "route with the link down fails" "$SMARTIO" route --host 0 --addr "$WIN"
expect "route: reports link down" "link down"
check "ntb link up" "$SMARTIO" ntb --host 0 link up
check "route ok again after link up" "$SMARTIO" route --host 0 --addr "$WIN"
# The admin's requester IDs are its own references (the daemon's NTB driver).
check_fails "ntb rid del cpu: the CPU's entry is not the admin's" "$SMARTIO" ntb --host 0 rid del cpu
expect "rid del: held by a service" "held by a service"
check "ntb rid add 05:00.0" "$SMARTIO" ntb --host 1 rid add 05:00.0
check_fails "ntb rid add 05:00.0 twice" "$SMARTIO" ntb --host 1 rid add 05:00.0
expect "rid add twice: already the admin's" "already added by the admin"
check "ntb rid del 05:00.0" "$SMARTIO" ntb --host 1 rid del 05:00.0
check_fails "ntb rid del 05:00.0 again" "$SMARTIO" ntb --host 1 rid del 05:00.0
expect "rid del again: not in the table" "requester not in the table"
check "route --json" "$SMARTIO" route --host 0 --addr "$WIN" --json
if command -v python3 >/dev/null; then
	cp "$OUT" "$WORK/route.json"
	check "route --json is valid JSON" python3 -m json.tool "$WORK/route.json"
fi
check_fails "route from an unknown BDF fails" "$SMARTIO" route --host 1 --from 1f:00.0 --addr 0
expect "route: unknown BDF is named" "no function at 1f:00\.0"
check_fails "route with a malformed BDF fails" "$SMARTIO" route --host 1 --from nonsense --addr 0
expect "route: malformed BDF explained" "is neither .cpu., a BDF"
check_fails "iommu on a host without one" "$SMARTIO" iommu --host 1 domain alloc
expect "iommu: IOMMU off explained" "IOMMU off"

# ---- exec ----
check "exec --host 2 -- env" bash -c "'$SMARTIO' exec --host 2 -- env | grep -x SMARTIO_HOST=2"

# ---- down ----
check "cluster down" "$SMARTIO" cluster down
if only_logs_left; then ok "only the hosts' logs are left"; else not_ok "only the hosts' logs are left"; fi
if pgrep -f "$SMARTIO_CLUSTER" >"$OUT"; then not_ok "no smartiod left"; else ok "no smartiod left"; fi

tap_done
