#!/usr/bin/env bash
# Stop the Sika HA reference deployment: HAProxy, then the three Patroni nodes (each stops its PostgreSQL;
# replicas first, the leader last, so no failover is started on the way down), then etcd. Only the
# processes whose pids up.sh recorded under $SIKA_HA_DIR/run are signalled.
#
#   deploy/ha/down.sh           stop; data, logs and passwords stay (up.sh starts the same cluster again)
#   deploy/ha/down.sh --purge   stop and remove the base directory ($SIKA_HA_DIR, default /tmp/sika-ha)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

purge=0
case "${1:-}" in
  --purge) purge=1 ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) die "unknown argument $1 (see --help)" ;;
esac

if [[ ! -d "$HA_DIR" ]]; then
  say "nothing to stop: $HA_DIR does not exist"
  exit 0
fi

stop_daemon haproxy 10

# Replicas first: a leader stopping while replicas run would hand its lock over (a failover on shutdown).
leader="$(leader_name)"
for n in "${NODES[@]}"; do
  [[ "$n" == "$leader" ]] && continue
  stop_daemon "$n" 60
done
[[ -n "$leader" ]] && stop_daemon "$leader" 60

# A PostgreSQL left behind (Patroni killed with SIGKILL, say): stop it by the pid in its postmaster.pid.
for n in "${NODES[@]}"; do
  pidfile="$HA_DIR/$n/data/postmaster.pid"
  [[ -s "$pidfile" ]] || continue
  pid=$(head -1 "$pidfile")
  if [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && grep -q postgres "/proc/$pid/comm" 2>/dev/null; then
    say "$n: PostgreSQL (pid $pid) still running without Patroni: fast shutdown"
    kill -INT "$pid" || true
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { say "$n: PostgreSQL (pid $pid) still running: SIGQUIT"; kill -QUIT "$pid" || true; }
  fi
done

stop_daemon etcd 20

if ((purge)); then
  case "$HA_DIR" in
    /|/tmp|/var|/home|/root|"") die "refusing to remove $HA_DIR" ;;
  esac
  rm -rf "$HA_DIR"
  say "stopped; removed $HA_DIR"
else
  say "stopped; data and logs kept in $HA_DIR (down.sh --purge removes them)"
fi
