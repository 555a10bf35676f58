# SPDX-License-Identifier: MIT
# Shared by the shell tests that run the distributed NVMe driver's manager
# (docs/nvme-driver.md); sourced after tap.sh, which sets SMARTIO, BUILD, WORK.
#   on_host H ARGS...             smartio-nvme ARGS as a process of host H
#   start_manager H DEV [ARGS...] a manager of DEV on host H, in the background;
#                                 returns once it serves (bounded: 10 s), 1 if it
#                                 exited or never got ready (its log: $WORK/manager.log)
#   stop_manager                  SIGTERM and its exit status
# It installs an EXIT trap that stops the manager, then runs tap_cleanup.

NVME=$(realpath "$BUILD/tools/smartio-nvme/smartio-nvme")
[ -x "$NVME" ] || { echo "Bail out! no smartio-nvme at $NVME"; exit 2; }
MGR_PID=

on_host() { local h=$1; shift; "$SMARTIO" exec --host "$h" -- "$NVME" "$@"; }

start_manager() {
	local host=$1 dev=$2
	shift 2
	rm -f "$WORK/ready"
	"$SMARTIO" exec --host "$host" -- "$NVME" manager -d "$dev" --ready-file "$WORK/ready" \
		"$@" >"$WORK/manager.log" 2>&1 &
	MGR_PID=$!
	for _ in $(seq 200); do
		[ -e "$WORK/ready" ] && return 0
		kill -0 "$MGR_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

stop_manager() {
	[ -n "$MGR_PID" ] || return 0
	kill -TERM "$MGR_PID" 2>/dev/null || true
	local rc=0
	wait "$MGR_PID" || rc=$?
	MGR_PID=
	return $rc
}

trap 'stop_manager || true; tap_cleanup' EXIT
