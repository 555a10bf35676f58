#!/usr/bin/env bash
# Run each libFuzzer target for a bounded time, one after the other, seeded
# with the corpora the build generated (BUILD/fuzz/seeds, fuzz/gen_seeds.c),
# and print each target's edges covered and executions in a table.
#
#   fuzz/run.sh BUILD_DIR [SECONDS] [TARGET...]
#
# SECONDS per target: default $FUZZ_SECONDS, else 60. TARGETs: proto topo
# nvme daemon (default: all). What the fuzzers found and the corpora they grew
# stay in $FUZZ_OUT (default BUILD_DIR/fuzz/out/TARGET/: corpus/, log, and
# crash-*, leak-*, timeout-*, oom-* artifacts). fuzz_daemon starts real
# daemons for hosts 1 and 2: $SMARTIOD, else BUILD_DIR/../build's smartiod.
# Exits 1 if any target crashed, leaked, hung or tripped a sanitizer.
set -uo pipefail
build=${1:-build-fuzz}
secs=${2:-${FUZZ_SECONDS:-60}}
shift $(( $# < 2 ? $# : 2 ))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(proto topo nvme daemon)
out=${FUZZ_OUT:-$build/fuzz/out}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

failed=0
rows=()
for t in "${targets[@]}"; do
	exe="$build/fuzz/fuzz_$t"
	seeds="$build/fuzz/seeds/$t"
	dir="$out/$t"
	if [ ! -x "$exe" ] || [ ! -d "$seeds" ]; then
		echo "fuzz/run.sh: no $exe or $seeds (build with -Dfuzz=true first)" >&2
		exit 2
	fi
	mkdir -p "$dir/corpus"
	args=(-max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$dir/")
	case $t in
	proto|nvme) args+=(-max_len=65536) ;;
	# The daemons' own logging (refused HELLOs, closed peers) is noise here;
	# sanitizer reports and the harness's messages still come through.
	daemon) args+=(-max_len=16384 -close_fd_mask=2) ;;
	esac
	echo "== fuzz_$t for ${secs}s (log: $dir/log)"
	# New inputs go to the first directory; the seeds are only read.
	"$exe" "${args[@]}" "$dir/corpus" "$seeds" >"$dir/log" 2>&1
	rc=$?
	cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log")
	corp=$(ls "$dir/corpus" | wc -l)
	status=ok
	if [ $rc -ne 0 ]; then
		failed=1
		art=$(ls -t "$dir"/crash-* "$dir"/leak-* "$dir"/timeout-* "$dir"/oom-* 2>/dev/null | head -1)
		status="FAILED (exit $rc${art:+, $art})"
		grep -E 'ERROR|SUMMARY|fuzz_daemon:|runtime error' "$dir/log" | head -5
	fi
	rows+=("$(printf '%-12s %8s %8s %12s %8s %7s  %s' "fuzz_$t" "${cov:-?}" "${ft:-?}" \
		"${execs:-?}" "${rate:-?}" "$corp" "$status")")
done

echo
printf '%-12s %8s %8s %12s %8s %7s  %s\n' target edges features executions exec/s corpus status
for r in "${rows[@]}"; do
	echo "$r"
done
if [ $failed -ne 0 ]; then
	echo "fuzz/run.sh: findings above; inputs kept in $out" >&2
	exit 1
fi
echo "no crashes, leaks or sanitizer findings"
