#!/usr/bin/env bash
# Crash the primary: SIGKILL the current leader's postmaster, by the pid in its data directory's
# postmaster.pid (no clean shutdown, no checkpoint; its backends die with it). Patroni on that node sees
# PostgreSQL gone on its next loop and, because primary_start_timeout is 0, releases the leader lock
# instead of restarting it in place; the synchronous standby promotes, HAProxy moves 5440 to it, and the
# old primary is rewound (pg_rewind) and rejoins as a standby.
#
#   deploy/ha/kill-primary.sh            kill, print what was killed, return at once
#   deploy/ha/kill-primary.sh --wait     also measure: seconds until 127.0.0.1:5440 takes a write again,
#                                        and until the killed node streams again as a replica
#   deploy/ha/kill-primary.sh --node     SIGKILL the leader's Patroni first, then its postmaster: the whole
#                                        node is lost, the lock expires after ttl (run up.sh to bring the
#                                        node back). Combine with --wait.
#
# Output ends with key=value lines for scripts: killed=, postmaster_pid=, killed_at=, and with --wait
# new_leader=, rw_back_seconds=, rejoined_seconds=.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

wait=0; node=0
for a in "$@"; do
  case "$a" in
    --wait) wait=1 ;;
    --node) node=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $a (see --help)" ;;
  esac
done
[[ -d "$HA_DIR" ]] || die "$HA_DIR does not exist: start the deployment with deploy/ha/up.sh"
load_secrets

leader="$(leader_name)"
[[ -n "$leader" ]] || die "no leader to kill (deploy/ha/status.sh)"
pm="$HA_DIR/$leader/data/postmaster.pid"
[[ -s "$pm" ]] || die "$leader leads but has no $pm"
pid="$(head -1 "$pm")"
{ [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; } || die "$leader's postmaster (pid $pid from $pm) is not running"
grep -q postgres "/proc/$pid/comm" || die "pid $pid from $pm is not a postgres process"

if ((node)); then
  ppid="$(live_pid "$leader")"
  [[ -n "$ppid" ]] || die "$leader's Patroni is not running"
  say "SIGKILL $leader's Patroni (pid $ppid)"
  kill -KILL "$ppid"
fi
killed_at=$(now)
kill -KILL "$pid"
say "SIGKILL $leader's postmaster (pid $pid)"
echo "killed=$leader"
echo "postmaster_pid=$pid"
echo "killed_at=$killed_at"
((wait)) || exit 0

limit=$((node ? 120 : 60))
if ! wait_rw "$limit" >/dev/null; then die "127.0.0.1:$RW_PORT takes no writes ${limit}s after the kill"; fi
# wait_rw started after the kill: measure from the kill itself.
rw_back="$(elapsed "$killed_at" "$(now)")"
new="$(leader_name)"
say "127.0.0.1:$RW_PORT is a primary again after ${rw_back}s (leader $new)"
echo "new_leader=$new"
echo "rw_back_seconds=$rw_back"

if ((node)); then
  say "$leader's Patroni is dead: start it again with deploy/ha/up.sh (it then rejoins as a replica)"
  exit 0
fi
for _ in $(seq 1 480); do
  [[ "$(replica_count)" -ge 2 && "$(leader_name)" != "$leader" ]] && break
  sleep 0.25
done
[[ "$(replica_count)" -ge 2 ]] || die "$leader did not rejoin as a replica within 120 s; see $LOG_DIR/$leader.log"
rejoined="$(elapsed "$killed_at" "$(now)")"
say "$leader streams again as a replica of $new after ${rejoined}s"
echo "rejoined_seconds=$rejoined"
