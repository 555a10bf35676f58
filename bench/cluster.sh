#!/usr/bin/env bash
# Cluster start-up time (3 and 60 hosts), and the idle CPU and RSS of the
# 60-host cluster.
# usage: bench/cluster.sh BUILD_DIR [--json FILE] [--clients N]
# --clients N (issue 15): the idle measurement also has the NVMe manager on
# host 0 and N `smartio-nvme bench` clients on hosts 1..N attached to it -
# each with its session, a queue pair and a buffer, waiting for a go file
# that comes only after the measurement (a 10 ms check of the file) - and the
# CPU of the daemons, the manager and the clients is given apart.
set -euo pipefail
build=${1:-build}
shift || true
json=""
nclients=0
while [ $# -gt 0 ]; do
	case $1 in
	--json) json=${2:?--json needs a file}; shift 2 ;;
	--clients) nclients=${2:?--clients needs a number}; shift 2 ;;
	*) echo "bench/cluster.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
smartio="$build/tools/smartio/smartio"
idle_secs=${IDLE_SECS:-10}
tmp=$(mktemp -d)
nvme="$build/tools/smartio-nvme/smartio-nvme"
procs=()     # the manager's and the clients' `smartio exec` processes
trap 'touch "$tmp/go"; for p in "${procs[@]}"; do kill "$p" 2>/dev/null || true; done
      for p in "${procs[@]}"; do wait "$p" 2>/dev/null || true; done
      SMARTIO_CLUSTER=$tmp/c3 "$smartio" cluster down >/dev/null 2>&1 || true;
      SMARTIO_CLUSTER=$tmp/c60 "$smartio" cluster down >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

startup() {   # dir topology-or-empty -> seconds
	local t0 t1
	t0=$(now)
	# (inside $(...) set -e does not apply: fail explicitly, or a failed
	# start-up would be timed as a fast one)
	SMARTIO_CLUSTER=$1 "$smartio" cluster up ${2:+"$2"} >/dev/null ||
		{ echo "bench/cluster.sh: cluster up ${2:-(default)} failed" >&2; exit 1; }
	t1=$(now)
	echo "$t1 - $t0" | bc -l
}

pids_of() { cat "$1"/host-*.pid; }

