#!/usr/bin/env bash
# Cluster start-up time (3 and 60 hosts), and the idle CPU and RSS of the
# 60-host cluster. usage: bench/cluster.sh BUILD_DIR [--json FILE]
set -euo pipefail
build=${1:-build}
json=""
[ "${2:-}" = "--json" ] && json=${3:?--json needs a file}
here=$(cd "$(dirname "$0")/.." && pwd)
smartio="$build/tools/smartio/smartio"
idle_secs=${IDLE_SECS:-10}
tmp=$(mktemp -d)
trap 'SMARTIO_CLUSTER=$tmp/c3 "$smartio" cluster down >/dev/null 2>&1 || true;
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
hz=$(getconf CLK_TCK)
c0=$(cpu_ticks "${pids[@]}")
w0=$(now)
sleep "$idle_secs"    # measuring idleness: the wait *is* the measurement
c1=$(cpu_ticks "${pids[@]}")
w1=$(now)
idle_pct=$(echo "100 * ($c1 - $c0) / $hz / ($w1 - $w0)" | bc -l)
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
printf 'daemon RSS, 60 hosts:        %6.1f MiB total, %.0f KiB per daemon\n' \
	"$(echo "$rss_kb/1024" | bc -l)" "$(echo "$rss_kb/$n" | bc -l)"
printf 'daemon PSS, 60 hosts:        %6.1f MiB total, %.0f KiB per daemon\n' \
	"$(echo "$pss_kb/1024" | bc -l)" "$(echo "$pss_kb/$n" | bc -l)"
printf 'processes left after down:   %d\n' "$left"
if [ -n "$json" ]; then
	printf '{"benchmark":"cluster","startup_s":{"3":%.4f,"60":%.4f},"idle_cpu_pct_60":%.3f,"rss_kib_60_total":%d,"rss_kib_per_daemon":%.0f,"pss_kib_60_total":%d,"left_after_down":%d}\n' \
		"$t3" "$t60" "$idle_pct" "$rss_kb" "$(echo "$rss_kb/$n" | bc -l)" "$pss_kb" "$left" > "$json"
fi
