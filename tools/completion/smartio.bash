# bash completion for smartio and smartio-nvme (installed as
# PREFIX/share/bash-completion/completions/smartio and .../smartio-nvme).
#
# Commands and options come from the tools' own --help, so they never drift
# from the code; host numbers and device names come from the running cluster
# (its topology.yaml and 'smartio devices --json') when one is up.

# _smartio_help_words TOOL [COMMAND]: the --long options of a --help text.
_smartio_help_words()
{
	"$@" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# The commands listed under "Commands:" in 'smartio --help'.
_smartio_commands()
{
	"$1" --help 2>/dev/null | awk '/^Commands:/ { on = 1; next }
		on && /^  [a-z]/ { print $1; next } on && !/^  / { on = 0 }'
}

# The cluster directory a command would use (its --dir, else the defaults).
_smartio_dir()
{
	local i
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		if [[ ${COMP_WORDS[i]} == --dir ]]; then
			echo "${COMP_WORDS[i + 1]}"
			return
		fi
	done
	if [[ -n ${SMARTIO_CLUSTER-} ]]; then
		echo "$SMARTIO_CLUSTER"
	elif [[ -n ${XDG_RUNTIME_DIR-} ]]; then
		echo "$XDG_RUNTIME_DIR/smartio"
	else
		echo "/tmp/smartio-$(id -u)"
	fi
}

# Host ids of the running cluster: its daemons' pid files.
_smartio_hosts()
{
	local d f
	d=$(_smartio_dir)
	for f in "$d"/host-*.pid; do
		[[ -e $f ]] || continue
		f=${f##*/host-}
		echo "${f%.pid}"
	done
}

# FDIDs and names of the device pool (only when a daemon answers).
_smartio_devices()
{
	"$1" devices --dir "$(_smartio_dir)" --json 2>/dev/null |
		grep -oE '"(fdid|name)":("[^"]*"|[0-9]+)' | while IFS=: read -r k v; do
			v=${v//\"/}
			if [[ $k == '"fdid"' && $v =~ ^[0-9]+$ ]]; then
				printf '0x%x\n' "$v"
			else
				echo "$v"
			fi
		done | sort -u
}

_smartio()
{
	local cur prev cmd i tool=${COMP_WORDS[0]}
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} != -* ]]; then
			cmd=${COMP_WORDS[i]}
			break
		fi
	done

	case $prev in
	--host)
		mapfile -t COMPREPLY < <(compgen -W "$(_smartio_hosts)" -- "$cur")
		return ;;
	--dir | --log | --dump | --params | --measured | --gnuplot | -o | -i)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	--dev | --from | --peer)
		mapfile -t COMPREPLY < <(compgen -W "$(_smartio_devices "$tool")" -- "$cur")
		return ;;
	--timing)
		mapfile -t COMPREPLY < <(compgen -W "faithful fast" -- "$cur")
		return ;;
	esac

	if [[ -z $cmd ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_smartio_commands "$tool") --help" -- "$cur")
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_smartio_help_words "$tool" "$cmd")" -- "$cur")
		return
	fi
	case $cmd in
	cluster)
		[[ $prev == cluster ]] &&
			mapfile -t COMPREPLY < <(compgen -W "up down status restart" -- "$cur")
		[[ $prev == up ]] &&
			mapfile -t COMPREPLY < <(compgen -f -X '!*.yaml' -- "$cur") ;;
	borrow | return)
		[[ $prev == "$cmd" ]] &&
			mapfile -t COMPREPLY < <(compgen -W "$(_smartio_devices "$tool")" -- "$cur") ;;
	czodiac)
		if [[ $prev == czodiac ]]; then
			mapfile -t COMPREPLY < <(compgen -W "share unshare" -- "$cur")
		elif [[ $prev == share || $prev == unshare ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_smartio_devices "$tool")" -- "$cur")
		fi ;;
	nvme)
		[[ $prev == nvme ]] &&
			mapfile -t COMPREPLY < <(compgen -W "list identify read write dd" -- "$cur") ;;
	accel)
		[[ $prev == accel ]] &&
			mapfile -t COMPREPLY < <(compgen -W "list info copy fill checksum pingpong bench launch" -- "$cur") ;;
	vm)
		[[ $prev == vm ]] &&
			mapfile -t COMPREPLY < <(compgen -W "run list stop stats hot-add hot-remove migrate console" -- "$cur") ;;
	predict)
		[[ $prev == predict ]] &&
			mapfile -t COMPREPLY < <(compgen -W "link path pingpong nvme-read paper figure" -- "$cur") ;;
	ntb)
		[[ $prev == ntb || $prev == [0-9]* ]] &&
			mapfile -t COMPREPLY < <(compgen -W "info lut rid link db spad" -- "$cur") ;;
	iommu)
		mapfile -t COMPREPLY < <(compgen -W "faults domain attach detach map unmap" -- "$cur") ;;
	fault)
		mapfile -t COMPREPLY < <(compgen -W "link crash hang resume restart reset" -- "$cur") ;;
	exec)
		mapfile -t COMPREPLY < <(compgen -c -- "$cur") ;;
	mount | umount | topo)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	esac
}

_smartio_nvme()
{
	local cur prev cmd i tool=${COMP_WORDS[0]}
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		[[ ${COMP_WORDS[i]} != -* ]] && { cmd=${COMP_WORDS[i]}; break; }
	done
	case $prev in
	-d | --device)
		mapfile -t COMPREPLY < <(compgen -W "$(_smartio_devices smartio)" -- "$cur")
		return ;;
	esac
	if [[ -z $cmd ]]; then
		# the commands its own --help lists, so a new one needs no edit here
		mapfile -t COMPREPLY < <(compgen -W "$("$tool" --help 2>/dev/null |
			sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p') --help" -- "$cur")
	elif [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_smartio_help_words "$tool" "$cmd")" -- "$cur")
	fi
}

complete -F _smartio smartio
complete -F _smartio_nvme smartio-nvme
