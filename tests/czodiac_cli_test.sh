#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cZodiac's multi-root sharing through real daemons (docs/czodiac.md, "In a
# running cluster"; issue 16's acceptance): on a cluster whose switch has
# `mode: czodiac`, `smartio czodiac share` makes the OWNER's daemon program its
# IOPort's RID and MMIO tables (shared by every daemon), PEER_STEP carries the
# remap both ways (the USER's CPU into the OWNER's BAR, the device's DMA back
# with the USER's RID), the USER's virtual hot-plug slot raises presence as an
# MSI and its PCI core adds the logic full-function device (fig. 7: IDs,
# header type, UBARs, no ROM, no INTx), the unmodified in-kernel NVMe driver
# binds it and does verified I/O, and `unshare` withdraws it while idle
# through the attention button; another USER sees nothing meanwhile.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

# A route that ends in an error exits 1: its output is what is checked.
route() { "$SMARTIO" route "$@" >"$OUT" 2>&1 || true; }
bytes() { od -An -tx1 -v "$1" | tr -s ' \n' '\n' | grep -v '^$' | sort -u; }

check "cluster up (OWNER host 0 with nvme0, USERs 1 and 2 on cz0)" \
	"$SMARTIO" cluster up "$SRC/tests/topologies/czodiac.yaml"
check "czodiac --help" "$SMARTIO" czodiac --help
expect "... names both subcommands" "czodiac share DEV --host N" "czodiac unshare DEV --host N"
rc=0; "$SMARTIO" czodiac shaer nvme0 --host 1 >"$OUT" 2>&1 || rc=$?
[ $rc -eq 2 ] && has "did you mean 'share'" && ok "a mistyped subcommand: usage, did you mean" ||
	not_ok "a mistyped subcommand: usage, did you mean"
check_fails "sharing a host's own device" "$SMARTIO" czodiac share nvme0 --host 0
expect "... says so" "nvme0 is a device of host 0 itself"
check_fails "unshare of a function not shared" "$SMARTIO" czodiac unshare nvme0 --host 1
expect "... says so" "nvme0 is not shared with host 1"
route --host 1 --addr 0x8000000000
expect "route: host 1's port window before the share: unsupported request, no UBAR (no look-up-table fall-back)" "unsupported request" \
	"no function's UBAR in cz0's IOPort MMIO tables"

check "czodiac share nvme0 --host 1" "$SMARTIO" czodiac share nvme0 --host 1
expect "hot-added at the UID, the NVMe driver bound, one presence MSI" \
	"^nvme0 \(02:00.0 of host 0\) is e0:00.0 at host 1, driver nvme; 1 hot-plug MSI" \
	"UBAR0 0x8000000000 \+0x4000"
check "route: host 1's CPU into UBAR0" "$SMARTIO" route --host 1 --addr 0x8000000000
expect "... the IOPort remaps it into the OWNER's BAR0 (a step on host 0)" "status: ok" \
	"IOPort ->02:00.0" "host 0 .*nvme0"
route --host 0 --from 02:00.0 --addr 0x7000000 --nocache
expect "route: the device's DMA at host 0 leaves as e0:00.0 and reaches host 1's IOMMU as e0:00.0 (PEER_STEP carries the RID)" \
	"IOPort RID 02:00.0->e0:00.0" "IOMMU fault: .*requester e0:00.0"
route --host 2 --addr 0x8000000000
expect "route: the other USER into the same address sees nothing (unsupported request)" "unsupported request"
check_fails "sharing it again with host 2" "$SMARTIO" czodiac share nvme0 --host 2
expect "... refused: it is in use" "nvme0 is lent, borrowed or shared already"
check "devices while shared" "$SMARTIO" devices
expect "... shared with host 1, its path the IOPort (not an NTB window)" \
	"^0x00040200 0 +02:00.0 +nvme0 +010802 +shared +host 1 +IOPort cz0, up"
check "devices --json" "$SMARTIO" devices --json
expect "... state shared, the USER as borrower, the IOPort" \
	'"state":"shared","borrower":1,"sisci_borrows":0,"path_state":"up","path_down_at":null,"ioport":"cz0"'
check_fails "Device Lending borrow by host 2 while shared" "$SMARTIO" borrow nvme0 --host 2
expect "... refused, naming the share and its end" \
	"busy: nvme0 is shared with host 1 through cZodiac's IOPort on cz0 \('smartio czodiac unshare nvme0 --host 1' ends the share\)"
DEVICE_BAR=$(realpath "$BUILD/examples/sisci/device_bar" 2>/dev/null || true)
if [ -x "$DEVICE_BAR" ]; then
	check_fails "SISCI borrow by host 2 while shared" "$SMARTIO" exec --host 2 -- "$DEVICE_BAR"
	expect "... not available" "SCI_ERR_NOT_AVAILABLE|not available"
	check "cluster logs --host 0" "$SMARTIO" cluster logs --host 0
	expect "... the OWNER's log names the share" \
		"borrow of 02:00.0 refused: shared with host 1 through cZodiac"
