#!/usr/bin/env bash
# slurm.sh - a one-node Slurm cluster of its own for the tests: Debian's
# slurm-wlm and munge, started as root inside a fresh private directory, so
# that tests run real `srun` and `sbatch` jobs on this machine.
#
# Everything lives in one directory made by mktemp (under $TMPDIR, or the
# build directory T4_OUT where $TMPDIR is noexec: sbatch runs its script
# from the spool directory): a munge key of its own, munged on its own
# socket, slurm.conf and cgroup.conf written here, slurmctld and slurmd in
# the foreground (-D) with their state, spool, pid and log files in it, on
# two free TCP ports chosen at run time (another run's cluster or daemon
# never collides; a port taken between the choice and the bind is chosen
# again). Nothing outside the directory is read or written but the
# packages' own files: the system's munge key, /etc/slurm and its daemons
# are never used.
#
# Start waits, bounded (T4_SLURM_DEADLINE seconds, 120 by default), by
# polling the daemons themselves: munge's socket answers, `scontrol ping`
# says UP, `sinfo` says the node is idle. Stop cancels the jobs, stops
# exactly the daemons it started (their PIDs, kept in the directory; the
# slurmstepd processes by a marker in their environment that only this
# cluster's daemons carry), and removes the directory. A guard process
# stops the cluster as soon as its owner (the test) is gone, even killed
# with SIGKILL, so a failed or timed-out test leaves nothing running.
#
# As a program:
#   slurm.sh probe                 exit 0, or 77 with the reason on stdout
#   slurm.sh run CMD [ARG...]      start, run CMD in the cluster's
#                                  environment, stop; CMD's exit status
#   slurm.sh start --owner PID     start, print the directory; DIR/env is
#                                  a sh script exporting the environment
#   slurm.sh stop DIR              stop the cluster of DIR
# Exit 77 (with the reason on stdout) where Slurm cannot run here: not
# root, packages missing, no directory programs may run from, a daemon
# that exits at start (the last lines of its log). A node that never gets
# idle while its daemons run is a failure (exit 1, with the logs' tails).
# Sourced, it defines t4_slurm_probe, t4_slurm_start and t4_slurm_stop;
# start exports SLURM_CONF (what the clients read), T4_SLURM_DIR,
# T4_SLURM_NODE (the node's name) and T4_SLURM_MUNGE (munge's socket).

T4_SLURM_CMDS="munged mungekey munge unmunge slurmctld slurmd slurmstepd srun sbatch sinfo
scontrol squeue scancel timeout tail setsid"
T4_SLURM_SKIP=77
# A daemon's environment carries T4_SLURM_DAEMON=<dir>, nothing else does:
# how stop finds the slurmstepd processes (slurmd double-forks them).
T4_SLURM_MARK=T4_SLURM_DAEMON

# ---- the probe -------------------------------------------------------------

# A directory under $1 where an executable file may be run, or nothing.
t4_slurm_exec_ok() {
	local d ok=1

	[ -n "$1" ] && [ -d "$1" ] || return 1
	d=$(mktemp -d "$1/t4slurm-probe-XXXXXX" 2>/dev/null) || return 1
	printf '#!/bin/sh\nexit 0\n' > "$d/x" && chmod 700 "$d/x" && "$d/x" 2>/dev/null && ok=0
	rm -rf "$d"
	return $ok
}

