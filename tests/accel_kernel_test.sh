#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Accelerator kernels through the daemon and the CLI (docs/devices.md
# "Kernels"): `smartio accel launch` runs tests/kernels/k_test.so on the
# accelerators of tests/topologies/accel-local.yaml. It writes and reads its
# own memory, stores peer-to-peer into another accelerator's BAR by bus
# address, is refused beyond its DMA limit, crashes without harming the
# daemon, is aborted at its timeout, and an image that is no kernel is
# refused. TAP output; exits non-zero on any failure.
set -euo pipefail

. "$(dirname "$0")/tap.sh"

TOPO=$(realpath "$SRC/tests/topologies/accel-local.yaml")
KDIR=${SMARTIO_TEST_KERNELS:-$BUILD/tests}
K=$(realpath "$KDIR/k_test.so")
[ -r "$K" ] || { echo "Bail out! no test kernel at $KDIR/k_test.so"; exit 2; }
export SMARTIO_HOST=0
A=accel

crc_of() { "$SMARTIO" accel checksum --dev "$1" --src "$2" --len "$3" | sed -n 's/^crc32c //p'; }
same() {
	local desc=$1 a=$2 b=$3
	if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$desc ($a)"; else
		echo "#   '$a' != '$b'" >"$OUT"; not_ok "$desc"; fi
}
result() { sed -n 's/.*"result":\(-\{0,1\}[0-9]*\).*/\1/p' "$OUT"; }
bar2() { "$SMARTIO" $A info --dev "$1" --json | sed -n 's/.*"bar2":"\(0x[0-9a-f]*\)".*/\1/p'; }

check "cluster up (accel-local)" "$SMARTIO" cluster up "$TOPO"

# Own memory: the kernel fills 64 KiB; the device's checksum program sees it
# equal to the ring engine's fill of the same bytes elsewhere.
check "launch: a kernel fills its device memory" \
	"$SMARTIO" $A launch --dev gpu0 "$K" fill 0x10000 65536 0x5a
expect "it returned the length, ok" "kernel .*k_test.so on [0-9a-f:.]+: ok, returned 65536 in [0-9.]+ ms"
check "the ring engine fills the same bytes elsewhere" \
	"$SMARTIO" $A fill --dev gpu0 --dst dev:0x40000 --len 65536 --pattern 0x5a5a5a5a5a5a5a5a
same "the kernel's bytes are the engine's" "$(crc_of gpu0 dev:0x10000 65536)" \
	"$(crc_of gpu0 dev:0x40000 65536)"
check "launch --json: peek reads its memory" \
	"$SMARTIO" $A launch --dev gpu0 --json "$K" peek 0x10000
expect "peek --json" '"op":"launch"' '"status":"ok"' '"result":6510615555426900570' \
	'"code_offset":"0x3ff[0-9a-f]{4}"'

# Peer-to-peer: gpu0's kernel stores into gpu1's BAR2 (under the switch) and
# into gpu2's (through the root complex) by bus address; each peer's own
# kernel then finds the value in its memory.
B1=$(bar2 gpu1)
B2=$(bar2 gpu2)
check "gpu0's kernel stores into gpu1's memory (switch)" \
	"$SMARTIO" $A launch --dev gpu0 --json "$K" store $((B1 + 0x3000)) 0x1234abcd
expect "the store completed" '"result":0,'
check "gpu1 sees it" "$SMARTIO" $A launch --dev gpu1 --json "$K" peek 0x3000
same "gpu1's word" "$(result)" $((0x1234abcd))
check "gpu0's kernel stores into gpu2's memory (root complex)" \
	"$SMARTIO" $A launch --dev gpu0 --json "$K" store $((B2 + 0x8)) 77
check "gpu2 sees it" "$SMARTIO" $A launch --dev gpu2 --json "$K" peek 0x8
same "gpu2's word" "$(result)" 77
check "gpu2's kernel loads gpu1's word back (DMA read)" \
	"$SMARTIO" $A launch --dev gpu2 --json "$K" load $((B1 + 0x3000))
same "the loaded word" "$(result)" $((0x1234abcd))
check "copyin: 64 KiB from gpu0 into gpu2's memory by DMA" \
	"$SMARTIO" $A launch --dev gpu2 --json "$K" copyin $(( $(bar2 gpu0) + 0x10000 )) 0x20000 65536
same "gpu2 has gpu0's bytes" "$(crc_of gpu2 dev:0x20000 65536)" "$(crc_of gpu0 dev:0x10000 65536)"

# The fabric's rules apply: beyond 2^40 (dma_bits) nothing is issued; an
# address nobody decodes is a read fault with the fabric's status.
check "a load beyond the DMA limit" "$SMARTIO" $A launch --dev gpu0 --json "$K" load $((1 << 41))
same "is refused with DMA_LIMIT" "$(result)" $(( -0x80000003 ))
check "a load nobody decodes" "$SMARTIO" $A launch --dev gpu0 --json "$K" load 0xfed00000
same "is a read fault, unsupported request" "$(result)" $(( -0x80000104 ))

# Isolation: a crash ends the kernel, not the daemon.
check_fails "a crashing kernel fails" "$SMARTIO" $A launch --dev gpu0 "$K" crash
expect "with kernel fault and its signal" "kernel fault \(it crashed\): signal 11"
check "the daemon lives on" "$SMARTIO" $A launch --dev gpu0 --json "$K" peek 0x10000
expect "and the device too" '"status":"ok"'
check_fails "a kernel that never returns is aborted at --timeout" \
	"$SMARTIO" $A launch --dev gpu1 --timeout 300 "$K" spin
expect "it says so" "timed out after 300 ms, aborted"
check "the device runs the next kernel" "$SMARTIO" $A launch --dev gpu1 "$K" fill 0 8 1
echo "not an ELF object" >"$WORK/bad.so"
check_fails "an image that is no kernel" "$SMARTIO" $A launch --dev gpu0 "$WORK/bad.so"
expect "is refused by the device" "no kernel \(the image did not load\)"
check_fails "a lendable accelerator has no driver to launch on" \
	"$SMARTIO" $A launch --dev gpu3 "$K" peek 0
check_fails "usage: launch without a kernel" "$SMARTIO" $A launch --dev gpu0
contexts() {
	local pid
	pid=$(cat "$SMARTIO_CLUSTER/host-0.pid")
	[ -n "$pid" ] && ps --ppid "$pid" -o pid=,stat=,comm= | grep accel || true
}
# The device thread waits for a finished context on one of its next passes.
for _ in $(seq 50); do [ -z "$(contexts)" ] && break; sleep 0.1; done
check "no device context is left, not even a zombie" test -z "$(contexts)"

check "cluster down" "$SMARTIO" cluster down
tap_done