fi
check "web snapshot's pool (/api/state)" "$SMARTIO" top --once --json
expect "... shared, with the USER and the IOPort" '"state":"shared","borrower":1' '"ioport":"cz0"'

check "lspci --host 1" "$SMARTIO" lspci --host 1
expect "the logic full-function device, the PF's IDs" \
	"^e0:00.0 Non-Volatile memory controller: Device 534d:0001"
check "lspci -vv of it" "$SMARTIO" lspci --host 1 -s e0:00.0 -vv
expect "fig. 7: the UBARs as its BARs, memory and bus master on" \
	"Region 0: Memory at 8000000000 \(64-bit" "Region 4: Memory at 8000010000 \(64-bit" \
	"Mem\+ BusMaster\+" "DisINTx\+"
hasnt "Expansion ROM" "Interrupt: pin" && ok "... no expansion ROM, no interrupt pin" ||
	not_ok "... no expansion ROM, no interrupt pin"
check "lspci -x of it" "$SMARTIO" lspci --host 1 -s e0:00.0 -x
[ "$(awk '/^00:/ { print $16 }' "$OUT")" = "00" ] && ok "... header type 00: a single function 0" ||
	not_ok "... header type 00: a single function 0"

check "nvme list --host 1" "$SMARTIO" nvme list --host 1
expect "the in-kernel driver's controller" "^e0:00.0 +nvme0 +nvme"
check "nvme write at the USER" "$SMARTIO" nvme write --host 1 --dev e0:00.0 --lba 9 --pattern 0x5a --count 8
check "nvme read at the USER" "$SMARTIO" nvme read --host 1 --dev e0:00.0 --lba 9 --count 8 -o "$WORK/b1"
[ "$(bytes "$WORK/b1")" = "5a" ] && ok "... the data verified" || not_ok "... the data verified"
check "events" "$SMARTIO" events
expect "both daemons logged the share" "cZodiac: shared nvme0 \(02:00.0\) with host 1" \
	"cZodiac: nvme0 of host 0 hot-added as e0:00.0"

check "czodiac unshare nvme0 --host 1 (idle)" "$SMARTIO" czodiac unshare nvme0 --host 1
expect "withdrawn: attention, then presence change (3 MSIs in all)" \
	"^nvme0 \(02:00.0 of host 0\) withdrawn from host 1's slot; 3 hot-plug MSIs"
check "lspci --host 1" "$SMARTIO" lspci --host 1
hasnt "^e0:00.0" && ok "... the logic device is gone" || not_ok "... the logic device is gone"
route --host 1 --addr 0x8000000000
expect "route: host 1's port window after it: unsupported request again" "unsupported request"
route --host 0 --from 02:00.0 --addr 0x100000 --nocache
hasnt "IOPort" && ok "route: the device's DMA after it stays at its OWNER" || not_ok "route: the device's DMA after it stays at its OWNER"

check "share again, --json" "$SMARTIO" czodiac share 0x00040200 --host 1 --json
expect "json" '^\{"fdid":"0x00040200","owner":0,"user":1,"uid":"e0:00.0","oid":"02:00.0","present":true,"driver":"nvme","msis":1,"ubars":\[\{"bar":0,"addr":"0x8000000000","size":16384\}'
check "nvme read after the second hot-add" "$SMARTIO" nvme read --host 1 --dev e0:00.0 --lba 9 --count 8 -o "$WORK/b1"
[ "$(bytes "$WORK/b1")" = "5a" ] && ok "... the data kept (the OWNER's media)" ||
	not_ok "... the data kept (the OWNER's media)"
check "unshare, --json" "$SMARTIO" czodiac unshare nvme0 --host 1 --json
expect "json: gone, no driver" '"present":false,"driver":null,"msis":3'

check "share with host 2 (no IOMMU)" "$SMARTIO" czodiac share nvme0 --host 2
expect "... hot-added there" "is e0:00.0 at host 2, driver nvme"
check "nvme write at host 2" "$SMARTIO" nvme write --host 2 --dev e0:00.0 --lba 20 --pattern 0xc3 --count 4
check "nvme read at host 2" "$SMARTIO" nvme read --host 2 --dev e0:00.0 --lba 20 --count 4 -o "$WORK/b2"
[ "$(bytes "$WORK/b2")" = "c3" ] && ok "... verified at host 2" || not_ok "... verified at host 2"
check "unshare from host 2" "$SMARTIO" czodiac unshare nvme0 --host 2

