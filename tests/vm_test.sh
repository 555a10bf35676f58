#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Virtual machines on a cluster host (docs/vm.md): `smartio vm run` boots the
# guest image (Debian's cloud kernel + the busybox initramfs of
# tools/vm/build-image.sh) in the QEMU built with smartio's device
# (tools/qemu/build-qemu.sh) as a process of host 0, runs a command in it and
# returns its status; the guest's RAM is host 0's RAM (VM_MEM); vm list /
# stop; lender-b's NVMe passed through to the guest (smartio-mdev and the
# MDEV parent) and driven by Linux's own nvme driver with MSI-X: ext4 with
# checksummed files, fio randrw with crc32c verification; vm stats (no
# message per I/O); the device only reserved until the guest's driver enables
# it, returned by the guest's reset and unbind and borrowed again by its
# enable, data intact; vm console drives the guest's shell; the device goes
# back when QEMU ends; hot-add into and
# hot-remove from a running guest; cold migration to host 1 with the files
# intact; a lender without an IOMMU is refused. The NVMe guest's RAM is split
# (--low: half of it at 4 GiB, both mirrored by the lender's IOMMU), and in it
# smartio-stray-dma checks isolation: a DMA it programs past guest RAM gets an
# error completion and an IOMMU fault on the lender, and no byte outside the
# guest changes. The hot-added device is an SR-IOV VF (issue 16).
# Skips (77) when the QEMU build or the image is missing: `make vm` makes both.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/smartio
QEMU=${SMARTIO_QEMU:-$cache/qemu-system-x86_64}
IMAGE=$cache/image
if [ ! -x "$QEMU" ] || [ ! -f "$IMAGE/vmlinuz" ] || [ ! -f "$IMAGE/initrd.img" ]; then
	echo "1..0 # SKIP no QEMU build ($QEMU) or guest image ($IMAGE): run 'make vm' (needs apt and the network once)"
	exit 77
fi

# The default topology with lender-b's NVMe an SR-IOV PF (one VF enabled).
# The isolation case needs the image's smartio-stray-dma (tools/vm/guest).
if ! grep -qx smartio-stray-dma "$IMAGE/programs" 2>/dev/null; then
	echo "Bail out! the guest image in $IMAGE has no smartio-stray-dma: run 'make vm-image'"
	exit 1
fi
check "cluster up (default topology)" "$SMARTIO" cluster up
sed 's/device: {name: nvme0, model: nvme, params: {cmb: 1M}}/device: {name: nvme0, model: nvme, sriov: {vfs: 2}, params: {cmb: 1M}}/' \
	"$SMARTIO_CLUSTER/topology.yaml" >"$WORK/topo.yaml"
t0=$(date +%s%N)
"$SMARTIO" cluster down >/dev/null 2>&1
check "cluster up (lender-b's NVMe with SR-IOV)" "$SMARTIO" cluster up "$WORK/topo.yaml"
echo "# cluster restarted with SR-IOV on lender-b: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "sriov --numvfs 1 on lender-b" "$SMARTIO" sriov --host 2 --dev nvme0 --numvfs 1
check "devices" "$SMARTIO" devices
expect "VF1 joined the pool" '^0x000c0201 +2 +02:00.1 +nvme0-vf1'

# A command in the guest; its status is vm run's. The boot time is reported.
t0=$(date +%s%N)
"$SMARTIO" vm run --host 0 --mem 512M --console "$WORK/console" \
	--cmd 'echo guest-says-$((6*7)); uname -r; grep -c ^processor /proc/cpuinfo; exit 3' \
	>"$OUT" 2>&1 && rc=0 || rc=$?
t1=$(date +%s%N)
echo "# guest boot + command + power-off: $(( (t1 - t0) / 1000000 )) ms wall (TCG)"
cat "$WORK/console" >>"$OUT" 2>/dev/null || true
if [ "$rc" = 3 ]; then ok "vm run: the guest command's exit status (3) is vm run's"; else
	echo "# rc=$rc" >>"$OUT"; not_ok "vm run: the guest command's exit status (3) is vm run's"; fi
expect "the guest ran the command (its console)" 'guest-says-42' 'SMARTIO-EXIT 3' \
	'Linux version [0-9.]+-[0-9]+-cloud-amd64'