# Sets T4_SLURM_BASE (where the cluster's directory goes) or T4_SLURM_WHY.
t4_slurm_probe() {
	local c missing="" tmp=${TMPDIR:-/tmp}

	T4_SLURM_WHY=""
	T4_SLURM_BASE=""
	if [ "$(id -u)" -ne 0 ]; then
		T4_SLURM_WHY="Slurm: needs root (slurmd starts each job's tasks as their user)"
		return $T4_SLURM_SKIP
	fi
	for c in $T4_SLURM_CMDS; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	if [ -n "$missing" ]; then
		T4_SLURM_WHY="Slurm: not installed (missing:$missing): tools/deps.sh installs slurm-wlm and munge, as root"
		return $T4_SLURM_SKIP
	fi
	if t4_slurm_exec_ok "$tmp"; then
		T4_SLURM_BASE=$tmp
	elif t4_slurm_exec_ok "${T4_OUT:-}"; then
		T4_SLURM_BASE=$T4_OUT
	else
		T4_SLURM_WHY="Slurm: no directory to run job scripts from ($tmp is noexec or unwritable${T4_OUT:+, and so is $T4_OUT})"
		return $T4_SLURM_SKIP
	fi
	# slurm.conf and AuthInfo cannot quote; unix socket paths are short
	case "$T4_SLURM_BASE" in
	*[!A-Za-z0-9/._+-]*)
		T4_SLURM_WHY="Slurm: the directory '$T4_SLURM_BASE' has characters slurm.conf cannot hold"
		return $T4_SLURM_SKIP ;;
	esac
	if [ ${#T4_SLURM_BASE} -gt 48 ]; then
		T4_SLURM_WHY="Slurm: the directory '$T4_SLURM_BASE' is too long for the daemons' unix sockets"
		return $T4_SLURM_SKIP
	fi
	return 0
}

# ---- helpers ---------------------------------------------------------------

t4_slurm_deadline() {
	echo $((SECONDS + ${T4_SLURM_DEADLINE:-120}))
}

# The last lines of a daemon's log, on one line each, for a reason.
t4_slurm_tail() {
	echo "--- $(basename "$1") (last lines):"
	tail -n "${2:-8}" "$1" 2>/dev/null
}

# A TCP port nobody uses now, outside the kernel's ephemeral range (so an
# outgoing connection cannot take it either): random, checked against
# every socket in /proc/net/tcp{,6}, and not in $1 (ports already taken).
t4_slurm_port() {
	local lo hi p hex
	read -r lo hi < /proc/sys/net/ipv4/ip_local_port_range
	for _ in $(seq 200); do
		if [ "$lo" -gt 12000 ]; then
			p=$((10000 + RANDOM % (lo - 10000)))
		else
			p=$((hi + 1 + RANDOM % (65535 - hi)))
		fi
		case " $1 " in *" $p "*) continue ;; esac
		hex=$(printf '%04X' "$p")
		if ! awk -v h=":$hex" 'NR > 1 && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
		     /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# Start a daemon in the background: its PID goes into DIR/pids, its
# output into DIR/NAME.out; only daemons carry the marker.
t4_slurm_spawn() {
	local name=$1
	shift
	env "$T4_SLURM_MARK=$T4_SLURM_DIR" "$@" </dev/null >>"$T4_SLURM_DIR/$name.out" 2>&1 &
	echo "$name $!" >> "$T4_SLURM_DIR/pids"
	eval "T4_SLURM_PID_$name=$!"
}

# PID runs (a zombie, which kill -0 still finds, does not: the daemons'
# parent may be gone, or busy stopping them).
t4_slurm_running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

t4_slurm_alive() {
	local pid
	pid=$(awk -v n="$1" '$1 == n { print $2 }' "$T4_SLURM_DIR/pids" 2>/dev/null)
	[ -n "$pid" ] && t4_slurm_running "$pid"
}

# ---- the configuration -----------------------------------------------------

t4_slurm_write_conf() {
	local d=$T4_SLURM_DIR cpus mem=1024 topo

	# the node as slurmd sees it (sockets, cores, threads), memory kept small
	topo=$(slurmd -C 2>/dev/null | sed -n 's/^NodeName=[^ ]* \(CPUs=.*\) RealMemory=.*/\1/p')
	[ -n "$topo" ] || topo="CPUs=$(nproc)"
	cpus=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
	[ -z "$cpus" ] || [ "$cpus" -ge $mem ] || mem=$cpus
	cat > "$d/slurm.conf" <<EOF
# written by tests/cluster/slurm.sh: a one-node cluster in $d
ClusterName=t4test
SlurmctldHost=$T4_SLURM_NODE(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge.sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MessageTimeout=30
SlurmctldTimeout=60
SlurmdTimeout=60
KillWait=5
MinJobAge=300
NodeName=$T4_SLURM_NODE NodeAddr=127.0.0.1 NodeHostname=$T4_SLURM_NODE $topo RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$T4_SLURM_NODE Default=YES MaxTime=INFINITE State=UP
EOF
	# read by slurmd; no cgroup plugin is used (linuxproc, task/none)
	cat > "$d/cgroup.conf" <<EOF
# written by tests/cluster/slurm.sh
CgroupPlugin=autodetect
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainDevices=no
EOF
}

t4_slurm_write_env() {
	cat > "$T4_SLURM_DIR/env" <<EOF
export SLURM_CONF='$SLURM_CONF'
export T4_SLURM_DIR='$T4_SLURM_DIR'
export T4_SLURM_NODE='$T4_SLURM_NODE'
export T4_SLURM_MUNGE='$T4_SLURM_MUNGE'
EOF
}

# ---- start -----------------------------------------------------------------

t4_slurm_start_munge() {
	local d=$T4_SLURM_DIR end
	end=$(t4_slurm_deadline)

	if ! mungekey --create --keyfile="$d/munge.key" >>"$d/munge.out" 2>&1; then
		T4_SLURM_WHY="Slurm: mungekey could not create a key: $(t4_slurm_tail "$d/munge.out" 3)"
		return $T4_SLURM_SKIP
	fi
	t4_slurm_spawn munged munged --foreground --force --socket="$d/munge.sock" \
		--key-file="$d/munge.key" --pid-file="$d/munged.pid" --log-file="$d/munged.log" \
		--seed-file="$d/munged.seed"
	until munge -n -S "$d/munge.sock" 2>/dev/null | unmunge -S "$d/munge.sock" >/dev/null 2>&1; do
		if ! t4_slurm_alive munged; then
			T4_SLURM_WHY="Slurm: munged did not start $(t4_slurm_tail "$d/munged.log"; t4_slurm_tail "$d/munged.out" 4)"
			return $T4_SLURM_SKIP
		fi
		if [ $SECONDS -ge "$end" ]; then
			T4_SLURM_WHY="Slurm: munged runs but its socket did not answer in ${T4_SLURM_DEADLINE:-120} s"
			return 1
		fi
		sleep 0.1
	done
}

# Why daemon NAME exited: 2 when its port was taken (choose again).
t4_slurm_died() {
	local log="$T4_SLURM_DIR/$1.log"
	T4_SLURM_WHY="Slurm: $1 exited at start $(t4_slurm_tail "$log"; t4_slurm_tail "$T4_SLURM_DIR/$1.out" 4)"
	grep -q 'Address already in use' "$log" "$T4_SLURM_DIR/$1.out" 2>/dev/null && return 2
	return $T4_SLURM_SKIP
}

t4_slurm_not_ready() {
	T4_SLURM_WHY="Slurm: $1 within ${T4_SLURM_DEADLINE:-120} s $(timeout 20 scontrol show node "$T4_SLURM_NODE" 2>&1 | grep -E 'State=|Reason='; t4_slurm_tail "$T4_SLURM_DIR/slurmctld.log"; t4_slurm_tail "$T4_SLURM_DIR/slurmd.log")"
	return 1
}

# slurmctld and slurmd on two free ports, then the node idle. 2: a port
# was taken by someone else meanwhile (the daemons are stopped again).
t4_slurm_start_daemons() {
	local d=$T4_SLURM_DIR p1 p2 end state
	end=$(t4_slurm_deadline)

	p1=$(t4_slurm_port "") && p2=$(t4_slurm_port "$p1") || {
		T4_SLURM_WHY="Slurm: no free TCP port found"
		return 1
	}
	rm -rf "$d/state" "$d/spool" "$d"/slurm*.log "$d"/slurm*.out
	mkdir -p "$d/state" "$d/spool" || return 1
	t4_slurm_write_conf "$p1" "$p2"
	t4_slurm_spawn slurmctld slurmctld -D -c -f "$d/slurm.conf"
	until timeout 20 scontrol ping 2>/dev/null | grep -q 'is UP'; do
		t4_slurm_alive slurmctld || { t4_slurm_died slurmctld; return; }
		[ $SECONDS -lt "$end" ] || { t4_slurm_not_ready "slurmctld did not answer"; return; }
		sleep 0.2
	done
	t4_slurm_spawn slurmd slurmd -D -f "$d/slurm.conf" -N "$T4_SLURM_NODE"
	while :; do
		state=$(timeout 20 sinfo -h -n "$T4_SLURM_NODE" -o %T 2>/dev/null)
		[ "$state" != idle ] || return 0
		t4_slurm_alive slurmd || { t4_slurm_died slurmd; return; }
		t4_slurm_alive slurmctld || { t4_slurm_died slurmctld; return; }
		[ $SECONDS -lt "$end" ] || { t4_slurm_not_ready "the node did not become idle (${state:-no state})"; return; }
		sleep 0.2
	done
}

# Start the cluster; OWNER (a PID, default this shell) is watched by the
# guard. 0, 77 (T4_SLURM_WHY says why) or 1 (the same); on failure
# nothing is left running.
t4_slurm_start() {
	local owner=${1:-$$} rc me

	t4_slurm_probe || return
	T4_SLURM_DIR=$(mktemp -d "$T4_SLURM_BASE/t4slurm-XXXXXX") || {
		T4_SLURM_WHY="Slurm: mktemp -d in $T4_SLURM_BASE failed"
		return 1
	}
	chmod 700 "$T4_SLURM_DIR"
	T4_SLURM_NODE=$(hostname -s 2>/dev/null)
	case "$T4_SLURM_NODE" in ''|*[!A-Za-z0-9-]*) T4_SLURM_NODE=localhost ;; esac
	export SLURM_CONF=$T4_SLURM_DIR/slurm.conf T4_SLURM_DIR T4_SLURM_NODE
	export T4_SLURM_MUNGE=$T4_SLURM_DIR/munge.sock
	: > "$T4_SLURM_DIR/pids"
	me=${BASH_SOURCE[0]}
	case "$me" in /*) ;; *) me=$PWD/$me ;; esac
	# the guard: stops the cluster once the owner is gone
	setsid bash -c 'tail --pid="$1" -f /dev/null; exec bash "$2" stop "$3"' \
		t4guard "$owner" "$me" "$T4_SLURM_DIR" </dev/null >/dev/null 2>&1 &
	echo "guard $!" >> "$T4_SLURM_DIR/pids"
	t4_slurm_write_env
	t4_slurm_start_munge
	rc=$?
	for _ in 1 2 3; do
		[ $rc -eq 0 ] || break
		t4_slurm_start_daemons
		rc=$?
		[ $rc -eq 2 ] || break
		t4_slurm_stop_daemons
		rc=0
	done
	[ $rc -ne 2 ] || rc=1
	if [ $rc -ne 0 ]; then
		t4_slurm_stop "$T4_SLURM_DIR"
		return $rc
	fi
	T4_SLURM_WHY=""
}

# ---- stop ------------------------------------------------------------------

# Send SIG to the PIDs given, wait (bounded) until they are gone, then
# SIGKILL what is left.
t4_slurm_kill() {
	local sig=$1 p left end=$((SECONDS + 15))
	shift
	[ $# -gt 0 ] || return 0
	kill -"$sig" "$@" 2>/dev/null
	while :; do
		left=""
		for p in "$@"; do t4_slurm_running "$p" && left="$left $p"; done
		[ -n "$left" ] || return 0
		[ $SECONDS -lt $end ] || break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $left 2>/dev/null
}

t4_slurm_pids_of() {
	awk -v n="$1" '$1 == n { print $2 }' "$T4_SLURM_DIR/pids" 2>/dev/null
}

# The processes carrying this cluster's marker (slurmstepd and anything
# the daemons started), never this shell.
t4_slurm_marked() {
	local f p
	for f in $(grep -lzxF "$T4_SLURM_MARK=$T4_SLURM_DIR" /proc/[0-9]*/environ 2>/dev/null); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || echo "$p"
	done
}

