#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Device Lending through real daemons and the CLI (docs/lending.md), on the
# default topology (borrower 0 with an IOMMU; lender-a 1: nvme0, gpu0, gpu1
# under a switch, no IOMMU; lender-b 2: nvme0, gpu0, IOMMU on) plus an
# accelerator the borrower keeps:
#   smartio devices / borrow / return, the shadow devices in lspci behind the
#   NTB, the in-kernel NVMe and accelerator drivers on them (data verified),
#   peer-to-peer between borrowed accelerators of the same and of different
#   lenders (the route from lender A through its NTB to lender B, never the
#   borrower) and to the borrower's own accelerator, one borrower at a time, return refused while a driver is bound,
#   and the lender reclaiming its devices when the borrower is killed (SIGKILL).
set -euo pipefail

. "$(dirname "$0")/tap.sh"

NVME_A=0x00080400 GPU_A0=0x00080500 GPU_A1=0x00080600 GPU_B=0x000c0300

# The default topology, plus an accelerator the borrower keeps (02:00.0 there).
cat >"$WORK/topo.yaml" <<'YAML'
version: 1
cluster_switches:
  - name: mxs0
hosts:
  - id: 0
    name: borrower
    ram: 4G
    iommu: true
    ports:
      - ntb: {name: ntb0, connect: mxs0}
      - device: {name: accb, model: accel, lendable: false, params: {memory: 16M}}
  - id: 1
    name: lender-a
    ram: 4G
    iommu: false
    ports:
      - ntb: {name: ntb0, connect: mxs0}
      - link: {gen: 3, width: 16}
        switch:
          name: chassis
          chip: PEX8796
          latency_ns: 150
          ports:
            - {link: {gen: 3, width: 4}, device: {name: nvme0, model: nvme}}
            - {link: {gen: 3, width: 16}, device: {name: gpu0, model: accel}}
            - {link: {gen: 3, width: 16}, device: {name: gpu1, model: accel}}
  - id: 2
    name: lender-b
    ram: 4G
    iommu: true
    ports:
      - ntb: {name: ntb0, connect: mxs0}
      - {link: {gen: 3, width: 4}, device: {name: nvme0, model: nvme}}
      - {link: {gen: 3, width: 16}, device: {name: gpu0, model: accel}}
YAML
ACC_LOCAL=0x00040200    # the borrower's own accelerator: node 4, 02:00.0

check "cluster up (default topology + a borrower accelerator)" "$SMARTIO" cluster up "$WORK/topo.yaml"
check "devices" "$SMARTIO" devices
expect "devices: the pool, all available" "0x00080400 +1 +04:00.0 +nvme0 +010802 +available" \
	"0x000c0300 +2 +03:00.0 +gpu0 +120000 +available"
check "devices --help" "$SMARTIO" devices --help
check "borrow --help" "$SMARTIO" borrow --help
check "return --help" "$SMARTIO" return --help

check "borrow lender-a nvme0 for host 0" "$SMARTIO" borrow $NVME_A --host 0
expect "the NVMe driver binds to the shadow" "nvme0 from host 1 is f0:00.0, driver nvme"
check "borrow lender-a gpu0" "$SMARTIO" borrow $GPU_A0 --host 0
check "borrow lender-a gpu1" "$SMARTIO" borrow $GPU_A1 --host 0
check "borrow lender-b gpu0" "$SMARTIO" borrow $GPU_B --host 0
expect "the accelerator driver binds" "gpu0 from host 2 is f0:00.3, driver smartio-accel"
check_fails "one borrower at a time" "$SMARTIO" borrow $GPU_B --host 1
expect "busy" "busy"
check_fails "a host does not borrow its own device" "$SMARTIO" borrow $GPU_B --host 2
DEVICE_BAR=$(realpath "$BUILD/examples/sisci/device_bar" 2>/dev/null || true)
if [ -x "$DEVICE_BAR" ]; then
	# One pool with SISCI: a SISCI borrower of a device lent by Device Lending is a guest
	# that may map its memory BARs only, never the registers the borrower's driver owns.
	check_fails "SISCI cannot map a lent device's registers" "$SMARTIO" exec --host 2 -- "$DEVICE_BAR"
	expect "SCI_ERR_ACCESS" "no permission"
fi
check "devices: lent" "$SMARTIO" devices --host 2
expect "devices shows state and borrower" "0x00080400 .* lent +host 0" "0x000c0300 .* lent +host 0" \
	"0x000c0200 .* available"