expect "the guest runs on q35 with the RAM asked for" 'Memory: [0-9]+K/5[0-9]{5}K available'

# The guest's tools are there (mkfs.ext4, nvme, fio) with their libraries.
check "the guest image has mkfs.ext4, nvme-cli and fio" \
	"$SMARTIO" vm run --host 0 --mem 512M --console "$WORK/console2" \
	--cmd 'mkfs.ext4 -V 2>&1 | head -1 && nvme version && fio --version'
cat "$WORK/console2" >>"$OUT"
expect "their versions print in the guest" 'mke2fs [0-9.]+' 'nvme version' 'fio-[0-9.]+'

# vm list shows a running VM as host 0's; vm stop powers it off. The guest's
# RAM is host 0's RAM (VM_MEM): a string the guest computes and keeps in its
# tmpfs is found in host 0's RAM memfd, in the range the daemon logged; the
# range is freed when QEMU is gone.
"$SMARTIO" vm run --host 0 --mem 512M --name sleeper --console "$WORK/console3" \
	--cmd 'x=$((6*7*1000+123)); echo "MARK-$x-MARK" >/tmp/m; echo marked; sleep 600' \
	>/dev/null 2>&1 &
vmpid=$!
for _ in $(seq 150); do
	grep -q marked "$WORK/console3" 2>/dev/null && break
	sleep 0.2
done
grep "VM RAM: 512 MiB" "$SMARTIO_CLUSTER/host-0.log" >"$OUT" 2>&1 || true
expect "host 0's daemon gave the guest 512 MiB of its RAM" 'VM RAM: 512 MiB at 0x[0-9a-f]+ for pid [0-9]+'
phys=$(sed -n 's/.*VM RAM: 512 MiB at \(0x[0-9a-f]*\).*/\1/p' "$SMARTIO_CLUSTER/host-0.log" | tail -n1)
check "the guest's data is in host 0's RAM at that address" python3 - \
	"$(cat "$SMARTIO_CLUSTER/host-0.pid")" "${phys:-0}" <<'PY'
import mmap, os, sys
pid, phys = int(sys.argv[1]), int(sys.argv[2], 16)
fds = "/proc/%d/fd" % pid
ram = [f for f in os.listdir(fds) if os.readlink(os.path.join(fds, f)).startswith("/memfd:ram")]
with open(os.path.join(fds, ram[0]), "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    at = m.find(b"MARK-42123-MARK", phys, phys + (512 << 20))   # below 3 GiB: offset = phys
    print("found at host physical 0x%x (guest-physical 0x%x)" % (at, at - phys) if at >= 0 else "not found")
    sys.exit(0 if at >= 0 else 1)
PY
check "vm list" "$SMARTIO" vm list
expect "vm list names the VM with its host (and no devices)" "^$vmpid +0 +sleeper +-\$"
check "vm stop sleeper" "$SMARTIO" vm stop sleeper
if wait "$vmpid"; then st=0; else st=$?; fi
[ "$st" != 0 ] && ok "the stopped VM's vm run ends (status $st)" || not_ok "the stopped VM's vm run ends"
grep "VM RAM at ${phys:-none} freed" "$SMARTIO_CLUSTER/host-0.log" >"$OUT" 2>&1 || true
expect "the guest's RAM went back to host 0 when QEMU ended" "VM RAM at ${phys:-none} freed"
check "vm list after stop" "$SMARTIO" vm list
expect_not "vm list no longer shows it" 'sleeper'
check_fails "vm stop of an unknown VM fails" "$SMARTIO" vm stop nosuchvm
expect "it says which" "no running VM 'nosuchvm'"
check_fails "vm console of a VM that is not running fails" "$SMARTIO" vm console nosuchvm
expect "it says so" "no running VM 'nosuchvm'"

# A --device is a smartio-mdev device behind a PCIe root port, its MDEV parent
# host 0's daemon: lender-b's NVMe (lender IOMMU on) in the guest, driven by
# Linux's own nvme driver with MSI-X: ext4 with checksummed files, then fio
# randrw with crc32c verification, straight onto the namespace.
guest_cmd='set -e
dmesg | grep -E "nvme|NVMe"
grep -E "nvme0q[0-9]" /proc/interrupts
mkfs.ext4 -q -F /dev/nvme0n1
mkdir -p /mnt/d
mount -t ext4 /dev/nvme0n1 /mnt/d
for i in 1 2 3 4; do head -c $((i * 300000)) /dev/urandom >/mnt/d/f$i; done
(cd /mnt/d && sha256sum f1 f2 f3 f4 >SUMS)
umount /mnt/d
mount -t ext4 -o ro /dev/nvme0n1 /mnt/d
(cd /mnt/d && sha256sum -c SUMS)
umount /mnt/d
fio --name=verify --filename=/dev/nvme0n1 --offset=64M --size=16M --rw=randrw --bs=4k \
	--ioengine=libaio --direct=1 --iodepth=8 --verify=crc32c --do_verify=1 \
	--verify_fatal=1 >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; exit 9; }
