#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Integration test of `smartio mount`: a host's NVMe namespaces as files
# through FUSE, used by ordinary tools — dd at odd offsets and lengths, fio
# (psync, verify), mkfs.ext4 + mount -o loop, and ext4 files that survive a
# cluster restart on a file-backed namespace (tests/topologies/nvme-file.yaml),
# and an NVMe borrowed over an NTB (Device Lending, when the build has it),
# with ext4 on the borrowed drive surviving a cluster restart (lend-file.yaml).
# Error cases: bad mount point, no such host, a host without an NVMe driver,
# no FUSE, the daemon going away (EIO, logged), umount of something else.
# TAP output.
#
# Needs FUSE (/dev/fuse, fuse3) and, for the loop mounts, root; what cannot
# run is skipped. Binaries come from $SMARTIO_BUILD_DIR (default ./build).
set -euo pipefail

. "$(dirname "$0")/tap.sh"

if [ ! -w /dev/fuse ] || { [ "$(id -u)" -ne 0 ] && ! command -v fusermount3 >/dev/null; }; then
	echo "1..0 # SKIP FUSE not available (/dev/fuse, fuse3)"
	exit 0
fi
if "$SMARTIO" mount --help 2>&1 | grep -q "built without FUSE"; then
	echo "1..0 # SKIP smartio built without libfuse3"
	exit 0
fi
ROOT=0
[ "$(id -u)" -eq 0 ] && command -v mkfs.ext4 >/dev/null && command -v losetup >/dev/null && ROOT=1

MNT=$WORK/mnt
EXT=$WORK/ext
LOG=$WORK/mount.log
mkdir -p "$MNT" "$EXT" "$WORK/disk"
sed "s|@BACKING@|$WORK/disk/nvme0|" "$SRC/tests/topologies/nvme-file.yaml" >"$WORK/topo.yaml"

# Undo whatever a failure left behind before tap.sh stops the cluster.
mount_cleanup() {
	if mountpoint -q "$EXT" 2>/dev/null; then umount "$EXT" || umount -l "$EXT" || true; fi
	if [ -e "$MNT/nvme0n1" ]; then
		losetup -j "$MNT/nvme0n1" -O NAME -n 2>/dev/null | xargs -r -n1 losetup -d || true
	fi
	if mountpoint -q "$MNT" 2>/dev/null; then
		"$SMARTIO" umount "$MNT" >/dev/null 2>&1 || fusermount3 -u -z "$MNT" 2>/dev/null || true
	fi
	tap_cleanup
}
trap mount_cleanup EXIT
trap 'exit 130' INT   # so that the cleanup runs on a signal too (mounts, loop devices)
trap 'exit 143' TERM

skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
size_of() { stat -c %s "$1"; }

check "cluster up (file-backed namespaces)" "$SMARTIO" cluster up "$WORK/topo.yaml"

