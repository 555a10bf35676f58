#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The distributed NVMe driver with device-memory buffers (docs/nvme-driver.md,
# "Device memory as the buffer"): `smartio-nvme dd --buffer bus:ADDR` reads
# blocks of a remote NVMe (shared through its manager) straight into an
# accelerator's BAR2 and writes them from there. The accelerator's checksum
# program over that range equals the written data's, and `smartio route`
# shows the NVMe's PRP address ends in the accelerator's BAR, not in RAM.
# TAP output.
set -euo pipefail

. "$(dirname "$0")/tap.sh"
. "$(dirname "$0")/nvme_manager.sh"

# host 0 (client) keeps its own gpu0; lender-a has nvme0 and a lendable gpu0;
# lender-b another lendable gpu0. Each pair of hosts has its own cable, so
# lender-a reaches lender-b without crossing host 0.
cat >"$WORK/p2p.yaml" <<'YAML'
version: 1
hosts:
  - id: 0
    name: client
    iommu: false
    ports:
      - ntb: {name: ntb0, model: PXH830, cable: {gen: 3, width: 8}, connect: lender-a.ntb0}
      - ntb: {name: ntb1, model: PXH830, connect: lender-b.ntb0}
      - device: {name: gpu0, model: accel, lendable: false, params: {memory: 16M}}
  - id: 1
    name: lender-a
    ports:
      - ntb: {name: ntb0, model: PXH830}
      - ntb: {name: ntb1, model: PXH830, connect: lender-b.ntb1}
      - switch:
          name: chassis
          ports:
            - device: {name: nvme0, model: nvme, params: {ns_size: 128M, lba: 512}}
            - device: {name: gpu0, model: accel, params: {memory: 128M}}
  - id: 2
    name: lender-b
    ports:
      - ntb: {name: ntb0, model: PXH830}
      - ntb: {name: ntb1, model: PXH830}
      - device: {name: gpu0, model: accel, params: {memory: 16M}}
YAML
export SMARTIO_HOST=0
MIB=1048576
crc_of() { "$SMARTIO" accel checksum --dev "$1" --src "$2" --len "$3" | sed -n 's/^crc32c //p'; }
bar2() { "$SMARTIO" accel info --dev "$1" --json | sed -n 's/.*"bar2":"\(0x[0-9a-f]*\)".*/\1/p'; }
crc_file() {
	python3 - "$1" <<'PY'
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
}
same() {
	local desc=$1 a=$2 b=$3
	if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$desc ($a)"; else
		echo "#   '$a' != '$b'" >"$OUT"; not_ok "$desc"; fi
}

check_fails "usage: --buffer that is no bus address" "$NVME" dd --mode read --count 8 \
	--buffer gpu0
expect "says what it should be" "should be bus:ADDR"

check "cluster up" "$SMARTIO" cluster up "$WORK/p2p.yaml"
check "manager of lender-a's nvme0" start_manager 1 8:nvme0
check "dd write: 1 MiB of pattern (seed 7) through RAM" on_host 0 dd -d 8:nvme0 --mode write \
	--lba 0 --count 2048 --seed 7
check "dd read of it into a file, for the expected checksum" on_host 0 dd -d 8:nvme0 \
	--mode read --lba 0 --count 2048 --of "$WORK/want.bin"
WANT=$(crc_file "$WORK/want.bin")
check_fails "usage: --buffer with --check" on_host 0 dd -d 8:nvme0 --mode read --check \
	--count 8 --buffer bus:0x1000
expect "refused" "keeps the data in device memory"

# (1) the client's own accelerator: the NVMe's DMA crosses the NTB into host 0's
# bus and ends in gpu0's BAR2.
B=$(bar2 gpu0)
check "the local gpu0's BAR2 is known ($B)" test -n "$B"
check_fails "an address in no device BAR is refused" on_host 0 dd -d 8:nvme0 --mode read --count 8 \
	--buffer bus:0x10000000 --json
on_host 0 dd -d 8:nvme0 --mode read --lba 0 --count 2048 --qd 8 --buffer "bus:$((B + MIB))" \
	--json >"$WORK/dd.json" 2>"$OUT" || true