cpu_ticks() {  # sum of utime+stime of the given pids
	local s=0 p
	for p in "$@"; do
		s=$((s + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "$s"
}

t3=$(startup "$tmp/c3" "")
SMARTIO_CLUSTER=$tmp/c3 "$smartio" cluster down >/dev/null
t60=$(startup "$tmp/c60" "$here/topologies/cluster-60.yaml")

mapfile -t pids < <(pids_of "$tmp/c60")
n=${#pids[@]}
if [ "$n" -ne 60 ]; then
	echo "bench/cluster.sh: expected 60 daemons, found $n pid files" >&2
	exit 1
fi
# A process and its children (`smartio exec` forks the program).
with_children() {
	local p
	for p in "$@"; do echo "$p"; pgrep -P "$p" || true; done
}
mgr_pids=()
cli_pids=()
if [ "$nclients" -gt 0 ]; then
	SMARTIO_CLUSTER=$tmp/c60 "$smartio" exec --host 0 -- "$nvme" manager -d nvme0 \
		--ready-file "$tmp/mgr.ready" >"$tmp/mgr.log" 2>&1 &
	procs+=($!)
	for _ in $(seq 400); do [ -e "$tmp/mgr.ready" ] && break; sleep 0.05; done
	[ -e "$tmp/mgr.ready" ] || { cat "$tmp/mgr.log" >&2; echo "bench/cluster.sh: no manager" >&2; exit 1; }
	fdid=$(sed -n 's/.*manager of \(0x[0-9a-f]*\):.*/\1/p' "$tmp/mgr.log")
	for h in $(seq 1 "$nclients"); do
		SMARTIO_CLUSTER=$tmp/c60 "$smartio" exec --host "$h" -- "$nvme" bench -d "$fdid" \
			--ios 1 --qd 1 --cq device --ready-file "$tmp/ready.$h" --go-file "$tmp/go" \
			>"$tmp/c.$h.log" 2>&1 &
		procs+=($!)
	done
	for _ in $(seq 1200); do
		[ "$(ls "$tmp"/ready.* 2>/dev/null | wc -l)" -eq "$nclients" ] && break
		sleep 0.05
	done
	[ "$(ls "$tmp"/ready.* 2>/dev/null | wc -l)" -eq "$nclients" ] ||
		{ cat "$tmp"/c.*.log >&2; echo "bench/cluster.sh: not all clients attached" >&2; exit 1; }
	sleep 1      # let the start-up settle before measuring idleness
	mapfile -t mgr_pids < <(with_children "${procs[0]}")
	mapfile -t cli_pids < <(with_children "${procs[@]:1}")
fi
hz=$(getconf CLK_TCK)
c0=$(cpu_ticks "${pids[@]}")
m0=$(cpu_ticks "${mgr_pids[@]}")
k0=$(cpu_ticks "${cli_pids[@]}")
w0=$(now)
sleep "$idle_secs"    # measuring idleness: the wait *is* the measurement
c1=$(cpu_ticks "${pids[@]}")
m1=$(cpu_ticks "${mgr_pids[@]}")
k1=$(cpu_ticks "${cli_pids[@]}")
w1=$(now)
idle_pct=$(echo "100 * ($c1 - $c0) / $hz / ($w1 - $w0)" | bc -l)
mgr_pct=$(echo "100 * ($m1 - $m0) / $hz / ($w1 - $w0)" | bc -l)
cli_pct=$(echo "100 * ($k1 - $k0) / $hz / ($w1 - $w0)" | bc -l)
all_pct=$(echo "$idle_pct + $mgr_pct + $cli_pct" | bc -l)
if [ "$nclients" -gt 0 ]; then
	touch "$tmp/go"      # the clients do their one read and leave
	bad=0
	for p in "${procs[@]:1}"; do wait "$p" || bad=$((bad + 1)); done
	[ "$bad" -eq 0 ] || echo "bench/cluster.sh: $bad client(s) failed" >&2
	kill "${procs[0]}" 2>/dev/null || true
	wait "${procs[0]}" 2>/dev/null || true
	procs=()
fi
rss_kb=0
pss_kb=0   # RSS counts the shared binary and libraries once per daemon; PSS splits them
for p in "${pids[@]}"; do
	rss_kb=$((rss_kb + $(awk '/^VmRSS:/ {print $2}' "/proc/$p/status")))
	pss_kb=$((pss_kb + $(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup")))
done
SMARTIO_CLUSTER=$tmp/c60 "$smartio" cluster down >/dev/null
left=$(pgrep -fc "$tmp/c60" || true)

printf 'cluster start-up, 3 hosts:   %6.3f s\n' "$t3"
printf 'cluster start-up, 60 hosts:  %6.3f s (%.1f ms per host)\n' "$t60" "$(echo "1000*$t60/60" | bc -l)"
printf 'idle CPU, 60 hosts, %ss:     %6.2f %% of one CPU (target < 5 %%; resolution %.2f %%)\n' \
	"$idle_secs" "$idle_pct" "$(echo "100 / $hz / ($w1 - $w0)" | bc -l)"
if [ "$nclients" -gt 0 ]; then
	printf '  with the manager and %d idle clients attached: manager %.2f %%, clients %.2f %% (%d processes), all %.2f %% (target < 2 %%)\n' \
		"$nclients" "$mgr_pct" "$cli_pct" "${#cli_pids[@]}" "$all_pct"
fi
printf 'daemon RSS, 60 hosts:        %6.1f MiB total, %.0f KiB per daemon\n' \
	"$(echo "$rss_kb/1024" | bc -l)" "$(echo "$rss_kb/$n" | bc -l)"
printf 'daemon PSS, 60 hosts:        %6.1f MiB total, %.0f KiB per daemon\n' \
	"$(echo "$pss_kb/1024" | bc -l)" "$(echo "$pss_kb/$n" | bc -l)"
printf 'processes left after down:   %d\n' "$left"
if [ -n "$json" ]; then
	printf '{"benchmark":"cluster","startup_s":{"3":%.4f,"60":%.4f},"idle_cpu_pct_60":%.3f,"idle_clients":%d,"idle_cpu_pct_manager":%.3f,"idle_cpu_pct_clients":%.3f,"idle_cpu_pct_all":%.3f,"rss_kib_60_total":%d,"rss_kib_per_daemon":%.0f,"pss_kib_60_total":%d,"left_after_down":%d}\n' \
		"$t3" "$t60" "$idle_pct" "$nclients" "$mgr_pct" "$cli_pct" "$all_pct" "$rss_kb" \
		"$(echo "$rss_kb/$n" | bc -l)" "$pss_kb" "$left" > "$json"
fi