grep -E "READ:|WRITE:|err=" /tmp/fio.out
echo fio-verify-passed
read x
grep "System RAM" /proc/iomem
smartio-stray-dma --high --wait-go && echo stray-dma-refused || echo "stray-dma-exit $?"
for i in $(seq 100); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
dd if=/dev/nvme0n1 of=/dev/null bs=4k count=16 2>/dev/null && echo nvme-works-again
echo isolation-done
read x
bdf=$(basename $(readlink /sys/class/nvme/nvme0/device))
echo 1 >/sys/bus/pci/devices/$bdf/reset
mount -t ext4 -o ro /dev/nvme0n1 /mnt/d
(cd /mnt/d && sha256sum -c SUMS) && echo after-reset-sums-ok
umount /mnt/d
echo $bdf >/sys/bus/pci/drivers/nvme/unbind
echo guest-unbound
read x
echo $bdf >/sys/bus/pci/drivers/nvme/bind
for i in $(seq 300); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
mount -t ext4 -o ro /dev/nvme0n1 /mnt/d
(cd /mnt/d && sha256sum -c SUMS) && echo after-rebind-sums-ok
umount /mnt/d
sh'
# Host-side canaries of the isolation case, in the daemons' RAM memfds:
# host 0's RAM right past the VM's range (where the stray address would land
# if the window ran on past guest RAM) and lender-b's RAM at the stray
# address itself (where it would land untranslated). "snap" hashes them and
# tells the guest to go (writes SMIOGO!! into its flag page); "same" compares.
cat >"$WORK/canary.py" <<'PY'
import hashlib, mmap, os, sys
what, pid0, pid2, p, g, low, s, gogpa, keep = sys.argv[1:10]
p, g, low, s, gogpa = (int(x, 16) if x.startswith("0x") else int(x) for x in (p, g, low, s, gogpa))
def ram(pid, write=False):
    fds = "/proc/%s/fd" % pid
    f = [x for x in os.listdir(fds) if os.readlink(os.path.join(fds, x)).startswith("/memfd:ram")][0]
    fd = os.open(os.path.join(fds, f), os.O_RDWR if write else os.O_RDONLY)
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ | (mmap.PROT_WRITE if write else 0))
    os.close(fd)
    return m
b, l = ram(pid0), ram(pid2)
if not s or s + 65536 > min(len(l), 3 << 30):     # below 3 GiB: memfd offset = phys
    sys.exit("no stray address from the guest, or beyond lender-b's low RAM: 0x%x" % s)
h = [hashlib.sha256(b[p + g:p + g + (4 << 20)]).hexdigest(),    # 4 MiB past the VM
     hashlib.sha256(l[s:s + 65536]).hexdigest()]
if what == "snap":
    open(keep, "w").write(" ".join(h))
    off = gogpa if gogpa < (4 << 30) else gogpa - (4 << 30) + low
    w = ram(pid0, True)
    w[p + off:p + off + 8] = b"SMIOGO!!"
    print("canaries: host 0 RAM [0x%x, +4 MiB), lender-b RAM [0x%x, +64 KiB) hashed; go written at host 0 0x%x" % (p + g, s, p + off))
else:
    same = open(keep).read() == " ".join(h)
    print("canaries %s" % ("unchanged" if same else "CHANGED"))
    sys.exit(0 if same else 1)
