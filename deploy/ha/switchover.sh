#!/usr/bin/env bash
# Planned switchover: the primary hands over to a standby (patronictl switchover --force), and the script
# waits until the new leader is primary behind HAProxy's 127.0.0.1:5440 and the old one streams from it.
#
#   deploy/ha/switchover.sh            to the synchronous standby (or, with synchronous_mode off, the
#                                      standby Patroni finds healthiest)
#   deploy/ha/switchover.sh node1      to node1
#
# With synchronous_mode on, Patroni only switches over to the synchronous standby (a switchover to any
# other member is refused: "candidate name does not match with sync_standby"). When the candidate asked
# for is an asynchronous standby, this script first makes it the synchronous one: it sets the tag
# nosync: true on the other standby and reloads it, waits for Patroni to move synchronous_standby_names
# to the candidate, switches over, then clears the tag. No commit is acknowledged by one node meanwhile.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

candidate="${1:-}"
case "$candidate" in
  -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[[ -d "$HA_DIR" ]] || die "$HA_DIR does not exist: start the deployment with deploy/ha/up.sh"
load_secrets

leader="$(leader_name)"
[[ -n "$leader" ]] || die "no leader: nothing to switch over from (deploy/ha/status.sh)"
if [[ -n "$candidate" ]]; then
  [[ -n "${PG_PORT[$candidate]:-}" ]] || die "unknown member $candidate (members: ${NODES[*]})"
  [[ "$candidate" != "$leader" ]] || { say "$candidate already leads"; exit 0; }
fi
sync_mode="$(rest "$leader" /config | pyjson 'print("on" if c.get("synchronous_mode") else "off")')"

set_nosync() { # node true|false: change the tag in the node's patroni.yml and reload that Patroni
  local n="$1" v="$2"
  as_pg sed -i "s/^  nosync: .*/  nosync: $v/" "$HA_DIR/$n/patroni.yml"
  curl -sf --max-time 5 -X POST "http://127.0.0.1:${REST_PORT[$n]}/reload" >/dev/null || die "reload of $n failed"
}
tagged=()
cleanup() {
  local n
  for n in "${tagged[@]}"; do set_nosync "$n" false || true; done
}
trap cleanup EXIT

if [[ "$sync_mode" == on ]]; then
  if [[ -z "$candidate" ]]; then
    candidate="$(sync_names | awk '{print $1}')"
    [[ -n "$candidate" ]] || die "synchronous_mode is on but there is no synchronous standby to switch over to"
  elif [[ " $(sync_names) " != *" $candidate "* ]]; then
    say "$candidate is not the synchronous standby ($(sync_names)): making it the synchronous one first"
    for n in "${NODES[@]}"; do
      [[ "$n" == "$leader" || "$n" == "$candidate" ]] && continue
      set_nosync "$n" true
      tagged+=("$n")
    done
    for _ in $(seq 1 120); do [[ "$(sync_names)" == "$candidate" ]] && break; sleep 0.5; done
    [[ "$(sync_names)" == "$candidate" ]] || die "Patroni did not make $candidate the synchronous standby within 60 s (is it streaming? deploy/ha/status.sh)"
  fi
fi

target="${candidate:-the standby Patroni picks}"
say "switchover: $leader -> $target"
start=$(now)
args=(switchover "$SCOPE" --leader "$leader" --force)
[[ -n "$candidate" ]] && args+=(--candidate "$candidate")
patronictl_ "$leader" "${args[@]}"

for _ in $(seq 1 120); do
  new="$(leader_name)"
  [[ -n "$new" && "$new" != "$leader" && "$(rest_code "$new" /primary)" == 200 ]] && break
  sleep 0.25
done
new="$(leader_name)"
[[ -n "$new" && "$new" != "$leader" ]] || die "no new leader 30 s after the switchover request (deploy/ha/status.sh)"
wait_rw 60 >/dev/null || die "127.0.0.1:$RW_PORT does not reach the new primary $new after 60 s"
t_rw=$(elapsed "$start" "$(now)")
say "new leader $new; 127.0.0.1:$RW_PORT takes writes ${t_rw}s after the request"

say "waiting for $leader to stream from $new"
for _ in $(seq 1 240); do [[ "$(replica_count)" -ge 2 ]] && break; sleep 0.5; done
[[ "$(replica_count)" -ge 2 ]] || die "$leader did not rejoin as a replica within 120 s; see $LOG_DIR/$leader.log"
cleanup
tagged=()
if [[ "$sync_mode" == on ]]; then
  for _ in $(seq 1 120); do [[ -n "$(sync_names)" ]] && break; sleep 0.5; done
fi
say "done in $(elapsed "$start" "$(now)")s: leader $new, synchronous standby: $(sync_names)"
