#!/usr/bin/env bash
# Runs the `sweep` bench on Kubernetes as one run: an indexed Job of
# shards, then, once it has ended, a merge Job; prints the merge's
# comparison and exits with its status: 0 passed, 1 a missing shard, a
# failed case or a regression.
#
#   examples/kubernetes/submit.sh --image IMAGE [OPTIONS]
#   examples/kubernetes/submit.sh --rerun RUN [--namespace NS]
#
#   --image IMAGE     the image: the bench executable at --bench and the
#                     nnbench tool at --nnbench (`cargo bench --bench sweep
#                     --no-run` prints the bench's path here)
#   --shards N        pods of the shards Job (default 4)
#   --cpus N          CPUs of each shard's pod (default 2)
#   --mem SIZE        memory of each shard's pod (default 4Gi)
#   --claim NAME      the ReadWriteMany PersistentVolumeClaim the results
#                     go to (default nnbench-results)
#   --fail-on SPEC    the merge's thresholds (nnbench compare --fail-on)
#   --bench PATH      the bench in the image (default /opt/nnbench/sweep)
#   --nnbench PATH    the tool in the image (default nnbench, on its PATH)
#   --namespace NS    the namespace (default: kubectl's)
#   --print           print the run's manifests instead of applying them
#   --rerun RUN       in run RUN, the shards that failed or left no
#                     record run again, then the merge
#
# It needs Kubernetes 1.29 or later (`backoffLimitPerIndex`, a pod failure
# policy) and kubectl on PATH, pointed at the cluster.
#
# Each run is named after the time it starts (RUN, e.g. 20261124t101500z-3f9a)
# and writes in a folder of its own on the volume, /results/RUN: the
# shards' records shard-K.json (K = 1..N), run.json (merged) and
# comparison.md. /results/last.json is the last run that passed: the next
# run's baseline and the costs its shards are balanced by. The run's
# settings and the pods' scripts (shard.sh, merge.sh) are ConfigMaps named
# after it; `kubectl delete jobs,configmaps -l nnbench/run=RUN` removes
# what it made. Stopping this script leaves the run going: --rerun RUN,
# once its shards have ended, runs the merge (and any failed shard).
set -euo pipefail
here=$(dirname "$(realpath "$0")")
say() { echo "submit.sh: $*" >&2; }

image='' shards=4 cpus=2 mem=4Gi claim=nnbench-results fail_on='' bench=/opt/nnbench/sweep
tool=nnbench namespace='' print=false rerun=''
while (($#)); do
  case $1 in
    --image | --shards | --cpus | --mem | --claim | --fail-on | --bench | --nnbench | --namespace | --rerun)
      (($# >= 2)) || { say "$1 needs a value (see --help)"; exit 2; }
      case $1 in
        --image) image=$2 ;;
        --shards) shards=$2 ;;
        --cpus) cpus=$2 ;;
        --mem) mem=$2 ;;
        --claim) claim=$2 ;;
        --fail-on) fail_on=$2 ;;
        --bench) bench=$2 ;;
        --nnbench) tool=$2 ;;
        --namespace) namespace=$2 ;;
        --rerun) rerun=$2 ;;
      esac
      shift 2
      ;;
    --print) print=true; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) say "unknown option $1 (see --help)"; exit 2 ;;
  esac
done
kubectl=(kubectl)
[[ -z $namespace ]] || kubectl+=(--namespace "$namespace")

# `$1` as a YAML (and JSON) double-quoted string.
quote() {
  local text=${1//\\/\\\\}
  printf '"%s"' "${text//\"/\\\"}"
}

# Template `$1` with its ${JOB}, ${RUN}, ${SHARDS}, ${IMAGE}, ${CPUS},
# ${MEMORY} and ${CLAIM} filled in from the variables of those names.
render() {
  local text name
  text=$(<"$1")
  for name in JOB RUN SHARDS IMAGE CPUS MEMORY CLAIM; do
    text=${text//"\${$name}"/${!name}}
  done
  printf -- '---\n%s\n' "$text"
}

# The run's two ConfigMaps: its settings, which the pods take as their
# environment and --rerun reads back, and the pods' scripts.
config_maps() {
  local name
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nnbench-%s\n' "$RUN"
  printf '  labels: { nnbench/run: %s }\ndata:\n' "$RUN"
  for name in RUN SHARDS BENCH NNBENCH FAIL_ON IMAGE CPUS MEMORY CLAIM; do
    printf '  %s: %s\n' "$name" "$(quote "${!name}")"
  done
  printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nnbench-%s-scripts\n' "$RUN"
  printf '  labels: { nnbench/run: %s }\ndata:\n' "$RUN"
  for name in shard.sh merge.sh; do
    printf '  %s: |\n' "$name"
    sed 's/^/    /; s/^ *$//' "$here/$name"
  done
}

# Waits for Job `$1` to end: 0 if it completed, 1 if it failed. Says why
# its pods wait, when the scheduler says they cannot be placed (a request
# no node can hold waits for ever, unless the cluster grows).
wait_for() {
  local job=$1 state why said=''
  while :; do
    state=$("${kubectl[@]}" get job "$job" -o jsonpath='{.status.conditions[?(@.status=="True")].type}')
    case " $state " in
      *" Complete "*) return 0 ;;
      *" Failed "*) return 1 ;;
    esac
    why=$("${kubectl[@]}" get pods -l "batch.kubernetes.io/job-name=$job" -o \
      jsonpath='{range .items[*]}{.status.conditions[?(@.reason=="Unschedulable")].message}{"\n"}{end}' |
      sed '/^$/d' | sort -u)
    if [[ -n $why && $why != "$said" ]]; then
      say "$job: pods wait to be scheduled: $why"
      said=$why
    fi
    sleep 10
  done
}