# ---- errors before anything is mounted ----
check "mount --help" "$SMARTIO" mount --help
expect "help: names the files and umount" "nvme<K>n<NSID>" "umount"
check_fails "mount on a file" "$SMARTIO" mount --host 0 "$WORK/topo.yaml"
expect "not a directory: explained" "is not a directory"
check_fails "mount of a host that does not exist" "$SMARTIO" mount --host 9 "$MNT"
expect "no such host: explained" "no such host"
check_fails "mount of a host without an NVMe driver" "$SMARTIO" mount --host 1 "$MNT"
expect "no NVMe: explained" "no NVMe namespace" "lendable"
check_fails "umount of a directory that is not a smartio mount" "$SMARTIO" umount "$MNT"
# No FUSE: a private mount namespace with an empty /dev.
if [ "$ROOT" -eq 1 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	check_fails "mount without /dev/fuse" unshare -m sh -c \
		"mount -t tmpfs none /dev && exec '$SMARTIO' mount --host 0 '$MNT'"
	expect "no FUSE: says to install fuse3" "FUSE is not available.*install fuse3"
else
	skip "mount without /dev/fuse" "needs root and unshare"
	skip "no FUSE: says to install fuse3" "needs root and unshare"
fi

# ---- the mount ----
check "mount --host 0 (returns once ready)" "$SMARTIO" mount --host 0 --log "$LOG" "$MNT"
expect "mount lists the files" "nvme0n1 +67108864 bytes" "nvme0n2 " "nvme1n1 +8388608 bytes .*512"
check_fails "mount over a smartio mount" "$SMARTIO" mount --host 0 "$MNT"
expect "already mounted: explained" "already a smartio mount"
if [ "$(ls "$MNT" | tr '\n' ' ')" = "nvme0n1 nvme0n2 nvme1n1 " ]; then
	ok "one file per namespace, in controller order"
else
	ls -la "$MNT" >"$OUT" 2>&1; not_ok "one file per namespace, in controller order"
fi
if [ "$(size_of "$MNT/nvme0n1")" -eq 67108864 ] && [ "$(size_of "$MNT/nvme1n1")" -eq 8388608 ]; then
	ok "stat: size = blocks x LBA size"
else
	not_ok "stat: size = blocks x LBA size"
fi

# dd at odd offsets and lengths: partial blocks at both ends, many messages.
head -c 300007 /dev/urandom >"$WORK/odd.bin"
for f in nvme0n2 nvme1n1; do
	for off in 1 4095 1000001; do
		if dd if="$WORK/odd.bin" of="$MNT/$f" bs=7777 seek=$off oflag=seek_bytes conv=notrunc \
			status=none 2>"$OUT" &&
		   dd if="$MNT/$f" bs=65536 skip=$off count=300007 iflag=skip_bytes,count_bytes \
			status=none 2>>"$OUT" | cmp - "$WORK/odd.bin" >>"$OUT" 2>&1; then
			ok "dd $f at byte $off: read back identical"
		else
			not_ok "dd $f at byte $off: read back identical"
		fi
	done
done
# The bytes around a partial write are untouched (read-modify-write).
dd if=/dev/zero of="$MNT/nvme1n1" bs=4096 count=1 conv=notrunc status=none
printf 'smartio' | dd of="$MNT/nvme1n1" bs=1 seek=1001 conv=notrunc status=none
if [ "$(dd if="$MNT/nvme1n1" bs=1 skip=1000 count=9 status=none | od -An -c | tr -s ' ')" = \
     " \0 s m a r t i o \0" ]; then
	ok "a 7-byte write leaves its neighbours alone"
else
	not_ok "a 7-byte write leaves its neighbours alone"
fi
# Punching a hole zeroes exactly its bytes (Write Zeroes + partial blocks).
head -c 20000 /dev/urandom >"$WORK/r.bin"
dd if="$WORK/r.bin" of="$MNT/nvme1n1" conv=notrunc status=none
if fallocate -p -o 1001 -l 10007 "$MNT/nvme1n1" >"$OUT" 2>&1 &&
   cmp -n 1001 "$WORK/r.bin" "$MNT/nvme1n1" >>"$OUT" 2>&1 &&
   cmp -n 10007 -i 1001 /dev/zero "$MNT/nvme1n1" >>"$OUT" 2>&1 &&
   cmp -n 8992 -i 11008 "$WORK/r.bin" "$MNT/nvme1n1" >>"$OUT" 2>&1; then
	ok "fallocate --punch-hole at odd offsets zeroes exactly the range"
else
	not_ok "fallocate --punch-hole at odd offsets zeroes exactly the range"
fi
check "direct I/O (O_DIRECT) works" dd if="$WORK/odd.bin" of="$MNT/nvme0n2" bs=4096 count=8 \
	oflag=direct conv=notrunc,fsync status=none
check_fails "write past the end fails (ENOSPC)" dd if=/dev/zero of="$MNT/nvme1n1" bs=512 \
	seek=16384 count=1 conv=notrunc status=none
check_fails "the size cannot change (truncate)" truncate -s 1M "$MNT/nvme1n1"

if command -v fio >/dev/null; then
	check "fio --ioengine=psync randwrite + verify, 2 jobs" fio --name=verify \
		--filename="$MNT/nvme0n2" --ioengine=psync --rw=randwrite --bs=4k --size=4M \
		--numjobs=2 --offset_increment=8M --verify=crc32c --do_verify=1 --group_reporting --verify_state_save=0
	check "fio --ioengine=psync randrw 512..12k + verify" fio --name=mixed \
		--filename="$MNT/nvme1n1" --ioengine=psync --rw=randrw --bsrange=512-12k \
		--size=2M --verify=md5 --do_verify=1 --verify_state_save=0
else
	skip "fio --ioengine=psync randwrite + verify, 2 jobs" "fio not installed"
	skip "fio --ioengine=psync randrw 512..12k + verify" "fio not installed"
fi

# ---- ext4 on a loop device over the FUSE file, across a cluster restart ----
EXT_CHECKS=("mkfs.ext4 on nvme0n1" "mount -o loop" "write files and sync" "umount the loop mount"
	"smartio umount" "the mount and its server are gone" "cluster down" "cluster up again"
	"mount again" "mount -o loop again" "files intact after the restart" "umount the loop mount")
if [ "$ROOT" -eq 1 ]; then
	check "${EXT_CHECKS[0]}" mkfs.ext4 -q -F "$MNT/nvme0n1"
	check "${EXT_CHECKS[1]}" mount -o loop "$MNT/nvme0n1" "$EXT"
	check "${EXT_CHECKS[2]}" sh -c "cp '$WORK/odd.bin' '$EXT/odd.bin' && mkdir '$EXT/dir' &&
		seq 1 20000 >'$EXT/dir/seq' && sha256sum '$EXT/odd.bin' '$EXT/dir/seq' >'$WORK/sums' && sync"
	check "${EXT_CHECKS[3]}" umount "$EXT"
	check "${EXT_CHECKS[4]}" "$SMARTIO" umount "$MNT"
	if ! mountpoint -q "$MNT" && ! pgrep -f "smartio:host0" >/dev/null &&
	   ! grep -q " $MNT " /proc/self/mountinfo; then
		ok "${EXT_CHECKS[5]}"
	else
		not_ok "${EXT_CHECKS[5]}"
	fi
	check "${EXT_CHECKS[6]}" "$SMARTIO" cluster down
	check "${EXT_CHECKS[7]}" "$SMARTIO" cluster up "$WORK/topo.yaml"
	check "${EXT_CHECKS[8]}" "$SMARTIO" mount --host 0 --log "$LOG" "$MNT"
	check "${EXT_CHECKS[9]}" mount -o loop,ro "$MNT/nvme0n1" "$EXT"
	check "${EXT_CHECKS[10]}" sh -c "cd / && sha256sum -c '$WORK/sums'"
	check "${EXT_CHECKS[11]}" umount "$EXT"
else
	for c in "${EXT_CHECKS[@]}"; do skip "$c" "loop mounts need root"; done
	"$SMARTIO" umount "$MNT" >/dev/null 2>&1 || true
	"$SMARTIO" mount --host 0 --log "$LOG" "$MNT" >/dev/null
fi

# ---- the daemon goes away under the mount: EIO and a log line; then it is back ----
check "cluster down under the mount" "$SMARTIO" cluster down
check_fails "a read while the daemon is down fails" \
	dd if="$MNT/nvme0n1" of=/dev/null bs=4096 count=1 iflag=direct status=none
expect "... with EIO" "Input/output error"
cp "$LOG" "$OUT"
expect "... and a log line" "nvme0n1: read of 1 blocks at LBA 0: .* -> EIO"
check "cluster up again" "$SMARTIO" cluster up "$WORK/topo.yaml"
check "the mount reconnects" dd if="$MNT/nvme0n1" of=/dev/null bs=4096 count=1 iflag=direct status=none
check "smartio umount" "$SMARTIO" umount "$MNT"
check "cluster down" "$SMARTIO" cluster down

# ---- a borrowed NVMe (Device Lending), when this build has it ----
LEND_CHECKS=("back-to-back cluster up" "borrow the lender's NVMe for host 0"
	"mount finds the borrowed controller" "... it is the borrowed one"
	"dd on the borrowed drive: read back identical"
	"return refused while mounted, even with --unbind" "... the error names the mount and its pid"
	"smartio umount (borrowed)" "return the NVMe" "borrow it again and mount"
	"return --force while mounted" "... the mount's I/O fails (EIO)" "umount after a forced return"
	"cluster down (back-to-back)")
if "$SMARTIO" devices --help >/dev/null 2>&1; then
	check "${LEND_CHECKS[0]}" "$SMARTIO" cluster up "$SRC/topologies/back-to-back.yaml"
	fdid=$("$SMARTIO" devices --json 2>/dev/null | python3 -c \
		'import json,sys; print([d["fdid"] for d in json.load(sys.stdin) if d["class"] == "010802"][0])' \
		2>/dev/null || echo none)
	check "${LEND_CHECKS[1]}" "$SMARTIO" borrow "$fdid" --host 0
	bdf=$(grep -Eo "is [0-9a-f]{2}:[0-9a-f]{2}\.[0-7]" "$OUT" | cut -c4- || true)
	# Plain mount: the borrowed controller is found through the driver like a local one.
	check "${LEND_CHECKS[2]}" "$SMARTIO" mount --host 0 --log "$LOG" "$MNT"
	expect "... it is the borrowed one" "nvme0n1 .*${bdf:-none} ns 1"
	if dd if="$WORK/odd.bin" of="$MNT/nvme0n1" bs=7777 seek=4095 oflag=seek_bytes conv=notrunc \
		status=none 2>"$OUT" &&
	   dd if="$MNT/nvme0n1" bs=65536 skip=4095 count=300007 iflag=skip_bytes,count_bytes \
		status=none 2>>"$OUT" | cmp - "$WORK/odd.bin" >>"$OUT" 2>&1; then
		ok "${LEND_CHECKS[3]}"
	else
		not_ok "${LEND_CHECKS[3]}"
	fi
	check_fails "${LEND_CHECKS[4]}" "$SMARTIO" return "$fdid" --host 0 --unbind
	expect "${LEND_CHECKS[5]}" "held by smartio mount $MNT \(pid [0-9]+\)" "--force"
	check "${LEND_CHECKS[6]}" "$SMARTIO" umount "$MNT"
	check "${LEND_CHECKS[7]}" "$SMARTIO" return "$fdid" --host 0 --unbind
	check "${LEND_CHECKS[8]}" sh -c "'$SMARTIO' borrow '$fdid' --host 0 &&
		'$SMARTIO' mount --host 0 --log '$LOG' '$MNT'"
	check "${LEND_CHECKS[9]}" "$SMARTIO" return "$fdid" --host 0 --force
	check_fails "${LEND_CHECKS[10]}" dd if="$MNT/nvme0n1" of=/dev/null bs=4096 count=1
	check "${LEND_CHECKS[11]}" "$SMARTIO" umount "$MNT"
	check "${LEND_CHECKS[12]}" "$SMARTIO" cluster down
else
	for c in "${LEND_CHECKS[@]}"; do skip "$c" "no Device Lending in this build"; done
fi

# ---- ext4 on a *borrowed* NVMe (file-backed at the lender), across a restart ----
BEXT_CHECKS=("lend-file cluster up" "borrow the file-backed NVMe" "mount the borrower's namespaces"
	"mkfs.ext4 on the borrowed nvme0n1" "mount -o loop (borrowed)" "write files and sync (borrowed)"
	"umount the loop mount (borrowed)" "smartio umount, return" "cluster down (lend-file)"
	"cluster up again (lend-file)" "borrow again" "mount again (borrowed)"
	"mount -o loop again (borrowed)" "files intact after the restart (borrowed)"
	"umount, smartio umount, return" "cluster down (lend-file, end)")
if "$SMARTIO" devices --help >/dev/null 2>&1 && [ "$ROOT" -eq 1 ]; then
	sed "s|@BACKING@|$WORK/disk/lent|" "$SRC/tests/topologies/lend-file.yaml" >"$WORK/lend.yaml"
	lend_fdid() {
		"$SMARTIO" devices --json 2>/dev/null | python3 -c \
		'import json,sys; print([d["fdid"] for d in json.load(sys.stdin) if d["class"] == "010802"][0])' \
		2>/dev/null || echo none
	}
	check "${BEXT_CHECKS[0]}" "$SMARTIO" cluster up "$WORK/lend.yaml"
	fdid=$(lend_fdid)
	check "${BEXT_CHECKS[1]}" "$SMARTIO" borrow "$fdid" --host 0
	check "${BEXT_CHECKS[2]}" "$SMARTIO" mount --host 0 --log "$LOG" "$MNT"
	check "${BEXT_CHECKS[3]}" mkfs.ext4 -q -F "$MNT/nvme0n1"
	check "${BEXT_CHECKS[4]}" mount -o loop "$MNT/nvme0n1" "$EXT"
	check "${BEXT_CHECKS[5]}" sh -c "cp '$WORK/odd.bin' '$EXT/lent.bin' &&
		seq 5 30000 >'$EXT/seq' && cd '$EXT' && sha256sum lent.bin seq >'$WORK/lsums' && sync"
	check "${BEXT_CHECKS[6]}" umount "$EXT"
	check "${BEXT_CHECKS[7]}" sh -c "'$SMARTIO' umount '$MNT' && '$SMARTIO' return '$fdid' --host 0 --unbind"
	check "${BEXT_CHECKS[8]}" "$SMARTIO" cluster down
	check "${BEXT_CHECKS[9]}" "$SMARTIO" cluster up "$WORK/lend.yaml"
	fdid=$(lend_fdid)
	check "${BEXT_CHECKS[10]}" "$SMARTIO" borrow "$fdid" --host 0
	check "${BEXT_CHECKS[11]}" "$SMARTIO" mount --host 0 --log "$LOG" "$MNT"
	check "${BEXT_CHECKS[12]}" mount -o loop,ro "$MNT/nvme0n1" "$EXT"
	check "${BEXT_CHECKS[13]}" sh -c "cd '$EXT' && sha256sum -c '$WORK/lsums'"
	check "${BEXT_CHECKS[14]}" sh -c "umount '$EXT' && '$SMARTIO' umount '$MNT' &&
		'$SMARTIO' return '$fdid' --host 0 --unbind"
	check "${BEXT_CHECKS[15]}" "$SMARTIO" cluster down
else
	for c in "${BEXT_CHECKS[@]}"; do skip "$c" "needs Device Lending and root (loop mounts)"; done
fi

# The detached servers logged to $LOG: only the expected EIO lines, no sanitizer reports.
cp "$LOG" "$OUT"
expect_not "the servers' log has no sanitizer report" "AddressSanitizer|runtime error|Sanitizer"

tap_done
