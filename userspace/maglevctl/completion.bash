# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# bash completion for maglevctl: options, objects, commands, each command's
# options and values, and the VIPs and backends of the running daemon (from
# "maglevctl -j vip list" / "backend list VIP", on the socket given on the
# line if any). Installed as share/bash-completion/completions/maglevctl.
#
# The words are taken from COMP_LINE up to the cursor rather than from
# COMP_WORDS, which bash splits at the ':' of every address.

# _maglevctl_query ARGS... FIELD: the string values of FIELD in the daemon's
# JSON answer; nothing if no daemon answers within 2 s.
_maglevctl_query() {
	local field=${*: -1}
	timeout 2 "${_mc_cmd[@]}" -j "${@:1:$#-1}" 2>/dev/null |
		sed -n "s/.*\"$field\": *\"\\([^\"]*\\)\".*/\\1/p"
}

_maglevctl() {
	local line=${COMP_LINE:0:COMP_POINT} cur prev w i
	local -a words=() args=() _mc_cmd=()
	read -ra words <<<"$line"
	if [[ $line =~ [[:space:]]$ || ${#words[@]} -eq 0 ]]; then
		cur=""
	else
		cur=${words[-1]}
		unset 'words[-1]'
	fi
	prev=${words[-1]:-}
	_mc_cmd=("${words[0]:-maglevctl}")

	# The positional words so far (after the global options; -j anywhere).
	for ((i = 1; i < ${#words[@]}; i++)); do
		w=${words[i]}
		case $w in
		-j | --json) ;;
		-s | --socket)
			((i++))
			[[ -n ${words[i]:-} ]] && _mc_cmd+=(-s "${words[i]}")
			;;
		--socket=*) _mc_cmd+=(-s "${w#--socket=}") ;;
		--expect-revision) ((i++)) ;;
		--expect-revision=*) ;;
		*) args+=("$w") ;;
		esac
	done

	local cands="" files=false
	local checks="--check --check-port --check-path --check-status --check-interval --check-timeout --rise --fall --on-fail --check-payload --check-expect --check-dns-name"
	case $prev in
	-s | --socket) files=true ;;
	--encap) cands="ipip gue" ;;
	--check) cands="tcp http udp dns none" ;;
	--on-fail) cands="repick drain" ;;
	--placement) cands="maglev ring rendezvous" ;;
	--by) cands="flow source" ;;
	--gue-port | --check-port | --check-path | --check-status | --check-interval | \
		--check-timeout | --rise | --fall | --weight | --vnodes | --expect-revision | --settle | \
		--check-payload | --check-expect | --check-dns-name | --balance-factor | -k | --hot-threshold) ;;
	*)
		local obj=${args[0]:-} verb=${args[1]:-} n=${#args[@]}
		if [[ $cur == -* ]]; then
			case "$obj $verb" in
			" ") cands="-j --json -s --socket --expect-revision -V --version -h --help" ;;
			"vip add") cands="--encap --gue-port --port-any --placement --vnodes --balance-factor --slow-start --second-chance --hot-threshold $checks --help" ;;
			"vip set") cands="--encap --gue-port --placement --vnodes --balance-factor --slow-start --second-chance --no-second-chance --hot-threshold $checks --help" ;;
			"backend add") cands="--weight --drain --start-down --help" ;;
			"backend set") cands="--weight --drain --undrain --help" ;;
			"backend del") cands="--force --help" ;;
			stats*) cands="-w --watch --help" ;;
			top*) cands="--by -k --help" ;;
			table*) cands="--dump --help" ;;
			restore*) cands="--no-flush --dry-run --allow-empty --force --help" ;;
			"fleet status") cands="--settle --help" ;;
			*) cands="--help" ;;
			esac
		elif ((n == 0)); then
			cands="vip backend stats top health table lookup save restore status reload announce fleet help"
		else
			case "$obj" in
			vip)
				if ((n == 1)); then
					cands="add del set list show"
				elif ((n == 2)) && [[ $verb == del || $verb == set || $verb == show ]]; then
					cands=$(_maglevctl_query vip list vip)
				fi
				;;
			backend)
				if ((n == 1)); then
					cands="add del set list"
				elif ((n == 2)); then
					cands=$(_maglevctl_query vip list vip)
				elif ((n == 3)) && [[ $verb == del || $verb == set ]]; then
					cands=$(_maglevctl_query backend list "${args[2]}" backend)
				fi
				;;
			stats | top | health | table | lookup)
				((n == 1)) && cands=$(_maglevctl_query vip list vip)
				;;
			restore) files=true ;;
			announce) ((n == 1)) && cands="on off" ;;
			fleet) ((n == 1)) && cands="status" ;;
			esac
		fi
		;;
	esac

	# --socket=PATH: bash completes what follows the '='.
	[[ $cur == --socket=* ]] && files=true cur=${cur#--socket=}
	if $files; then
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
	fi
	mapfile -t COMPREPLY < <(compgen -W "$cands" -- "$cur")
	# bash replaces only what follows the last word-break character (':' of
	# an address, '=' of an option): hand it back just that part, quoted
	# where a VIP holds a glob character ('*' of all ports, IPv6 brackets).
	local wb=${COMP_WORDBREAKS:-:=}
	local brk=${cur%"${cur##*[$wb]}"}
	for i in "${!COMPREPLY[@]}"; do
		w=${COMPREPLY[i]#"$brk"}
		[[ $w == *[][*?]* ]] && w=$(printf '%q' "$w")
		COMPREPLY[i]=$w
	done
	return 0
}
complete -F _maglevctl maglevctl