t4_slurm_stop_daemons() {
	local end=$((SECONDS + 20))

	# the jobs first, so that slurmstepd ends their tasks
	if t4_slurm_alive slurmctld; then
		timeout 20 scancel --quiet --partition=debug >/dev/null 2>&1
		while [ -n "$(timeout 20 squeue -h -o %i 2>/dev/null)" ] && [ $SECONDS -lt $end ]; do
			sleep 0.2
		done
	fi
	# shellcheck disable=SC2046
	t4_slurm_kill TERM $(t4_slurm_pids_of slurmd) $(t4_slurm_pids_of slurmctld)
	# shellcheck disable=SC2046
	t4_slurm_kill TERM $(t4_slurm_marked | grep -vxF "$(t4_slurm_pids_of munged)")
	sed -i '/^slurm/d' "$T4_SLURM_DIR/pids"
}

# Stop the cluster of DIR (default: the one this shell started) and remove
# DIR. Only what DIR/pids names and what carries DIR's marker is killed.
t4_slurm_stop() {
	local T4_SLURM_DIR=${1:-$T4_SLURM_DIR} guard

	[ -n "$T4_SLURM_DIR" ] && [ -f "$T4_SLURM_DIR/pids" ] || return 0
	export SLURM_CONF=$T4_SLURM_DIR/slurm.conf
	guard=$(t4_slurm_pids_of guard)
	# its own process group (setsid): the shell and its tail
	[ -z "$guard" ] || [ "$guard" = $$ ] || { kill -TERM -- "-$guard" 2>/dev/null; t4_slurm_kill TERM "$guard"; }
	t4_slurm_stop_daemons
	# shellcheck disable=SC2046
	t4_slurm_kill TERM $(t4_slurm_pids_of munged)
	rm -rf "$T4_SLURM_DIR"
}

