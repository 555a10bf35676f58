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
	SMARTIO_CLUSTER=$1 "$smartio" cluster up ${2:+"$2"} >/dev/null
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
hz=$(getconf CLK_TCK)
c0=$(cpu_ticks "${pids[@]}")
w0=$(now)
sleep "$idle_secs"    # measuring idleness: the wait *is* the measurement
c1=$(cpu_ticks "${pids[@]}")
w1=$(now)
idle_pct=$(echo "100 * ($c1 - $c0) / $hz / ($w1 - $w0)" | bc -l)
rss_kb=0
for p in "${pids[@]}"; do
	rss_kb=$((rss_kb + $(awk '/^VmRSS:/ {print $2}' "/proc/$p/status")))
done
SMARTIO_CLUSTER=$tmp/c60 "$smartio" cluster down >/dev/null
left=$(pgrep -fc "$tmp/c60" || true)

printf 'cluster start-up, 3 hosts:   %6.3f s\n' "$t3"
printf 'cluster start-up, 60 hosts:  %6.3f s (%.1f ms per host)\n' "$t60" "$(echo "1000*$t60/60" | bc -l)"
printf 'idle CPU, 60 hosts, %ss:     %6.2f %% of one CPU (target < 5 %%)\n' "$idle_secs" "$idle_pct"
printf 'daemon RSS, 60 hosts:        %6.1f MiB total, %.0f KiB per daemon\n' \
	"$(echo "$rss_kb/1024" | bc -l)" "$(echo "$rss_kb/60" | bc -l)"
printf 'processes left after down:   %d\n' "$left"
if [ -n "$json" ]; then
	printf '{"benchmark":"cluster","startup_s":{"3":%.4f,"60":%.4f},"idle_cpu_pct_60":%.3f,"rss_kib_60_total":%d,"rss_kib_per_daemon":%.0f,"left_after_down":%d}\n' \
		"$t3" "$t60" "$idle_pct" "$rss_kb" "$(echo "$rss_kb/60" | bc -l)" "$left" > "$json"
fi