check "lspci --host 0" "$SMARTIO" lspci --host 0
expect "the shadows in the borrower's tree" "^f0:00.0 Non-Volatile memory controller" \
	"^f0:00.3 Processing accelerators"
check "lspci -vv of a shadow" "$SMARTIO" lspci --host 0 -s f0:00.1 -vv
expect "intercepted config: INTx disabled, bus master on" "DisINTx\+" "BusMaster\+"

# The NVMe driver on the borrowed controller: MSI-X completions land on host 0.
check "nvme write through the borrowed controller" \
	"$SMARTIO" nvme write --host 0 --dev f0:00.0 --lba 7 --pattern 90 --count 8
check "nvme read it back" "$SMARTIO" nvme read --host 0 --dev f0:00.0 --lba 7 --count 1 -o "$WORK/blk"
if [ "$(od -An -tx1 -v "$WORK/blk" | tr -s ' \n' '\n' | grep -v '^$' | sort -u)" = "5a" ]; then
	ok "data verified (every byte 0x5a)"; else not_ok "data verified"; fi

# Link faults on the path (docs/lending.md, "Faults"): the driver is told, I/O fails fast
# with an error, and after link up the same mappings work again (the driver resets).
wait_log() {   # HOST PATTERN: the host's log shows it (bounded)
	for _ in $(seq 1 100); do
		grep -q "$2" "$SMARTIO_CLUSTER/host-$1.log" && return 0
		sleep 0.05
	done
	return 1
}
check "link down on the borrower's NTB" "$SMARTIO" ntb --host 0 link down
check "the NVMe driver was told (frozen)" wait_log 0 "nvme0: nvme: link down (frozen)"
check_fails "nvme read while the link is down" "$SMARTIO" nvme read --host 0 --dev f0:00.0 \
	--lba 7 --count 1 -o "$WORK/blk"
check "link up" "$SMARTIO" ntb --host 0 link up
check "the driver resumed" wait_log 0 "nvme0: nvme: link back"
check "nvme read after link up" "$SMARTIO" nvme read --host 0 --dev f0:00.0 --lba 7 --count 1 \
	-o "$WORK/blk"
[ "$(od -An -tx1 -v "$WORK/blk" | tr -s ' \n' '\n' | grep -v '^$' | sort -u)" = "5a" ] &&
	ok "after the flap: data verified" || not_ok "after the flap: data verified"
# The far side: lender-a's NTB goes down; the borrower learns it from the changed tables.
NFROZEN=$(grep -c "nvme: link down (frozen)" "$SMARTIO_CLUSTER/host-0.log")
check "link down on the lender's NTB" "$SMARTIO" ntb --host 1 link down
wait_for_count() { for _ in $(seq 1 100); do
	[ "$(grep -c "$1" "$SMARTIO_CLUSTER/host-0.log")" -gt "$2" ] && return 0; sleep 0.05; done; return 1; }
check "the borrower's driver was told (frozen)" wait_for_count "nvme: link down (frozen)" "$NFROZEN"
NBACK=$(grep -c "nvme0: nvme: link back" "$SMARTIO_CLUSTER/host-0.log")
check "lender's link up" "$SMARTIO" ntb --host 1 link up
check "resumed" wait_for_count "nvme0: nvme: link back" "$NBACK"
check "nvme read after the far flap" "$SMARTIO" nvme read --host 0 --dev f0:00.0 --lba 7 \
	--count 1 -o "$WORK/blk"

# Accelerators: fill, then peer-to-peer copies, checksums compared.
check "accel fill on lender-a gpu0" "$SMARTIO" accel fill --host 0 --dev f0:00.1 --dst dev:0 \
	--len 1M --pattern 0x0123456789abcdef
check "checksum source" "$SMARTIO" accel checksum --host 0 --dev f0:00.1 --src dev:0 --len 1M
SRC_CRC=$(sed -n 's/^crc32c //p' "$OUT")

check "p2p address: lender-a gpu0 -> lender-b gpu0" "$SMARTIO" devices --p2p $GPU_A0 $GPU_B --host 0
ADDR=$(sed -n 's/.*bus address \(0x[0-9a-f]*\).*/\1/p' "$OUT")
check "route of it at lender-a" "$SMARTIO" route --host 1 --from gpu0 --addr "$ADDR" --write
expect "lender A -> NTB -> lender B's gpu0" "target: host 2 BAR2 of 03:00.0" "ntb +host 1 .*LUT" \
	"ntb +host 2"