# ---- as a program ----------------------------------------------------------

t4_slurm_main() {
	local rc
	case "${1:-}" in
	probe)
		t4_slurm_probe
		rc=$?
		[ $rc -eq 0 ] || echo "$T4_SLURM_WHY"
		return $rc ;;
	start)
		[ "${2:-}" = --owner ] && [ -n "${3:-}" ] || {
			echo "usage: slurm.sh start --owner PID" >&2
			return 2
		}
		t4_slurm_start "$3"
		rc=$?
		if [ $rc -eq 0 ]; then echo "$T4_SLURM_DIR"; else echo "$T4_SLURM_WHY"; fi
		return $rc ;;
	stop)
		[ -n "${2:-}" ] || { echo "usage: slurm.sh stop DIR" >&2; return 2; }
		t4_slurm_stop "$2" ;;
	run)
		shift
		[ $# -gt 0 ] || { echo "usage: slurm.sh run CMD [ARG...]" >&2; return 2; }
		t4_slurm_start $$
		rc=$?
		[ $rc -eq 0 ] || { echo "$T4_SLURM_WHY"; return $rc; }
		trap 't4_slurm_stop' EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
		"$@"
		return ;;
	*)
		echo "usage: slurm.sh probe | run CMD [ARG...] | start --owner PID | stop DIR" >&2
		return 2 ;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	t4_slurm_main "$@"
	exit
fi
