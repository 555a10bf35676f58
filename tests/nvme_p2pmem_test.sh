#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# P2PDMA's orchestrator for the distributed NVMe driver (docs/lending.md,
# "P2P memory"): `smartio-nvme dd --buffer p2pmem` asks the client host's
# daemon for p2pmem (P2PMEM_ALLOC) and gets the published accelerator memory
# closest to the controller's way in (the NTB) by hops: the accelerator under
# the NTB's switch, not the one on a root port. The NVMe's DMA ends in that
# BAR (route), the accelerator's checksum equals the data's, and where no
# provider is reachable it fails clearly unless asked to fall back to RAM.
# In-kernel: `smartio nvme copy --buffer p2pmem` copies between two of the
# host's controllers through p2pmem near both (nvmet's p2pmem), and the
# host's RAM sees none of the data (diag's ram_dma).
# TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/nvme_manager.sh"

cat >"$WORK/p2pmem.yaml" <<'YAML'
version: 1
hosts:
  - id: 0
    name: client
    iommu: false
    ports:
      - device: {name: far, model: accel, lendable: false, params: {memory: 4M}}
      - switch:
          name: sw0
          ports:
            - ntb: {name: ntb0, model: PXH830, connect: lender-a.ntb0}
            - device: {name: near, model: accel, lendable: false, params: {memory: 4M}}
            - device: {name: nvmeA, model: nvme, lendable: false, params: {ns_size: 4M, lba: 512}}
            - device: {name: nvmeB, model: nvme, lendable: false, params: {ns_size: 4M, lba: 512}}
  - id: 1
    name: lender-a
    ports:
      - ntb: {name: ntb0, model: PXH830}
      - device: {name: nvme0, model: nvme, params: {ns_size: 16M, lba: 512}}
YAML
MIB=1048576
crc_of() { "$SMARTIO" accel checksum --host 0 --dev "$1" --src "$2" --len "$3" | sed -n 's/^crc32c //p'; }
bar2() { "$SMARTIO" accel info --host 0 --dev "$1" --json | sed -n 's/.*"bar2":"\(0x[0-9a-f]*\)".*/\1/p'; }
jq_of() { jq -r "$1" "$WORK/dd.json" 2>/dev/null || true; }
same() {
	local desc=$1 a=$2 b=$3
	if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$desc ($a)"; else
		echo "#   '$a' != '$b'" >"$OUT"; not_ok "$desc"; fi
}

check "cluster up" "$SMARTIO" cluster up "$WORK/p2pmem.yaml"
check "manager of lender-a's nvme0" start_manager 1 8:nvme0
# The providers, as diag shows them (Linux's sysfs p2pmem/): both accelerators.
"$SMARTIO" diag --host 0 --json >"$OUT" 2>&1 || true
check "diag: near and far publish their memory as p2pmem" test "$(jq -r \
	'[.hosts[0].devices[] | select(.p2pmem.published) | .name] | sort | join(",")' "$OUT")" = far,near
check "dd write: 1 MiB of pattern (seed 5) through RAM" on_host 0 dd -d 8:nvme0 --mode write \
	--lba 0 --count 2048 --seed 5
check "dd read of it into a file, for the expected checksum" on_host 0 dd -d 8:nvme0 \
	--mode read --lba 0 --count 2048 --of "$WORK/want.bin"
WANT=$(python3 - "$WORK/want.bin" <<'PY'
import sys
t = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    t.append(c)
c = 0xFFFFFFFF
for b in open(sys.argv[1], "rb").read():
    c = t[(c ^ b) & 0xFF] ^ (c >> 8)
print("0x%08x" % (c ^ 0xFFFFFFFF))
PY
)

# The NVMe's DMA to or from any RAM is counted on its host (lender-a).
# The bytes host N's devices' DMA moved to or from any host's RAM (diag's ram_dma).
ramn() { "$SMARTIO" diag --host "$1" --json | jq -r '[.hosts[0].ram_dma[].bytes] | add // 0'; }
ram1() { ramn 1; }
R0=$(ram1)
on_host 0 dd -d 8:nvme0 --mode read --lba 0 --count 2048 --qd 8 --buffer p2pmem --json \
	>"$WORK/dd.json" 2>"$OUT" || true
R1=$(ram1)
# The daemon frees the buffer when it sees dd's connection end (bounded wait).
near_free() {
	"$SMARTIO" diag --host 0 --json 2>/dev/null | jq -e \
		'.hosts[0].devices[] | select(.name == "near") | .p2pmem.available == .p2pmem.size' \
		>/dev/null
}
freed() { for _ in $(seq 40); do near_free && return 0; sleep 0.05; done; return 1; }
check "diag: the buffer is gone with dd (near's p2pmem all available again)" freed
json_check "dd read into p2pmem the orchestrator picks" "$WORK/dd.json" \
	'd["mode"] == "read" and d["count"] == 2048 and d["p2pmem"]["bus"].startswith("0x")'
