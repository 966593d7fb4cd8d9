# bash completion for nicstallctl(1): commands and their words, port names
# from the running daemon (nicstallctl status), bundle names from the state
# directory (nicstallctl bundles). Installed as
# share/bash-completion/completions/nicstallctl (make install, the packages).
#
# Port and bundle names were written by others (the configuration, the
# bundles directory): they are matched against the word in a loop, never
# passed through compgen -W, which would expand them.

# nicstallctl with the -s/-S the command line gave
_nicstallctl_run()
{
	local i w args=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-s | --socket | -S | --state-dir)
			args+=("$w" "${COMP_WORDS[i + 1]}")
			((i++)) ;;
		--socket=* | --state-dir=*) args+=("$w") ;;
		esac
	done
	"${COMP_WORDS[0]}" "${args[@]}" "$@" 2>/dev/null
}

# the words of $2.. that begin with $1, as completions
_nicstallctl_add()
{
	local cur=$1 w
	shift
	for w; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$w")
	done
}

_nicstallctl_ports()
{
	local IFS=$'\n'
	_nicstallctl_add "$1" $(_nicstallctl_run status |
		awk '/^PORT / { p = 1; next } p && /^$/ { exit } p && /^[^ \t]/ { print $1 }')
}

_nicstallctl_bundles()
{
	local IFS=$'\n'
	_nicstallctl_add "$1" $(_nicstallctl_run bundles |
		awk 'NR > 1 && /^[^ \t(]/ && $2 != "peer-snapshot" { print $1 }')
}

_nicstallctl()
{
	local cur prev cmd="" sub="" i w nargs=0
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	case $prev in
	-s | --socket)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	-S | --state-dir | --rules)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -d -- "$cur"))
		return ;;
	-o)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	--window | --limit | --label | --incident)
		return ;;
	esac

	# the command, its subcommand and how many arguments follow them
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-s | --socket | -S | --state-dir | --rules | -o | --window | --limit | --label | --incident)
			((i++)); continue ;;
		-*) continue ;;
		esac
		if [[ -z $cmd ]]; then
			cmd=$w
		elif [[ -z $sub && ($cmd == incident || $cmd == run) ]]; then
			sub=$w
		else
			((nargs++))
		fi
	done

	if [[ $cur == -* ]]; then
		local opts="-s --socket -S --state-dir -j --json -h --help -V --version"
		case $cmd in
		counters) opts+=" --changed --window" ;;
		flows) opts+=" --stalled --limit" ;;
		snapshot) opts+=" --bundle" ;;
		bundles) opts+=" --incident" ;;
		report) opts+=" -o" ;;
		classify) opts+=" --rules" ;;
		run) opts+=" --label --" ;;
		esac
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi

	case $cmd in
	"")
		COMPREPLY=($(compgen -W "status counters snapshot flows incident investigate
			recover reload peers run bundles show report verify classify" -- "$cur")) ;;
	counters | flows | investigate | recover)
		((nargs == 0)) && _nicstallctl_ports "$cur" ;;
	snapshot)
		_nicstallctl_ports "$cur" ;;
	incident)
		[[ -z $sub ]] && COMPREPLY=($(compgen -W "show list" -- "$cur")) ;;
	run)
		[[ -z $sub ]] && COMPREPLY=($(compgen -W "begin end show list" -- "$cur")) ;;
	show | report | verify | classify)
		if ((nargs == 0)); then
			_nicstallctl_bundles "$cur"
			# a path to a bundle elsewhere
			if [[ $cur == */* || ${#COMPREPLY[@]} -eq 0 ]]; then
				compopt -o filenames 2>/dev/null
				COMPREPLY+=($(compgen -d -- "$cur"))
			fi
		fi ;;
	esac
}
complete -F _nicstallctl nicstallctl