hasnt "host 0" && ok "the borrower is not on the path" || not_ok "the borrower is not on the path"
check "copy lender-a gpu0 -> lender-b gpu0 (P2P)" "$SMARTIO" accel copy --host 0 --dev f0:00.1 \
	--src dev:0 --dst "$ADDR" --len 1M
check "checksum at lender-b" "$SMARTIO" accel checksum --host 0 --dev f0:00.3 --src dev:0 --len 1M
[ "$(sed -n 's/^crc32c //p' "$OUT")" = "$SRC_CRC" ] && ok "P2P across lenders: data verified" ||
	not_ok "P2P across lenders: data verified"

check "p2p address: same lender" "$SMARTIO" devices --p2p $GPU_A0 $GPU_A1 --host 0
ADDR=$(sed -n 's/.*bus address \(0x[0-9a-f]*\).*/\1/p' "$OUT")
check "route of it at lender-a" "$SMARTIO" route --host 1 --from gpu0 --addr "$ADDR" --write
expect "same lender: under its switch, no NTB" "target: host 1 BAR2" "hops: [0-9]+ \(0 NTB"
check "copy lender-a gpu0 -> gpu1 (P2P)" "$SMARTIO" accel copy --host 0 --dev f0:00.1 \
	--src dev:0 --dst "$ADDR" --len 1M
check "checksum at gpu1" "$SMARTIO" accel checksum --host 0 --dev f0:00.2 --src dev:0 --len 1M
[ "$(sed -n 's/^crc32c //p' "$OUT")" = "$SRC_CRC" ] && ok "P2P in one lender: data verified" ||
	not_ok "P2P in one lender: data verified"
check "p2p address: lender-a gpu0 -> the borrower's own accelerator" \
	"$SMARTIO" devices --p2p $GPU_A0 $ACC_LOCAL --host 0
ADDR=$(sed -n 's/.*bus address \(0x[0-9a-f]*\).*/\1/p' "$OUT")
check "route of it at lender-a" "$SMARTIO" route --host 1 --from gpu0 --addr "$ADDR" --write
expect "lender A -> NTB -> the borrower's accelerator" "target: host 0 BAR2 of 02:00.0" \
	"hops: [0-9]+ \(1 NTB"
check "copy lender-a gpu0 -> borrower accb (P2P)" "$SMARTIO" accel copy --host 0 --dev f0:00.1 \
	--src dev:0 --dst "$ADDR" --len 1M
check "checksum at the borrower" "$SMARTIO" accel checksum --host 0 --dev accb --src dev:0 --len 1M
[ "$(sed -n 's/^crc32c //p' "$OUT")" = "$SRC_CRC" ] && ok "P2P to the borrower: data verified" ||
	not_ok "P2P to the borrower: data verified"
check "accel pingpong between two lenders" "$SMARTIO" accel pingpong --host 0 --dev f0:00.1 \
	--peer f0:00.3 --iters 100

# Returning.
check_fails "return refused while the driver is bound" "$SMARTIO" return $GPU_A1 --host 0
expect "says why" "driver is bound"
check "return --unbind" "$SMARTIO" return $GPU_A1 --host 0 --unbind
check "devices: gpu1 available again" "$SMARTIO" devices
expect "available" "0x00080600 .* available"
check "borrowed again" "$SMARTIO" borrow $GPU_A1 --host 0

# The borrower dies: the lenders reclaim and reset their devices.
kill -KILL "$(cat "$SMARTIO_CLUSTER/host-0.pid")"
for _ in $(seq 1 200); do
	"$SMARTIO" devices --host 1 >"$OUT" 2>&1 || true
	grep -q " lent " "$OUT" || break
done
hasnt " lent " && ok "reclaimed after SIGKILL: nothing lent" || not_ok "reclaimed after SIGKILL"
check "lspci of a reclaimed device" "$SMARTIO" lspci --host 2 -s 03:00.0 -vv
expect "quiesced: no decoding, no bus mastering" "Mem- BusMaster-"
check "lender-b's log says so" grep "reclaimed 03:00.0 from host 0" "$SMARTIO_CLUSTER/host-2.log"
check "another host borrows it" "$SMARTIO" borrow $GPU_B --host 1
check "host 1 has the shadow" "$SMARTIO" lspci --host 1
expect "shadow on host 1" "^f0:00.0 Processing accelerators"
# The lender dies: the borrower surprise-removes the shadow.
kill -KILL "$(cat "$SMARTIO_CLUSTER/host-2.pid")"
for _ in $(seq 1 200); do
	"$SMARTIO" lspci --host 1 >"$OUT" 2>&1 || true
	grep -q "^f0:" "$OUT" || break