NEAR=$(bar2 near)
BUS=$(jq_of .p2pmem.bus)
check "the provider is 'near' (under the NTB's switch), not 'far'" \
	python3 -c "import sys; b, n = int('$BUS', 16), int('$NEAR', 16); sys.exit(not n <= b < n + 4 * $MIB)"
check "the grant says how far: hops > 0" test "$(jq_of .p2pmem.hops)" -gt 0
OFF=$(printf '0x%x' $((BUS - NEAR)))
same "near's checksum of the buffer is the data's" "$(crc_of near "dev:$OFF" $MIB)" "$WANT"
"$SMARTIO" route --host 0 --from ntb0 --addr "$BUS" --len 4096 >"$OUT" 2>&1 || true
expect "the NVMe's traffic into host 0 ends in near's BAR2" "device +host 0 +[0-9a-f:.]+ +near BAR2"
if grep -qiE "target: host 0 RAM|memory +host 0" "$OUT"; then not_ok "no hop is host 0's RAM"; else
	ok "no hop is host 0's RAM"; fi
# 16 commands of 64 KiB: their SQEs, CQEs and PRP lists are all RAM saw.
check "diag: the NVMe's DMA moved < 64 KiB through RAM for 1 MiB of data ($((R1 - R0)) B)" \
	test $((R1 - R0)) -lt 65536
R0=$(ram1)
check "the control: the same read into host memory" on_host 0 dd -d 8:nvme0 --mode read \
	--lba 0 --count 2048 --qd 8
check "diag: that one moved all of it through RAM ($(($(ram1) - R0)) B)" \
	test $(($(ram1) - R0)) -ge $MIB
check_fails "usage: --buffer p2pmem with --check" on_host 0 dd -d 8:nvme0 --mode read --check \
	--count 8 --buffer p2pmem
expect "refused" "keeps the data in device memory"

# lender-a publishes nothing (its accelerator-less bus, the NVMe lent): no p2pmem.
check_fails "no provider reachable: a clear error" on_host 1 dd -d 8:nvme0 --mode read \
	--count 8 --buffer p2pmem
expect "says so and how to fall back" "no published device memory" "p2pmem,fallback"
check "p2pmem,fallback reads into host memory instead" on_host 1 dd -d 8:nvme0 --mode read \
	--count 8 --buffer p2pmem,fallback --json
expect "p2pmem is null" '"p2pmem":null'

# In-kernel driver: nvmeA -> nvmeB through p2pmem near both (under sw0: near).
ram0() { ramn 0; }
head -c $MIB /dev/urandom >"$WORK/a.bin"
check "nvme write 1 MiB to nvmeA (in-kernel driver)" "$SMARTIO" nvme write --host 0 --dev nvmeA \
	--lba 0 -i "$WORK/a.bin"
R0=$(ram0)
"$SMARTIO" nvme copy --host 0 --dev nvmeA --to nvmeB --lba 0 --count 2048 --buffer p2pmem \
	--json >"$WORK/copy.json" 2>"$OUT" || true
R1=$(ram0)
json_check "nvme copy --buffer p2pmem: 1 MiB through p2pmem" "$WORK/copy.json" \
	'd["bytes"] == 1048576 and d["status"] == 0 and d["p2pmem"]["hops"] > 0'
NEARBDF=$("$SMARTIO" accel info --host 0 --dev near --json | sed -n 's/.*"dev":"\([0-9a-f:.]*\)".*/\1/p')
json_check "the provider is near, the accelerator under both controllers' switch" \
	"$WORK/copy.json" "int(d['p2pmem']['provider'], 16) & 0xffff == \
	(lambda b, df: int(b, 16) << 8 | int(df.split('.')[0], 16) << 3 | int(df.split('.')[1]))(*'$NEARBDF'.split(':'))"
check "diag: host 0's RAM saw < 64 KiB of it ($((R1 - R0)) B)" test $((R1 - R0)) -lt 65536
check "nvme read nvmeB back" "$SMARTIO" nvme read --host 0 --dev nvmeB --lba 0 --count 2048 \
	-o "$WORK/b.bin"
check "nvmeB holds nvmeA's bytes" cmp "$WORK/a.bin" "$WORK/b.bin"
R0=$(ram0)
check "the control: nvme copy through host memory" "$SMARTIO" nvme copy --host 0 --dev nvmeA \
	--to nvmeB --lba 0 --to-lba 4096 --count 2048
expect "says host memory" "through host memory"
check "diag: that one moved it through RAM twice ($(($(ram0) - R0)) B)" \
	test $(($(ram0) - R0)) -ge $((2 * MIB))
check_fails "usage: --buffer junk" "$SMARTIO" nvme copy --host 0 --dev nvmeA --to nvmeB \
	--lba 0 --count 8 --buffer ram
expect "names the choices" "host, p2pmem or p2pmem,fallback"
tap_done
