#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# SR-IOV lending per function through real daemons and the CLI (docs/lending.md,
# "Lending per function"; docs/devices.md, "SR-IOV"): the lender enables the VFs
# of its NVMe PF live (smartio sriov), each VF joins the pool with an FDID of its
# own, lspci shows the VFs and decodes the PF's SR-IOV capability, VF1 is lent to
# host 0 and VF2 to host 2 at once and the in-kernel NVMe driver of each does I/O
# with data verified; disabling the VFs while one is lent is refused, and after the
# returns disabling removes their FDIDs from the pool.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

cat >"$WORK/topo.yaml" <<'YAML'
version: 1
cluster_switches:
  - name: mxs0
hosts:
  - id: 0
    ram: 2G
    iommu: true
    ports:
      - ntb: {name: ntb0, connect: mxs0}
  - id: 1
    name: lender
    ram: 2G
    iommu: true
    ports:
      - ntb: {name: ntb0, connect: mxs0}
      - device: {name: nvme0, model: nvme, sriov: {vfs: 4}, params: {ns_size: 80M, queues: 4}}
      - device:
          name: acc0
          model: accel
          params: {memory: 1M}
          functions: [{name: acc1, model: accel, params: {memory: 1M}}]
  - id: 2
    ram: 2G
    iommu: false
    ports:
      - ntb: {name: ntb0, connect: mxs0}
YAML
PF=0x00080200 VF1=0x00080201 VF2=0x00080202 VF4=0x00080204

check "cluster up (an SR-IOV NVMe at host 1)" "$SMARTIO" cluster up "$WORK/topo.yaml"
check "sriov --help" "$SMARTIO" sriov --help
check "sriov: the PF's state" "$SMARTIO" sriov --host 1 --dev nvme0
expect "no VFs yet" "^02:00.0 host 1: SR-IOV PF 534d, VF device 0011, 0 of 4 VFs enabled \(offset 1, stride 1\)"
check "devices" "$SMARTIO" devices
expect "only the PF in the pool" "$PF .*nvme0 .*available"
expect "each function of a multi-function device its own FDID" "0x00080300 .*acc0 " \
	"0x00080301 .*acc1 "
check "lend function 1 of the multi-function device to host 2" "$SMARTIO" borrow 0x00080301 --host 2
expect "the accelerator driver binds" "acc1 from host 1 is f0:00.0, driver smartio-accel"
check "return it" "$SMARTIO" return 0x00080301 --host 2 --unbind
hasnt "$VF1" && ok "no VF in the pool" || not_ok "no VF in the pool"
check_fails "sriov on a host without that device" "$SMARTIO" sriov --host 0 --dev nvme0
check_fails "sriov --numvfs beyond TotalVFs" "$SMARTIO" sriov --host 1 --dev nvme0 --numvfs 5
expect "says TotalVFs" "fewer VFs than 5"

check "sriov --numvfs 4" "$SMARTIO" sriov --host 1 --dev nvme0 --numvfs 4
expect "4 VFs at the routing IDs after the PF" "4 of 4 VFs enabled" "VF1 02:00.1" "VF4 02:00.4"
check "sriov --json" "$SMARTIO" sriov --host 1 --dev 02:00.0 --json
expect "json" '^\{"host":1,"bdf":"02:00.0","vendor":"534d","vf_device":"0011","total_vfs":4,"num_vfs":4,"vf_offset":1,"vf_stride":1,"vfs":\["02:00.1","02:00.2","02:00.3","02:00.4"\]\}$'
check "devices: the VFs joined the pool" "$SMARTIO" devices
expect "each VF its own FDID" "$VF1 .*nvme0-vf1 .*010802 .*available" "$VF4 .*nvme0-vf4 .*available"
check "lspci --host 1" "$SMARTIO" lspci --host 1
expect "lspci lists the VFs" "^02:00.1 " "^02:00.4 "
check "lspci -vvv of the PF" "$SMARTIO" lspci --host 1 -s 02:00.0 -vvv
expect "lspci decodes the SR-IOV capability" "Single Root I/O Virtualization \(SR-IOV\)" \
	"Initial VFs: 4, Total VFs: 4, Number of VFs: 4" "VF offset: 1, stride: 1, Device ID: 0011" \
	"IOVCtl:.Enable\+ .*MSE\+"