# Runs the shards Job and then the merge Job of run $RUN, `$1` naming
# their attempt, with `$2` (the ConfigMaps, or nothing) first. Created,
# not applied: a name another run holds fails instead of changing it.
run() {
  local attempt=$1 first=$2 status=0 JOB
  JOB=nnbench-$RUN-shards$attempt
  if ! why=$({ printf '%s\n' "$first"; render "$here/shards-job.yaml"; } |
    "${kubectl[@]}" create --dry-run=server -f - 2>&1 >/dev/null); then
    say "Kubernetes would not take the run: $why"
    exit 1
  fi
  { printf '%s\n' "$first"; render "$here/shards-job.yaml"; } | "${kubectl[@]}" create -f - >&2
  echo "run: $RUN"
  echo "shards: job $JOB, shards 1-$SHARDS"
  echo "rerun failed shards: $0 --rerun $RUN"
  wait_for "$JOB" || say "$JOB failed: the merge says which shards"
  JOB=nnbench-$RUN-merge$attempt
  render "$here/merge-job.yaml" | "${kubectl[@]}" create -f - >&2
  echo "merge: job $JOB"
  wait_for "$JOB" || status=1
  "${kubectl[@]}" logs "job/$JOB"
  return "$status"
}

if [[ -n $rerun ]]; then
  [[ $rerun =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || { say "--rerun $rerun: not the name of a run"; exit 2; }
  # shellcheck disable=SC2016 # a go template, not shell
  if ! settings=$("${kubectl[@]}" get configmap "nnbench-$rerun" -o \
    go-template='{{range $k, $v := .data}}{{$k}}={{$v}}{{"\n"}}{{end}}' 2>&1); then
    say "--rerun $rerun: no such run here (no ConfigMap nnbench-$rerun): $settings"
    exit 2
  fi
  while IFS='=' read -r name value; do
    case $name in
      RUN | SHARDS | BENCH | NNBENCH | FAIL_ON | IMAGE | CPUS | MEMORY | CLAIM) printf -v "$name" '%s' "$value" ;;
    esac
  done <<<"$settings"
  going=$("${kubectl[@]}" get jobs -l "nnbench/run=$rerun" -o \
    jsonpath='{range .items[*]}{.metadata.name}={.status.active}{"\n"}{end}' | grep '=[1-9]' || true)
  if [[ -n $going ]]; then
    say "run $rerun still has pods running (${going//$'\n'/ }): rerun it once they end"
    exit 2
  fi
  run "-r$(date -u +%H%M%S)" ''
  exit
fi

[[ -n $image ]] || { say "--image is needed: the image holding the bench and the nnbench tool"; exit 2; }
[[ $shards =~ ^[1-9][0-9]*$ ]] || { say "--shards $shards: a number of shards, 1 or more"; exit 2; }
[[ $cpus =~ ^[0-9]+(\.[0-9]+)?m?$ ]] || { say "--cpus $cpus: a CPU quantity (2, 1.5, 500m)"; exit 2; }
[[ $mem =~ ^[0-9]+([EPTGMK]i?|k)?$ ]] || { say "--mem $mem: a memory quantity (4Gi, 512Mi, 8G)"; exit 2; }
[[ $claim =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || { say "--claim $claim: not a claim's name"; exit 2; }
# shellcheck disable=SC2034 # read by name, in render and config_maps
RUN=$(date -u +%Y%m%dt%H%M%Sz)-$(printf %04x $((RANDOM))) SHARDS=$shards BENCH=$bench NNBENCH=$tool FAIL_ON=$fail_on
# shellcheck disable=SC2034
IMAGE=$image CPUS=$cpus MEMORY=$mem CLAIM=$claim
if $print; then
  config_maps
  JOB=nnbench-$RUN-shards render "$here/shards-job.yaml"
  JOB=nnbench-$RUN-merge render "$here/merge-job.yaml"
  exit 0
fi
run '' "$(config_maps)"