json_check "dd read into gpu0's memory (peer-to-peer)" "$WORK/dd.json" \
	'd["mode"] == "read" and d["count"] == 2048 and d["buffer_ioaddr"].startswith("0x")'
same "the accelerator's checksum of its memory is the pattern's" \
	"$(crc_of gpu0 dev:$MIB $MIB)" "$WANT"
# The window the lender's NTB opened for the buffer points at host 0's bus
# address B + 1 MiB (the daemon accepted the segment only inside a BAR): what
# crosses the NTB into host 0 ends in gpu0's BAR2, no hop is host 0's RAM.
"$SMARTIO" route --host 0 --from ntb0 --addr $((B + MIB)) --len 4096 >"$OUT" 2>&1 || true
expect "the NTB's traffic to the buffer ends in gpu0's BAR2" "target: host 0 BAR2 of" "device +host 0 +[0-9a-f:.]+ +gpu0 BAR2"
if grep -qiE "target: host 0 RAM|memory +host 0" "$OUT"; then not_ok "no hop is host 0's RAM"; else
	ok "no hop is host 0's RAM"; fi

# Device memory → storage: gpu0 fills 64 KiB, dd writes them from there.
check "gpu0 fills 64 KiB" "$SMARTIO" accel fill --dev gpu0 --dst dev:0x300000 --len 65536 \
	--pattern 0x0123456789abcdef
check "dd write from gpu0's memory" on_host 0 dd -d 8:nvme0 --mode write --lba 8192 \
	--count 128 --buffer "bus:$((B + 0x300000))"
check "read back into RAM" on_host 0 dd -d 8:nvme0 --mode read --lba 8192 --count 128 \
	--of "$WORK/fill.bin"
same "the blocks hold gpu0's bytes" "$(crc_file "$WORK/fill.bin")" \
	"$(crc_of gpu0 dev:0x300000 65536)"

# (3) A queue pair from the manager in gpu0's memory, driven by gpu0's kernel
# (fig. 18 with the NVMe shared): `smartio-nvme devq` creates it and holds it,
# tests/kernels/k_nvme.so rings nvme0's doorbells through host 0's NTB window,
# the data lands in gpu0's memory.
KN=$(realpath "${SMARTIO_TEST_KERNELS:-$BUILD/tests}/k_nvme.so")
GBDF=$("$SMARTIO" accel info --dev gpu0 --json | sed -n 's/.*"dev":"\([0-9a-f:.]*\)".*/\1/p')
"$SMARTIO" exec --host 0 -- "$NVME" devq -d 8:nvme0 --bar2 "$B" --sq 0x800000 --cq 0x810000 --data 0x900000 \
	--data-len 1M --depth 32 --requester "$GBDF" >"$WORK/devq.out" 2>"$WORK/devq.err" &
DQ=$!
for _ in $(seq 200); do [ -s "$WORK/devq.out" ] && break; kill -0 $DQ 2>/dev/null || break; sleep 0.05; done
check "devq: a queue pair in gpu0's memory through the manager" grep -q "nvme.sq_db=" "$WORK/devq.out"
read -ra KARGS <"$WORK/devq.out" || true
check "gpu0's kernel reads 1 MiB through it" \
	"$SMARTIO" accel launch --dev gpu0 --json "$KN" read 0 2048 0x900000 "${KARGS[@]}"
expect "256 commands completed" '"status":"ok"' '"result":256,'
same "the accelerator's checksum of the kernel's data is the pattern's" \
	"$(crc_of gpu0 dev:0x900000 $MIB)" "$WANT"
kill -TERM $DQ 2>/dev/null || true
check "devq deletes the pair and exits 0 on SIGTERM" wait $DQ
check "it said which pair it held" grep -q "queue pair [0-9]* held" "$WORK/devq.err"
no_sqs() { on_host 0 arbstat -d 8:nvme0 --json | grep -q '"sqs":\[\]'; }
check "the controller has no I/O queue left" no_sqs
# The same in one step: `smartio accel launch --nvme-manager` runs devq itself.
check "launch --nvme-manager: the kernel reads 1 MiB on the manager's pair" \
	"$SMARTIO" accel launch --dev gpu0 --nvme-manager 8:nvme0 --queue-depth 16 --json \
	"$KN" read 0 2048 0x100000