check "share with host 1 again" "$SMARTIO" czodiac share nvme0 --host 1
check "host 1's daemon crashes while it holds it" "$SMARTIO" fault crash --host 1
check "share with host 2 at once" "$SMARTIO" czodiac share nvme0 --host 2
expect "... the OWNER reclaimed it when host 1's connection went" "is e0:00.0 at host 2, driver nvme"
check "events at host 0" "$SMARTIO" events --host 0
expect "... the reclaim logged" "cZodiac: host 1 let 02:00.0 go"
check "the OWNER's daemon crashes while host 2 holds it" "$SMARTIO" fault crash --host 0
gone=0
for _ in $(seq 100); do   # the surprise removal runs on a worker of host 2's daemon
	"$SMARTIO" lspci --host 2 >"$OUT" 2>&1 || true
	if hasnt "^e0:00.0"; then gone=1; break; fi
	sleep 0.02
done
[ $gone = 1 ] && ok "... host 2 surprise-removes the logic device" ||
	not_ok "... host 2 surprise-removes the logic device"
check "events at host 2" "$SMARTIO" events --host 2
expect "... logged" "cZodiac: OWNER host 0 lost: surprise-removing its nvme0"
check "cluster down" "$SMARTIO" cluster down
check "cluster up again" "$SMARTIO" cluster up "$SRC/tests/topologies/czodiac.yaml"
check "share with host 1" "$SMARTIO" czodiac share nvme0 --host 1
check "cluster down while host 1 holds it (quickly)" timeout 3 "$SMARTIO" cluster down

# A walk that takes a step on another host before the IOPort: far (2) reaches the
# USER (1) through a back-to-back NTB; the USER's step (a PEER_STEP) ends at the IOPort,
# and its reply carries the remap back to far's daemon, which steps on at the OWNER.
check "cluster up: a host beyond the USER" "$SMARTIO" cluster up "$SRC/tests/topologies/czodiac-far.yaml"
check "the OWNER enables 2 VFs" "$SMARTIO" sriov --host 0 --dev nvme0 --numvfs 2
check "share nvme0 with the USER" "$SMARTIO" czodiac share nvme0 --host 1
check "far's NTB window onto the USER's UBAR0" "$SMARTIO" ntb --host 2 lut set auto 1 0x8000000000
check "route: far's CPU through the USER into the IOPort" \
	"$SMARTIO" route --host 2 --addr 0x8000000000 --nocache
expect "... a step on the USER, the IOPort, the OWNER's BAR0" "status: ok" \
	"host 1 +02:00.0 +ntb1" "host 1 +01:00.0 +ntb0 IOPort ->02:00.0" \
	"target: host 0 BAR0 of 02:00.0"
check "route again (cached)" "$SMARTIO" route --host 2 --addr 0x8000000000
expect "... the same target" "target: host 0 BAR0 of 02:00.0"
check "the USER's NTB window onto far's RAM" "$SMARTIO" ntb --host 1 --ntb 1 lut set auto 2 0
check "its requester-ID table takes the UID" "$SMARTIO" ntb --host 1 --ntb 1 rid add e0:00.0
route --host 0 --from 02:00.0 --addr 0x8200100000 --nocache
expect "route: the device's DMA crosses the IOPort as the UID, then the USER's NTB to far's RAM" \
	"status: ok" "IOPort RID 02:00.0->e0:00.0" "target: host 2 RAM at 0x100000"

# Several functions of one OWNER device held by one USER: one multi-function logic device.
hdr() { "$SMARTIO" lspci --host 1 -s "$1" -x 2>/dev/null | awk '/^00:/ { print $16 }'; }
[ "$(hdr e0:00.0)" = "00" ] && ok "the PF alone: header type 00" || not_ok "the PF alone: header type 00"
check "share its VF2 with the same USER" "$SMARTIO" czodiac share 0x00040202 --host 1
expect "... function 1 of the PF's logic device" "^nvme0-vf2 \(02:00.2 of host 0\) is e0:00.1 at host 1, driver nvme"
[ "$(hdr e0:00.0)" = "80" ] && [ "$(hdr e0:00.1)" = "80" ] &&
	ok "fig. 7: both functions say multi-function (header type 80)" ||
	not_ok "fig. 7: both functions say multi-function (header type 80)"
check "nvme write on the VF's function" "$SMARTIO" nvme write --host 1 --dev e0:00.1 --lba 3 --pattern 0x77 --count 2
check "nvme read on it" "$SMARTIO" nvme read --host 1 --dev e0:00.1 --lba 3 --count 2 -o "$WORK/b3"
[ "$(bytes "$WORK/b3")" = "77" ] && ok "... verified" || not_ok "... verified"
check "unshare the VF" "$SMARTIO" czodiac unshare 0x00040202 --host 1
[ "$(hdr e0:00.0)" = "00" ] && ok "... the PF's header single-function again" ||
	not_ok "... the PF's header single-function again"
check "cluster down" "$SMARTIO" cluster down

tap_done
