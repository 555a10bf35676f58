#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Integration test of the host NVMe driver through real daemons: `smartio
# nvme` (list, identify, write and read back a file) and the real nvme-cli
# through the LD_PRELOAD shim (id-ctrl and id-ns as JSON, compared with the
# topology tests/topologies/nvme-local.yaml). TAP output.
#
# Binaries come from $SMARTIO_BUILD_DIR (default ./build).
set -euo pipefail

. "$(dirname "$0")/tap.sh"

SHIM=$(realpath "$BUILD/tools/nvme-shim/libsmartio-nvme-shim.so")
TOPO=$(realpath "$SRC/tests/topologies/nvme-local.yaml")
[ -e "$SHIM" ] || { echo "Bail out! no shim at $SHIM"; exit 2; }
export SMARTIO_HOST=0

# What the topology says (kept in one place: the test compares against it).
SERIAL=SMARTIO-NVMETEST-01
NS_BYTES=$((64 * 1024 * 1024))
LBA=4096
NBLK=$((NS_BYTES / LBA))

# An ASan-built shim needs the sanitizer runtime loaded first into the
# uninstrumented nvme binary.
PRELOAD=$SHIM
# (grep without -q reads all of nm's output: with pipefail, an early exit
# would fail the pipeline by SIGPIPE once the symbol list is long.)
if nm -D "$SHIM" 2>/dev/null | grep '__asan_init' >/dev/null; then
	rt=$(${CC:-clang} -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null || true)
	[ -e "$rt" ] || rt=$(clang -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null || true)
	PRELOAD="$rt $SHIM"
	export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
fi
nvme_shim() { LD_PRELOAD="$PRELOAD" nvme "$@"; }

echo "1..15"
check "cluster up with nvme-local.yaml" "$SMARTIO" cluster up "$TOPO"

check "nvme list" "$SMARTIO" nvme list
if has "nvme0 +nvme +$SERIAL" "nvme1 +none \(lendable\)"; then ok "list: driver state"; else not_ok "list: driver state"; fi

check "nvme identify (text)" "$SMARTIO" nvme identify --dev nvme0
if has "serial +$SERIAL" "namespaces +2" "ns 1 .*$NBLK blocks of $LBA bytes" "ns 2 "; then
	ok "identify: serial, namespaces, geometry"
else
	not_ok "identify: serial, namespaces, geometry"
fi

check_fails "identify of a lendable device fails" "$SMARTIO" nvme identify --dev nvme1
if has "no NVMe driver bound"; then ok "lendable: explained"; else not_ok "lendable: explained"; fi

# Write a file that is not a multiple of the block size, across many messages.
head -c 1000000 /dev/urandom >"$WORK/in.bin"
check "nvme write -i FILE" "$SMARTIO" nvme write --dev 01:00.0 --ns 2 --lba 77 -i "$WORK/in.bin"
blocks=$(( (1000000 + LBA - 1) / LBA ))
check "nvme read -o FILE" "$SMARTIO" nvme read --dev nvme0 --ns 2 --lba 77 --count $blocks -o "$WORK/out.bin"
if cmp -n 1000000 "$WORK/in.bin" "$WORK/out.bin" >"$OUT" 2>&1 &&
   [ "$(tail -c +1000001 "$WORK/out.bin" | tr -d '\0' | wc -c)" -eq 0 ]; then
	ok "read back identical (last block zero-padded)"
else
	not_ok "read back identical (last block zero-padded)"
fi

# dd-style: a file in at a block offset, back out with skip/count, zeroes over it.
head -c 262144 /dev/urandom >"$WORK/dd.in"
check "nvme dd if=FILE of=nvme seek=" "$SMARTIO" nvme dd --dev nvme0 if="$WORK/dd.in" of=nvme bs=8192 seek=100
check "nvme dd if=nvme of=FILE skip= count=" \
	"$SMARTIO" nvme dd --dev nvme0 if=nvme of="$WORK/dd.out" bs=8192 skip=100 count=32
check "dd round trip identical" cmp "$WORK/dd.in" "$WORK/dd.out"
check "nvme dd if=/dev/zero" "$SMARTIO" nvme dd --dev nvme0 if=/dev/zero of=nvme bs=8192 seek=100 count=1
check "dd reads the zeroes back" sh -c "'$SMARTIO' nvme dd --dev nvme0 if=nvme of=- bs=8192 skip=100 count=1 2>/dev/null | cmp - /dev/zero -n 8192"
check_fails "dd with bs not a multiple of the block size" \
	"$SMARTIO" nvme dd --dev nvme0 if="$WORK/dd.in" of=nvme bs=1000

# The real nvme-cli through the shim.
if ! command -v nvme >/dev/null; then
	for i in 1 2 3 4; do echo "ok $((n + i)) - # SKIP nvme-cli not installed"; done
	n=$((n + 4))
else
	if nvme_shim id-ctrl /dev/smartio-nvme0 -o json >"$WORK/ctrl.json" 2>"$OUT"; then
		ok "nvme id-ctrl -o json"
	else
		not_ok "nvme id-ctrl -o json"
	fi
	json_check "id-ctrl: serial, model, nn, mdts, sqes/cqes" "$WORK/ctrl.json" \
		"d['sn'].strip() == '$SERIAL' and d['mn'].strip() == 'smartio emulated NVMe' and d['nn'] == 2 and d['mdts'] == 5 and d['sqes'] == 0x66 and d['cqes'] == 0x44 and d['vid'] == 0x534d"
	if nvme_shim id-ns /dev/smartio-nvme0 -n 1 -o json >"$WORK/ns.json" 2>"$OUT"; then
		ok "nvme id-ns -n 1 -o json"
	else
		not_ok "nvme id-ns -n 1 -o json"
	fi
	json_check "id-ns: nsze/ncap from ns_size and lba, lbaf ds 12" "$WORK/ns.json" \
		"d['nsze'] == $NBLK and d['ncap'] == $NBLK and d['lbafs'][d['flbas'] & 0xf]['ds'] == 12"
fi

check "cluster down" "$SMARTIO" cluster down

tap_done
