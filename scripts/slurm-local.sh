#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for tests/slurm.rs and for
# trying examples/slurm without a cluster:
#
#   eval "$(scripts/slurm-local.sh start)"   # prints `export SLURM_CONF=...`
#   examples/slurm/submit.sh --shards 2 --results /tmp/sweep
#   scripts/slurm-local.sh stop              # stops what `start` started
#
# Installs Debian's `slurm-wlm` and `munge` with apt-get when `sbatch` is
# missing (as root, as CI runs; apt keeps the packages in its cache), then
# starts munged (unless one runs), slurmctld and slurmd on localhost with a
# configuration of their own under $NNBENCH_SLURM_DIR (default
# /var/tmp/nnbench-slurm): one node with this machine's CPUs and memory,
# one partition. Nothing under /etc/slurm is written. Without root, or
# without apt where Slurm is missing, it prints nothing and says why on
# stderr.
set -euo pipefail

dir=${NNBENCH_SLURM_DIR:-/var/tmp/nnbench-slurm}
conf=$dir/slurm.conf
say() { echo "slurm-local.sh: $*" >&2; }

stop() {
  local name pid
  for name in slurmd slurmctld munged; do
    [[ -f $dir/$name.pid ]] || continue
    pid=$(cat "$dir/$name.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "$dir/$name.pid"
  done
}

install_slurm() {
  command -v sbatch >/dev/null && command -v munged >/dev/null && return 0
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    say "no Slurm here, and no root and apt-get to install Debian's slurm-wlm and munge"
    return 1
  fi
  say "installing Debian's slurm-wlm and munge"
  local get=(env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge)
  "${get[@]}" >&2 || { apt-get update >&2 && "${get[@]}" >&2; }
}

# munged, unless one answers already: ours runs as the munge user, with
# the key the package made.
start_munge() {
  if munge -n </dev/null >/dev/null 2>&1; then
    return 0
  fi
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged
  cp /run/munge/munged.pid "$dir/munged.pid"
  munge -n </dev/null >/dev/null
}

configure() {
  local cpus memory
  cpus=$(nproc)
  # What slurmd finds, less a little for the system, in MiB.
  memory=$(slurmd -C | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  memory=$((memory * 95 / 100))
  mkdir -p "$dir/state" "$dir/spool"
  cat >"$conf" <<EOF
ClusterName=nnbench-local
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
# A one-node test cluster: each job starts as soon as the one before ends.
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
MinJobAge=600
DefMemPerCPU=$((memory / cpus))
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  install_slurm || exit 0
  if [[ $(id -u) != 0 ]]; then
    say "slurmd runs jobs as their users only as root: run this as root"
    exit 0
  fi
  mkdir -p "$dir"
  stop
  configure
  start_munge
  export SLURM_CONF=$conf
  slurmctld -f "$conf"
  slurmd -f "$conf" -N localhost
  for _ in $(seq 100); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
      echo "export SLURM_CONF=$conf"
      return 0
    fi
    sleep 0.2
  done
  say "the node did not come up: $(sinfo -h -N -o '%T %E' 2>&1); see $dir/*.log"
  stop
  exit 1
}

case ${1:-start} in
  start) start ;;
  stop) stop ;;
  *)
    say "usage: slurm-local.sh [start|stop]"
    exit 2
    ;;
esac