check "borrow VF1 for host 0" "$SMARTIO" borrow $VF1 --host 0
expect "the NVMe driver binds to VF1's shadow" "nvme0-vf1 from host 1 is f0:00.0, driver nvme"
check "borrow VF2 for host 2" "$SMARTIO" borrow $VF2 --host 2
expect "the NVMe driver binds to VF2's shadow" "nvme0-vf2 from host 1 is f0:00.0, driver nvme"
check "lspci -vv of VF1's shadow at host 0" "$SMARTIO" lspci --host 0 -s f0:00.0 -vv
expect "a whole function: IDs from the PF, memory decoding on" "Device 534d:0011" "Mem\+"

check "nvme write at host 0 (VF1)" "$SMARTIO" nvme write --host 0 --dev f0:00.0 --lba 9 --pattern 0x11 --count 8
check "nvme write at host 2 (VF2)" "$SMARTIO" nvme write --host 2 --dev f0:00.0 --lba 9 --pattern 0x22 --count 8
bytes() { od -An -tx1 -v "$1" | tr -s ' \n' '\n' | grep -v '^$' | sort -u; }
check "nvme read at host 0" "$SMARTIO" nvme read --host 0 --dev f0:00.0 --lba 9 --count 8 -o "$WORK/b0"
check "nvme read at host 2" "$SMARTIO" nvme read --host 2 --dev f0:00.0 --lba 9 --count 8 -o "$WORK/b2"
[ "$(bytes "$WORK/b0")" = "11" ] && ok "VF1's data verified at host 0" || not_ok "VF1's data verified at host 0"
[ "$(bytes "$WORK/b2")" = "22" ] && ok "VF2's data verified at host 2" || not_ok "VF2's data verified at host 2"
check "devices: both lent" "$SMARTIO" devices
expect "lent to two hosts at once" "$VF1 .*lent +host 0" "$VF2 .*lent +host 2"

check "FLR of VF3 (VFs implement FLR)" "$SMARTIO" fault reset --host 1 nvme0-vf3
check "VF1 unaffected: its data" "$SMARTIO" nvme read --host 0 --dev f0:00.0 --lba 9 --count 8 -o "$WORK/b0"
[ "$(bytes "$WORK/b0")" = "11" ] && ok "VF1's data after VF3's FLR" || not_ok "VF1's data after VF3's FLR"

check_fails "disabling VFs while one is lent" "$SMARTIO" sriov --host 1 --dev nvme0 --numvfs 0
expect "a clear error" "cannot change the VFs of nvme0 \(02:00.0\) on host 1: a VF or the PF is borrowed"
check "return VF1" "$SMARTIO" return $VF1 --host 0 --unbind
check "return VF2" "$SMARTIO" return $VF2 --host 2 --unbind
check "sriov --numvfs 0" "$SMARTIO" sriov --host 1 --dev nvme0 --numvfs 0
expect "disabled" "0 of 4 VFs enabled"
check "devices: the VFs left the pool" "$SMARTIO" devices
hasnt "$VF1" "$VF4" && ok "no VF FDIDs" || not_ok "no VF FDIDs"
check "sriov --numvfs 2 again" "$SMARTIO" sriov --host 1 --dev nvme0 --numvfs 2
check "borrow VF1 again" "$SMARTIO" borrow $VF1 --host 0
check "VF1's data is still there (the PF's media)" "$SMARTIO" nvme read --host 0 --dev f0:00.0 --lba 9 --count 8 -o "$WORK/b0"
[ "$(bytes "$WORK/b0")" = "11" ] && ok "VF1's data kept" || not_ok "VF1's data kept"
check "return VF1 again" "$SMARTIO" return $VF1 --host 0 --unbind
"$SMARTIO" cluster down >/dev/null 2>&1 || true

tap_done
