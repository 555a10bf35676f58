#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Integration test of the accelerator driver through the daemon and the CLI:
# a private cluster from tests/topologies/accel-local.yaml, then `smartio
# accel` list/info/fill/copy/checksum/pingpong/bench, with data verified by
# CRC32C (a known value for a known fill, and equal checksums of source and
# destination after every copy). TAP output; exits non-zero on any failure.
#
# Binaries come from $SMARTIO_BUILD_DIR (default ./build).
set -euo pipefail

. "$(dirname "$0")/tap.sh"

TOPO=$(realpath "$SRC/tests/topologies/accel-local.yaml")
[ -r "$TOPO" ] || { echo "Bail out! no topology at $TOPO (set SMARTIO_SOURCE_DIR)"; exit 2; }
export SMARTIO_HOST=0

crc_of() { "$SMARTIO" accel checksum --dev "$1" --src "$2" --len "$3" | sed -n 's/^crc32c //p'; }
same() {
	local desc=$1 a=$2 b=$3
	if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$desc ($a)"; else
		echo "#   '$a' != '$b'" >"$OUT"; not_ok "$desc"; fi
}

A=accel
check "cluster up (accel-local)" "$SMARTIO" cluster up "$TOPO"

check "accel list" "$SMARTIO" $A list
expect "list: the kept accelerators are bound, the lendable one is not" \
	"gpu0 +64M .*smartio-accel" "gpu1 +64M .*smartio-accel" "gpu2 +64M .*smartio-accel" \
	"gpu3 .*none \(lendable\)"
check "accel info" "$SMARTIO" $A info --dev gpu0
expect "info: memory size and BAR2 bus address" "memory 67108864 bytes \(64 MiB\), BAR2 at bus address 0x[0-9a-f]+"
check "accel info --json" "$SMARTIO" $A info --dev gpu1 --json
expect "info --json" '"memory":67108864' '"bar2":"0x[0-9a-f]+"'
check_fails "a lendable accelerator has no driver" "$SMARTIO" $A info --dev gpu3
expect "the error says why" "no accelerator driver bound"

# 64 KiB of a known pattern: CRC32C computed independently (Python, bitwise).
LEN=65536
check "fill device memory" "$SMARTIO" $A fill --dev gpu0 --dst dev:0x1000 --len $LEN --pattern 0x0123456789abcdef
same "checksum of the fill matches the reference CRC32C" "$(crc_of gpu0 dev:0x1000 $LEN)" 0x207bf5c7

check "copy device -> RAM" "$SMARTIO" $A copy --dev gpu0 --src dev:0x1000 --dst ram:0x8000 --len $LEN
expect "copy reports bytes and ok" "^copy: $LEN bytes, ok"
same "RAM copy checksums equal" "$(crc_of gpu0 ram:0x8000 $LEN)" 0x207bf5c7
check "copy RAM -> device (other offset)" "$SMARTIO" $A copy --dev gpu0 --src ram:0x8000 --dst dev:0x100000 --len $LEN
same "device copy checksums equal" "$(crc_of gpu0 dev:0x100000 $LEN)" 0x207bf5c7

# Peer-to-peer: gpu0's engine writes gpu1's BAR2 by its bus address.
check "copy gpu0 -> gpu1 peer-to-peer under the switch" \
	"$SMARTIO" $A copy --dev gpu0 --src dev:0x1000 --dst gpu1:bar2+0x2000 --len $LEN
same "gpu1 has the data" "$(crc_of gpu1 dev:0x2000 $LEN)" 0x207bf5c7
check "copy gpu1 -> gpu2 through the root complex" \
	"$SMARTIO" $A copy --dev gpu1 --src dev:0x2000 --dst gpu2:bar2 --len $LEN
same "gpu2 has the data" "$(crc_of gpu2 dev:0 $LEN)" 0x207bf5c7

check_fails "offset beyond device memory is refused" \
	"$SMARTIO" $A copy --dev gpu0 --src dev:0x3fff000 --dst ram:0 --len 8192
expect "the error says why" "outside device memory"
check_fails "a bus address nobody decodes fails on the device" \
	"$SMARTIO" $A copy --dev gpu0 --src 0xfed00000 --dst ram:0 --len 4096
expect "with the device's status" "read fault"

check "pingpong gpu0 <-> gpu1 (switch), 1000 iterations" \
	"$SMARTIO" $A pingpong --dev gpu0 --peer gpu1 --iters 1000
expect "pingpong reports round trip and one-way" "1000 iterations in [0-9]+ ns: round trip [1-9][0-9]* ns average, one-way ~[0-9]+ ns \(ok\)"
check "pingpong gpu2 <-> gpu0 (root) --json" \
	"$SMARTIO" $A pingpong --dev gpu2 --peer gpu0 --iters 200 --json
expect "pingpong --json" '"iters":200' '"avg_rtt_ns":[1-9][0-9]*' '"status":"ok"'
check_fails "pingpong with a lendable peer" "$SMARTIO" $A pingpong --dev gpu0 --peer gpu3 --iters 10

check "bench --json" "$SMARTIO" $A bench --dev gpu0 --json
expect "bench covers 4K..16M both ways" '"size":4096,"direction":"ram_to_dev"' \
	'"size":16777216,"direction":"dev_to_ram"' '"gbps":[0-9.]+'
check_fails "usage error: copy without --len" "$SMARTIO" $A copy --dev gpu0 --src ram:0 --dst dev:0
check "accel --help" "$SMARTIO" $A --help
expect "help lists the commands" "pingpong --peer" "bench"

check "cluster down" "$SMARTIO" cluster down
if only_logs_left; then ok "only the hosts' logs are left"; else not_ok "only the hosts' logs are left"; fi

tap_done