PY
faults0=$("$SMARTIO" iommu --host 2 faults --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
t0=$(date +%s%N)
"$SMARTIO" vm run --host 0 --mem 512M --low 256M --cpus 2 --device lender-b:nvme0 --name nvmevm \
	--console "$WORK/console4" --cmd "$guest_cmd" >"$WORK/run4" 2>&1 &
vm4=$!
# The guest waits at its console (`read x`) where the test checks the host's
# side; `vm console` relays this test's lines to it (fd 7, a FIFO).
mkfifo "$WORK/in4"
trap '' PIPE     # a guest gone early: writes to fd 7 fail, the checks say why
for _ in $(seq 100); do [ -S "$SMARTIO_CLUSTER/vms/$vm4.console" ] && break; sleep 0.1; done
"$SMARTIO" vm console nvmevm <"$WORK/in4" >"$WORK/con4" 2>&1 &
con4=$!
exec 7>"$WORK/in4"
# Borrowed when enabled (docs/vm.md): attached, the device is only reserved
# for the VM until the guest's nvme driver sets Bus Master; the pool shows
# which, watched from the start of the VM until the borrow.
: >"$WORK/pool4"
for _ in $(seq 600); do
	"$SMARTIO" devices 2>/dev/null | grep '^0x000c0200 ' >>"$WORK/pool4" || true
	grep -q ' lent ' "$WORK/pool4" && break
	kill -0 "$vm4" 2>/dev/null || break
	sleep 0.1
done
for _ in $(seq 600); do
	grep -qE 'fio-verify-passed|SMARTIO-EXIT' "$WORK/console4" 2>/dev/null && break
	kill -0 "$vm4" 2>/dev/null || break
	sleep 0.2
done
t1=$(date +%s%N)
echo "# guest with the borrowed NVMe: boot + mkfs + files + fio: $(( (t1 - t0) / 1000000 )) ms wall"
# While it runs: what the VM's device needed of the parent, after all that I/O.
"$SMARTIO" vm stats --host 0 --json >"$WORK/stats.json" 2>"$OUT" || true
"$SMARTIO" vm stats --host 0 >>"$OUT" 2>&1 || true
sed 's/^/# /' "$OUT"
json_check "vm stats: the device needed only its start-up messages (ATTACH, the enabling VM_CMD, 1 per BAR, 1 per vector), none per I/O" \
	"$WORK/stats.json" 'len(d) == 1 and d[0]["fdid"] == "0x000c0200" and d[0]["messages"] == 2 + d[0]["bars"] + d[0]["vectors"]'
json_check "vm stats: borrowed once, when the guest enabled it" \
	"$WORK/stats.json" 'd[0]["state"] == "borrowed" and d[0]["borrows"] == 1'
check "vm list while the guest drives it" "$SMARTIO" vm list
expect "vm list shows the VM's device borrowed" "^$vm4 +0 +nvmevm +0x000c0200:borrowed\$"
json_check "vm stats: thousands of interrupts relayed to the guest" \
	"$WORK/stats.json" 'd[0]["interrupts"] > 1000'
cp "$WORK/pool4" "$OUT"
expect "before its driver enabled it, the pool showed the NVMe reserved for host 0's VM, not borrowed" \
	'^0x000c0200 +2 +02:00.0 +nvme0 +010802 +reserved +vm@host 0'
expect "then lent to host 0" '^0x000c0200 +2 .* lent +host 0'
# The guest goes on (its first `read x`) to the isolation case: the tool
# unbinds Linux's driver (Bus Master cleared: returned) and sets Bus Master
# itself (borrowed again, #2); Linux's driver later binds with it still set.
echo >&7 || true
# Isolation: the guest's tool waits for our go once its good Identify passed.
for _ in $(seq 300); do
	grep -qE 'waiting for go|SMARTIO-EXIT' "$WORK/console4" 2>/dev/null && break
	kill -0 "$vm4" 2>/dev/null || break
	sleep 0.2
done
vmphys=$(sed -n 's/.*VM RAM: 512 MiB at \(0x[0-9a-f]*\).*/\1/p' "$SMARTIO_CLUSTER/host-0.log" | tail -n1)
stray=$(sed -n 's/.*stray PRP \(0x[0-9a-f]*\).*/\1/p' "$WORK/console4" | tail -n1)
gogpa=$(sed -n 's/.*waiting for go at guest-physical \(0x[0-9a-f]*\).*/\1/p' "$WORK/console4" | tail -n1)
canary() {
	python3 "$WORK/canary.py" "$1" "$(cat "$SMARTIO_CLUSTER/host-0.pid")" \
		"$(cat "$SMARTIO_CLUSTER/host-2.pid")" "${vmphys:-0}" $((512 << 20)) $((256 << 20)) \
		"${stray:-0}" "${gogpa:-0}" "$WORK/canary.snap"
}
check "isolation: canaries outside the guest hashed, the guest told to go" canary snap
for _ in $(seq 300); do
	grep -qE 'isolation-done|SMARTIO-EXIT' "$WORK/console4" 2>/dev/null && break
	kill -0 "$vm4" 2>/dev/null || break
	sleep 0.2
done
t2=$(date +%s%N)
echo "# isolation case in the guest (unbind, own queues, 2 Identify, rebind): $(( (t2 - t1) / 1000000 )) ms wall"
check "isolation: no byte of the canaries outside the guest changed" canary same
"$SMARTIO" iommu --host 2 faults --json >"$WORK/faults.json" 2>>"$OUT" || true
sed 's/^/# /' "$WORK/faults.json"
json_check "isolation: lender-b's IOMMU recorded the stray write of 02:00.0 at the stray IOVA ($stray)" \
	"$WORK/faults.json" "d['total'] > $faults0 and any(f['requester'] == '02:00.0' and f['access'] == 'write' and int(f['iova'], 16) == ${stray:-1} and f['reason'] == 'not present' for f in d['recent'])"
# The guest resets the device (sysfs reset: FLR; Linux's reset path first
# disables it, clearing Bus Master), which returns it; its driver's reset_done
# enables it again, which borrows it again: the files are intact. Then the
# driver unbinds (Bus Master cleared): returned, reserved again.
echo >&7 || true
for _ in $(seq 300); do
	grep -qE 'guest-unbound|SMARTIO-EXIT' "$WORK/console4" 2>/dev/null && break
	sleep 0.2
done
check "after the guest's reset and unbind: the pool" "$SMARTIO" devices
expect "the NVMe is reserved for host 0's VM again, not borrowed" \
	'^0x000c0200 +2 .* reserved +vm@host 0'
"$SMARTIO" vm stats --host 0 --json >"$WORK/stats2.json" 2>"$OUT" || true
json_check "vm stats: reserved, after three borrows (boot, the isolation tool's enable, the driver's after the reset)" \
	"$WORK/stats2.json" 'd[0]["state"] == "reserved" and d[0]["borrows"] == 3'
check_fails "while reserved for the VM, host 1 cannot borrow it" \
	"$SMARTIO" borrow lender-b:nvme0 --host 1
expect "it says why" 'busy: .*reserved for a VM'
check_fails "nor can the VM's own host, outside the VM" "$SMARTIO" borrow lender-b:nvme0 --host 0
check "vm list after the unbind" "$SMARTIO" vm list
expect "vm list shows it reserved" "^$vm4 +0 +nvmevm +0x000c0200:reserved\$"
# The driver binds again: borrowed again (#4), the files intact. The guest
# then runs an interactive shell on its console: `vm console` drives it.
echo >&7 || true
printf 'echo hello-$((6*7))\npoweroff -f\n' >&7 || true
exec 7>&-
if wait "$con4"; then st=0; else st=$?; fi
wait "$vm4" || true
cp "$WORK/con4" "$OUT"
[ "$st" = 0 ] && ok "vm console ends when the VM powers off" || not_ok "vm console ends when the VM powers off (status $st)"
expect "vm console relayed the shell's commands and output" '^hello-42' 'after-rebind-sums-ok'
cat "$WORK/run4" "$WORK/console4" >"$OUT" 2>/dev/null || true
expect "the guest's files were intact after the reset returned and re-borrowed the device" \
	'after-reset-sums-ok' 'guest-unbound'
expect "vm run --device lender-b:nvme0: the guest's workload passed" 'fio-verify-passed'
expect "Linux's nvme driver bound it with I/O queues" 'nvme nvme0: pci function 0000:' \
	'nvme nvme0: [1-9][0-9]*/[0-9]+/[0-9]+ default/read/poll queues'
expect "its interrupts are MSI-X, admin and I/O vectors" 'PCI-MSI.*nvme0q0' 'PCI-MSI.*nvme0q1'
expect "ext4 on it: the files' checksums hold after a remount" \
	'EXT4-fs \(nvme0n1\): mounted' 'f1: OK' 'f2: OK' 'f3: OK' 'f4: OK'
expect "fio randrw with crc32c verification passed" 'fio-verify-passed' 'err= *0'
expect "the guest's RAM is split: 256 MiB below 4 GiB, 256 MiB at 4 GiB" \
	'100000000-10fffffff : System RAM'
expect "Identify into a page of the guest's above 4 GiB arrived (the high DMA window)" \
	'Identify into our page at guest-physical 0x1[0-9a-f]{8} \(above 4 GiB\): status 0x0 \(Success\), vendor 0x534d'
expect "isolation: Identify with PRP1 past guest RAM completed with Data Transfer Error" \
	'Identify with PRP1 0x[0-9a-f]+ beyond guest RAM: status 0x4 .*Data Transfer Error.*refused' \
	'stray-dma-refused'
expect "isolation: Linux's nvme driver took the device back and reads from it" \
	'given back to Linux.s nvme driver' 'nvme-works-again'
# QEMU's end closed its connections; the parent returns the device on a worker.
for _ in $(seq 50); do
	"$SMARTIO" devices 2>/dev/null | grep -Eq '^0x000c0200 +2 +.*available' && break
	sleep 0.1
done
grep -h "VM device\|VM:\|for a VM" "$SMARTIO_CLUSTER"/host-[02].log >"$OUT" 2>&1 || true
expect "the parent borrowed it with the guest's RAM as DMA window; lender-b mirrors guest-physical addresses" \
	'VM device 0x000c0200 attached for pid [0-9]+: reserved' \
	'02:00.0 reserved for a VM on host 0' \
	'VM device 0x000c0200 borrowed for pid [0-9]+ \(the guest enabled it, #1\): DMA window 0x[0-9a-f]+ -> RAM 0x[0-9a-f]+.* 256 MiB at 0, 256 MiB at 4 GiB' \
	"host 0's VM: 02:00.0 DMAs at guest-physical \[0x0, \+256 MiB\)" \
	"host 0's VM: 02:00.0 DMAs at guest-physical \[0x100000000, \+256 MiB\)" \
	'VM device 0x000c0200 returned \(the guest cleared Bus Master\)' \
	'VM device 0x000c0200 borrowed for pid [0-9]+ \(the guest enabled it, #2\)' \
	'VM device 0x000c0200 borrowed for pid [0-9]+ \(the guest enabled it, #3\)' \
	'VM device 0x000c0200 borrowed for pid [0-9]+ \(the guest enabled it, #4\)' \
	'VM device 0x000c0200 no longer reserved'
check "after the VM: the pool" "$SMARTIO" devices
expect "the NVMe went back to lender-b when QEMU ended" '^0x000c0200 +2 +.*available'

# Hot-add into a running guest (PCIe hot-plug: a spare root port, the guest's
# PCI hot-plug), the guest uses it, hot-remove gives it back to the lender.
# The device is lender-b's SR-IOV VF: the guest sees the IDs Linux's PCI core
# gives a VF (the PF's vendor, the VF Device ID), its nvme driver binds it and
# fio verifies its I/O.
"$SMARTIO" vm run --host 0 --mem 512M --name hp --console "$WORK/console5" --cmd '
echo waiting-for-device
for i in $(seq 1200); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
dmesg | grep -E "nvme|0000:0[0-9]:00.0"
mkfs.ext4 -q -F /dev/nvme0n1 && echo hot-added-device-works
fio --name=vf --filename=/dev/nvme0n1 --size=4M --rw=randrw --bs=4k --ioengine=libaio \
	--direct=1 --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 >/tmp/fio.out 2>&1 &&
	echo vf-fio-verify-passed || cat /tmp/fio.out
sleep 600' >/dev/null 2>&1 &
vm5=$!
for _ in $(seq 300); do
	grep -q waiting-for-device "$WORK/console5" 2>/dev/null && break
	sleep 0.2
done
t0=$(date +%s%N)
check "vm hot-add hp --device lender-b:nvme0-vf1 (a VF)" \
	"$SMARTIO" vm hot-add hp --device lender-b:nvme0-vf1
for _ in $(seq 300); do
	grep -qE 'hot-added-device-works|SMARTIO-EXIT' "$WORK/console5" 2>/dev/null && break
	sleep 0.2
done
t1=$(date +%s%N)
for _ in $(seq 300); do
	grep -qE 'vf-fio-verify-passed|fio: |SMARTIO-EXIT' "$WORK/console5" 2>/dev/null && break
	sleep 0.2
done
t2=$(date +%s%N)
echo "# hot-add of the VF until mkfs on it: $(( (t1 - t0) / 1000000 )) ms; fio verify on it: $(( (t2 - t1) / 1000000 )) ms wall"
cp "$WORK/console5" "$OUT"
expect "the running guest found the VF (hot-plug) with a VF's IDs: vendor 534d, VF device 0011" \
	'pci 0000:0[0-9]:00.0: \[534d:0011\]'
expect "the guest's nvme driver bound the VF and made /dev/nvme0n1 of it" \
	'nvme nvme0: pci function' 'hot-added-device-works'
expect "fio randrw with crc32c verification on the VF passed" 'vf-fio-verify-passed'
check "vm hot-remove hp --device lender-b:nvme0-vf1" \
	"$SMARTIO" vm hot-remove hp --device lender-b:nvme0-vf1
for _ in $(seq 100); do
	"$SMARTIO" devices 2>/dev/null | grep -Eq '^0x000c0201 +2 +.*available' && break
	sleep 0.1
done
check "after hot-remove: the pool" "$SMARTIO" devices
expect "the VF went back to lender-b" '^0x000c0201 +2 +.*available'
check_fails "hot-add to an unknown VM fails" "$SMARTIO" vm hot-add novm --device lender-b:nvme0
"$SMARTIO" vm stop hp >/dev/null 2>&1 || true
wait "$vm5" || true

# Cold migration: files written by a guest on host 0 are found, checksums
# intact, by the same VM started on host 1 (a borrower without an IOMMU) with
# the same device.
"$SMARTIO" vm run --host 0 --mem 512M --name mig --device lender-b:nvme0 \
	--console "$WORK/console6" --cmd 'set -e
mkfs.ext4 -q -F /dev/nvme0n1; mount /dev/nvme0n1 /mnt
head -c 700000 /dev/urandom >/mnt/a; head -c 90000 /dev/urandom >/mnt/b
(cd /mnt && sha256sum a b >SUMS); umount /mnt; sync; echo written; sleep 600' \
	>/dev/null 2>&1 </dev/null &
vm6=$!
for _ in $(seq 300); do
	grep -qE 'written|SMARTIO-EXIT' "$WORK/console6" 2>/dev/null && break
	sleep 0.2
done
check "vm migrate mig --to-host 1: the guest there verifies the files" \
	"$SMARTIO" vm migrate mig --to-host 1 --console "$WORK/console7" \
	--cmd 'set -e; mount -o ro /dev/nvme0n1 /mnt; cd /mnt; sha256sum -c SUMS'
wait "$vm6" || true
cp "$WORK/console7" "$OUT" 2>/dev/null || true
expect "the files and checksums are found again on host 1" 'a: OK' 'b: OK'
grep -h "VM device 0x000c0200" "$SMARTIO_CLUSTER/host-1.log" >"$OUT" 2>&1 || true
expect "host 1's daemon (no IOMMU: identity window) borrowed it when the guest enabled it" \
	'VM device 0x000c0200 borrowed for pid [0-9]+ .*DMA window 0x0 -> RAM'

# A lender without an IOMMU cannot mirror guest-physical addresses: refused.
check_fails "vm run --device lender-a:nvme0 (lender without IOMMU) is refused" \
	"$SMARTIO" vm run --host 0 --mem 128M --device lender-a:nvme0 --cmd true
expect "QEMU's smartio-mdev says why" \
	'smartio-mdev: device 0x00080400: the MDEV parent of host 0 refused: .*its lender has no IOMMU'
check "after the refusal: the pool" "$SMARTIO" devices
expect "lender-a's NVMe is available again" '^0x00080400 +1 +.*available'

check_fails "vm run on a host the cluster lacks fails" "$SMARTIO" vm run --host 9 --cmd true
check_fails "vm run --mem beyond 64G is a usage error" \
	"$SMARTIO" vm run --host 0 --mem 65G --cmd true
check "cluster down" "$SMARTIO" cluster down
check "only the daemons' logs are left" only_logs_left
tap_done
