#!/usr/bin/env bash
# bash completion (tools/completion/smartio.bash), TAP: commands and options
# come from the tools' --help, hosts and devices from a running cluster.
set -uo pipefail
BUILD=$(realpath "${SMARTIO_BUILD_DIR:-build}")
SRC=$(realpath "${SMARTIO_SOURCE_DIR:-.}")
export PATH="$BUILD/tools/smartio:$BUILD/tools/smartio-nvme:$PATH"
export SMARTIO_CLUSTER
SMARTIO_CLUSTER=$(mktemp -d)/c
trap 'smartio cluster down >/dev/null 2>&1; rm -rf "${SMARTIO_CLUSTER%/c}"' EXIT
# shellcheck disable=SC1091  # the script is checked on its own
source "$SRC/tools/completion/smartio.bash"

n=0; failed=0
# complete LINE: COMPREPLY for LINE (a trailing space starts a new word).
complete_line() {
	local line=$1
	read -r -a COMP_WORDS <<<"$line"
	[[ $line == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	if [[ ${COMP_WORDS[0]} == smartio-nvme ]]; then _smartio_nvme; else _smartio; fi
	echo "${COMPREPLY[*]}"
}
# expect LINE WORD...: every WORD is among the completions of LINE.
expect() {
	local line=$1 got w miss=""
	shift
	got=" $(complete_line "$line") "
	for w in "$@"; do
		[[ $got == *" $w "* ]] || miss="$miss $w"
	done
	n=$((n + 1))
	if [ -n "$miss" ]; then
		failed=$((failed + 1))
		echo "not ok $n - '$line' lacks$miss (got:$got)"
	else
		echo "ok $n - '$line' completes $*"
	fi
}

expect "smartio " cluster devices borrow return nvme mount exec predict
expect "smartio bo" borrow
expect "smartio cluster " up down status restart
expect "smartio devices --" --json --host --dir
expect "smartio nvme " list identify read write dd
expect "smartio czodiac " share unshare
expect "smartio-nvme " manager identify dd bench arbstat devq
expect "smartio-nvme dd --m" --mode --manager-node
smartio cluster up >/dev/null || { echo "Bail out! cluster up failed"; exit 2; }
expect "smartio lspci --host " 0 1 2
expect "smartio borrow " 0x00080400 0x000c0200 nvme0 gpu0
expect "smartio-nvme identify -d " 0x00080400 nvme0
echo "1..$n"
[ "$failed" -eq 0 ]