done
hasnt "^f0:" && ok "lender killed: the shadow is gone" || not_ok "lender killed: the shadow is gone"
check "the borrower's driver was told (perm failure)" \
	grep "accel gpu0: permanent failure (device gone)" "$SMARTIO_CLUSTER/host-1.log"
check "the borrower says why" grep "lender host 2 lost: surprise-removing its gpu0" \
	"$SMARTIO_CLUSTER/host-1.log"
"$SMARTIO" cluster down >/dev/null 2>&1 || true

# ---- three-node (Device Lending paper): lender B reaches lender C through its
# *second* NTB, whose requester-ID table must admit the lent GPU as well ----
fdid_of() {   # HOST-NAME DEVICE-NAME
	"$SMARTIO" devices --json | python3 -c 'import json,sys
for d in json.load(sys.stdin):
    if d["name"] == sys.argv[2] and str(d["lender"]) == sys.argv[1]: print(d["fdid"])' "$1" "$2"
}
check "three-node cluster up" "$SMARTIO" cluster up "$SRC/topologies/papers/three-node.yaml"
rids_ntb1() { "$SMARTIO" ntb --host 1 --ntb 1 | sed -n 's/.*RID table \([0-9]*\) of.*/\1/p'; }
RIDS0=$(rids_ntb1)
TB=$(fdid_of 1 gpu0)
TC=$(fdid_of 2 gpu0)
check "borrow lender-b gpu0" "$SMARTIO" borrow "$TB" --host 0
expect "lender-b gpu0 is f0:00.0" "is f0:00.0"
check "borrow lender-c gpu0" "$SMARTIO" borrow "$TC" --host 0
expect "lender-c gpu0 is f0:00.1" "is f0:00.1"
check "fill lender-b gpu0" "$SMARTIO" accel fill --host 0 --dev f0:00.0 --dst dev:0 --len 256K \
	--pattern 0x5a5a1234abcd0042
check "checksum at lender-b" "$SMARTIO" accel checksum --host 0 --dev f0:00.0 --src dev:0 --len 256K
SRC_CRC=$(sed -n 's/^crc32c //p' "$OUT")
check "p2p address: lender-b gpu0 -> lender-c gpu0" "$SMARTIO" devices --p2p "$TB" "$TC" --host 0
ADDR=$(sed -n 's/.*bus address \(0x[0-9a-f]*\).*/\1/p' "$OUT")
check "route at lender-b goes out of its ntb1" "$SMARTIO" route --host 1 --from gpu0 --addr "$ADDR" --write
expect "lender B -> ntb1 -> lender C" "target: host 2 BAR2" "ntb1 LUT"
hasnt "host 0" && ok "three-node: the borrower is not on the path" ||
	not_ok "three-node: the borrower is not on the path"
check "copy lender-b gpu0 -> lender-c gpu0 (P2P)" "$SMARTIO" accel copy --host 0 --dev f0:00.0 \
	--src dev:0 --dst "$ADDR" --len 256K
RIDS1=$(rids_ntb1)
check "lender-b's ntb1 admits the lent GPU ($RIDS0 -> $RIDS1 entries)" test "$RIDS1" -eq $((RIDS0 + 1))
check "checksum at lender-c" "$SMARTIO" accel checksum --host 0 --dev f0:00.1 --src dev:0 --len 256K
[ "$(sed -n 's/^crc32c //p' "$OUT")" = "$SRC_CRC" ] && ok "three-node P2P: data verified" ||
	not_ok "three-node P2P: data verified"
check "return both" sh -c "'$SMARTIO' return '$TB' --host 0 --unbind && '$SMARTIO' return '$TC' --host 0 --unbind"
RIDS2=$(rids_ntb1)
check "returned: lender-b's ntb1 no longer admits it ($RIDS2 entries)" test "$RIDS2" -eq "$RIDS0"
"$SMARTIO" cluster down >/dev/null 2>&1 || true

tap_done