expect "256 commands completed" '"status":"ok"' '"result":256,'
same "and the data is the pattern" "$(crc_of gpu0 dev:0x100000 $MIB)" "$WANT"
check "the pair is gone after the kernel" no_sqs
check_fails "launch --nvme-manager of no manager's device fails" \
	"$SMARTIO" accel launch --dev gpu0 --nvme-manager 8:gpu0 "$KN" read 0 8 0
check_fails "usage: --nvme and --nvme-manager together" \
	"$SMARTIO" accel launch --dev gpu0 --nvme gpu0 --nvme-manager 8:nvme0 "$KN" read 0 8 0
expect "says not both" "not both"
# A holder killed outright: the manager's liveness check reclaims its pair.
"$SMARTIO" exec --host 0 -- "$NVME" devq -d 8:nvme0 --bar2 "$B" --sq 0x800000 --cq 0x810000 \
	--data 0x900000 --data-len 1M >"$WORK/devq.out" 2>"$WORK/devq.err" &
DQ=$!
for _ in $(seq 200); do [ -s "$WORK/devq.out" ] && break; kill -0 $DQ 2>/dev/null || break; sleep 0.05; done
check_fails "a second holder's pair exists" no_sqs
# `smartio exec` forks the program: kill that child (by its pid), not exec.
kill -KILL $(cat /proc/$DQ/task/*/children) 2>/dev/null || true
wait $DQ 2>/dev/null || true
gone=1
for _ in $(seq 40); do no_sqs && { gone=0; break; }; sleep 0.25; done
check "after SIGKILL the manager reclaims it (within 10 s)" test $gone = 0

# (4) Accelerators borrowed with Device Lending as the buffer: host 0 borrows
# lender-a's gpu0 (the NVMe's own lender) and lender-b's. The buffer is the
# shadow's BAR2 as host 0's CPU sees it (our NTB window onto the lender); the
# daemon maps it for the NVMe by Device Lending's P2P rules: same lender, the
# gpu's own bus address below the chassis switch; another lender, a window of
# lender-a's NTB onto lender-b, never a window back through host 0.
brw_bdf() { sed -n 's/.* is \([0-9a-f:.]*\), driver.*/\1/p' "$OUT"; }
shadow_bar2() { "$SMARTIO" lspci --host 0 -v -s "$1" | sed -n 's/.*Memory at \([0-9a-f]*\) (64-bit, prefetchable).*/0x\1/p'; }
ram_dma() {
	"$SMARTIO" diag --all --json | python3 -c '
import json, sys
print(sum(r["bytes"] for h in json.load(sys.stdin)["hosts"] for r in h.get("ram_dma", [])
          if r["host"] == int(sys.argv[1])))' "$1"
}
check "borrow lender-a's gpu0 (Device Lending)" "$SMARTIO" borrow 1:gpu0 --host 0
GA=$(brw_bdf)
check "borrow lender-b's gpu0" "$SMARTIO" borrow 2:gpu0 --host 0
GB=$(brw_bdf)
SA=$(shadow_bar2 "$GA")
SB=$(shadow_bar2 "$GB")
check "the shadows' BAR2s on host 0 ($GA at $SA, $GB at $SB)" test -n "$SA" -a -n "$SB"
LA=$(bar2 "$GA")
check "diag --clear" "$SMARTIO" diag --all --clear
on_host 0 dd -d 8:nvme0 --mode read --lba 0 --count 2048 --qd 8 --sq device --cq device \
	--buffer "bus:$SA" --json >"$WORK/dd.json" 2>"$OUT" || true
json_check "dd read into the borrowed gpu0 of nvme0's lender" "$WORK/dd.json" \
	"d['count'] == 2048 and d['buffer_ioaddr'] == '$(printf 0x%x $((LA)))'"
echo "# the NVMe wrote to gpu0's own bus address at lender-a ($LA): peer-to-peer below the switch"
on_host 0 dd -d 8:nvme0 --mode read --lba 0 --count 2048 --qd 8 --sq device --cq device \
	--buffer "bus:$((SB + MIB))" --json >"$WORK/dd.json" 2>"$OUT" || true
json_check "dd read into the gpu0 borrowed from another lender" "$WORK/dd.json" \
	"d['count'] == 2048 and d['buffer_ioaddr'] != '$(printf 0x%x $((SB + MIB)))'"
# Read before the checksums: the accelerators' rings (descriptors) are in host 0's RAM.
same "no byte of either read crossed host 0's RAM (diag ram_dma)" "$(ram_dma 0)" 0
# Where lender-a's window for such a buffer goes: `smartio-nvme devq` keeps
# one mapped while it holds its pair (nvme.mem_bus: the memory as nvme0 sees it).
"$SMARTIO" exec --host 0 -- "$NVME" devq -d 8:nvme0 --bar2 "$SB" --sq 0x800000 --cq 0x810000 \
	--data 0x900000 --data-len 1M >"$WORK/devq.out" 2>"$WORK/devq.err" &
DQ=$!
for _ in $(seq 200); do [ -s "$WORK/devq.out" ] && break; kill -0 $DQ 2>/dev/null || break; sleep 0.05; done
MB=$(sed -n 's/.*nvme.mem_bus=\(0x[0-9a-f]*\).*/\1/p' "$WORK/devq.out")
check "a buffer on lender-b's gpu0 held mapped (mem_bus $MB)" test -n "$MB"
"$SMARTIO" route --host 1 --from nvme0 --addr $((MB + 0x900000)) --len 4096 >"$OUT" 2>&1 || true
expect "nvme0's writes to it end in lender-b's gpu0 BAR2" "target: host 2 BAR2 of" \
	"ntb +host 1 .*->host 2"
if grep -qE "^ +[0-9]+ +[a-z-]+ +host 0 " "$OUT"; then not_ok "no hop is on host 0"; else
	ok "no hop is on host 0"; fi
kill -TERM $DQ 2>/dev/null || true
check "the holder exits 0" wait $DQ
same "the accelerator's checksum is the pattern's" "$(crc_of "$GA" dev:0 $MIB)" "$WANT"
same "the other one's too" "$(crc_of "$GB" dev:$MIB $MIB)" "$WANT"
check "dd write from the borrowed gpu0's memory" on_host 0 dd -d 8:nvme0 --mode write \
	--lba 12288 --count 2048 --buffer "bus:$SA"
check "read back into RAM" on_host 0 dd -d 8:nvme0 --mode read --lba 12288 --count 2048 \
	--of "$WORK/back.bin"
same "the blocks hold the borrowed gpu0's bytes" "$(crc_file "$WORK/back.bin")" "$WANT"
check_fails "a borrowed device's registers (BAR0) are no buffer" on_host 0 dd -d 8:nvme0 \
	--mode read --count 8 --buffer "bus:$("$SMARTIO" lspci --host 0 -v -s "$GA" | \
	sed -n 's/.*Memory at \([0-9a-f]*\) (32-bit, non-prefetchable).*/0x\1/p' | head -1)"

# Issue 14's acceptance: 64 MiB NVMe -> remote (borrowed) accelerator. The data
# is random bytes from Python; its CRC32C comes from crcmod (Debian's
# python3-crcmod), the accelerator's from its own checksum program over its
# memory. Queues go to the NVMe's side (--sq/--cq device), so the counters
# of every daemon must show no DMA byte in host 0's RAM during the read.
CRCPY=/usr/bin/python3
if "$CRCPY" -c 'import crcmod.predefined' 2>/dev/null; then
	"$CRCPY" -c 'import os, sys; open(sys.argv[1], "wb").write(os.urandom(64 << 20))' \
		"$WORK/big.bin"
	BIGWANT=$("$CRCPY" -c 'import crcmod.predefined, sys
print("0x%08x" % crcmod.predefined.mkCrcFun("crc-32c")(open(sys.argv[1], "rb").read()))' \
		"$WORK/big.bin")
	check "dd write: 64 MiB of random bytes at LBA 32768" on_host 0 dd -d 8:nvme0 --mode write \
		--lba 32768 --count 131072 --qd 8 --if "$WORK/big.bin"
	rm -f "$WORK/big.bin"
	check "diag --clear" "$SMARTIO" diag --all --clear
	on_host 0 dd -d 8:nvme0 --mode read --lba 32768 --count 131072 --qd 16 --sq device \
		--cq device --buffer "bus:$SA" --json >"$WORK/dd.json" 2>"$OUT" || true
	json_check "dd read of 64 MiB into the borrowed gpu0's memory" "$WORK/dd.json" \
		"d['count'] == 131072 and d['mismatches'] == 0"
	RAM0=$(ram_dma 0)
	same "not one DMA byte in host 0's (the borrower's) RAM" "$RAM0" 0
	secs=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["seconds"])' \
		"$WORK/dd.json")
	echo "# 64 MiB NVMe -> borrowed accelerator in $secs s: $(python3 -c \
		"print('%.0f' % (64 * 1048576 / $secs / 1e6))") MB/s"
	same "the accelerator's CRC32C of 64 MiB is crcmod's of the written data" \
		"$(crc_of "$GA" dev:0 $((64 * MIB)))" "$BIGWANT"
else
	ok "64 MiB to a borrowed accelerator # SKIP no python3-crcmod (make test installs it)"
fi

# (5) TOCS'21 fig. 19 with the NVMe shared through the distributed driver:
# the accelerator borrowed with Device Lending, its kernel on a queue pair of
# the manager with SQ, CQ and data in the accelerator's memory. The NVMe's
# lender maps the queues where they are (PEER_SEG_WHERE: the accelerator at
# its lender), the kernel rings the doorbells where its lender reaches the
# NVMe (SEG_CONN_P2P), so nothing goes through host 0, the borrower.
dev_counter() {      # HOST NAME KEY: a device counter from diag --json
	"$SMARTIO" diag --all --json | python3 -c '
import json, sys
h, name, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
print(sum(v.get(key, 0) for x in json.load(sys.stdin)["hosts"] if x["host"] == h
          for v in x.get("devices", []) if v.get("name") == name))' "$@"
}
last_sq() { sed -n 's/.*device memory: SQ at \(0x[0-9a-f]*\), CQ at \(0x[0-9a-f]*\).*/\1 \2/p' \
	"$WORK/manager.log" | tail -1; }
check "diag --clear" "$SMARTIO" diag --all --clear
check "the borrowed gpu0 of nvme0's lender reads 1 MiB on a pair of the manager" \
	"$SMARTIO" accel launch --dev "$GA" --nvme-manager 8:nvme0 --queue-depth 16 --json \
	"$KN" read 0 2048 0x100000
expect "256 commands completed" '"status":"ok"' '"result":256,'
same "no DMA byte of the queues or the data in host 0's RAM" "$(ram_dma 0)" 0
# 64 bytes per SQ entry fetched, routed by lender-a: gpu0's BAR, below its switch.
reads=$(dev_counter 1 gpu0 bar_reads)
check "lender-a's gpu0 served the SQ fetches itself (bar_reads $reads >= 256 x 64)" \
	test "${reads:-0}" -ge 16384
read -r SQ CQ <<<"$(last_sq)"
check "the manager put the SQ at gpu0's own bus address at lender-a ($SQ, BAR2 $LA)" \
	python3 -c 'import sys; a, b = (int(x, 16) for x in sys.argv[1:]); sys.exit(not b <= a < b + (128 << 20))' \
	"${SQ:-0x0}" "$LA"
"$SMARTIO" route --host 1 --from nvme0 --addr "$CQ" --len 16 >"$OUT" 2>&1 || true
expect "the NVMe's CQ writes end in gpu0's BAR2 at lender-a" "target: host 1 BAR2"
if grep -qE "host 0" "$OUT"; then not_ok "no hop of them is on host 0"; else
	ok "no hop of them is on host 0"; fi
same "the data is the pattern (accelerator's checksum)" "$(crc_of "$GA" dev:0x100000 $MIB)" \
	"$WANT"
check "the pair is gone after the kernel" no_sqs
check "diag --clear" "$SMARTIO" diag --all --clear
# Lender-b's gpu0 in two steps (devq holds the pair while the route is read):
# the NVMe reaches its queues through lender-a's own NTB to lender-b, the
# kernel the doorbells through lender-b's NTB to lender-a.
"$SMARTIO" exec --host 0 -- "$NVME" devq -d 8:nvme0 --bar2 "$SB" --sq 0x800000 --cq 0x810000 \
	--data 0x100000 --data-len 1M --depth 16 --requester "$GB" >"$WORK/devq.out" 2>"$WORK/devq.err" &
DQ=$!
for _ in $(seq 200); do [ -s "$WORK/devq.out" ] && break; kill -0 $DQ 2>/dev/null || break; sleep 0.05; done
check "devq: a pair in lender-b's borrowed gpu0 through lender-a's manager" \
	grep -q "nvme.sq_db=" "$WORK/devq.out"
read -ra KARGS <"$WORK/devq.out" || true
check "its kernel reads 1 MiB through it" \
	"$SMARTIO" accel launch --dev "$GB" --json "$KN" read 0 2048 0x100000 "${KARGS[@]}"
expect "256 commands completed" '"status":"ok"' '"result":256,'
same "no DMA byte in host 0's RAM" "$(ram_dma 0)" 0
read -r SQ CQ <<<"$(last_sq)"
"$SMARTIO" route --host 1 --from nvme0 --addr "$SQ" --len 64 --read >"$OUT" 2>&1 || true
expect "the NVMe fetches the SQ from lender-b's gpu0 through lender-a's NTB" "target: host 2 BAR2"
if grep -qE "host 0" "$OUT"; then not_ok "straight to lender-b, no hop on host 0"; else
	ok "straight to lender-b, no hop on host 0"; fi
kill -TERM $DQ 2>/dev/null || true
check "devq deletes the pair on SIGTERM" wait $DQ
same "the data is the pattern" "$(crc_of "$GB" dev:0x100000 $MIB)" "$WANT"
check "the pair is gone" no_sqs

# The fio engine's buffer=: fio's buffers in gpu0's memory (its own pattern
# stores and verify loads are MMIO; the NVMe's DMA is peer-to-peer).
ENGINE="$BUILD/tools/fio/smartio-fio.so"
if [ -e "$ENGINE" ] && command -v fio >/dev/null; then
	check "fio randwrite + verify with buffer=bus: (gpu0's memory)" \
		"$SMARTIO" exec --host 0 -- fio --ioengine=external:"$(realpath "$ENGINE")" \
		--name=job --verify_state_save=0 --fdid=8:nvme0 --buffer=bus:$((B + 0x400000)) \
		--rw=randwrite --bs=4k --iodepth=8 --size=1m --offset=8m --verify=crc32c --do_verify=1
	expect "no errors, verified" "err= 0" "read: IOPS=" "write: IOPS="
	# The borrowed accelerator's memory: fio's stores and verify loads go to the
	# lender's memory object (SEG_MAP_LOCAL through the CPU's route), the NVMe's
	# DMA straight to the accelerator at its lender.
	check "fio randwrite + verify with buffer= on the borrowed gpu0" \
		"$SMARTIO" exec --host 0 -- fio --ioengine=external:"$(realpath "$ENGINE")" \
		--name=job --verify_state_save=0 --fdid=8:nvme0 --buffer=bus:$((SA + 0x400000)) \
		--rw=randwrite --bs=4k --iodepth=8 --size=1m --offset=8m --verify=crc32c --do_verify=1
	expect "no errors, verified" "err= 0" "read: IOPS=" "write: IOPS="
	check_fails "fio buffer= outside any BAR fails" \
		"$SMARTIO" exec --host 0 -- fio --ioengine=external:"$(realpath "$ENGINE")" \
		--name=job --fdid=8:nvme0 --buffer=bus:0x10000000 --rw=read --size=64k
else
	ok "fio buffer= # SKIP the engine is not built (make fio-engine) or fio is missing"
fi
tap_done
