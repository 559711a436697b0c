#!/usr/bin/env bash
# State of the Sika HA reference deployment: processes, Patroni's member list (patronictl list),
# the synchronous settings in force, and HAProxy's view of each backend server (UP/DOWN).
# Exit status 0 when 127.0.0.1:5440 reaches a primary, 1 otherwise.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

[[ -d "$HA_DIR" ]] || die "$HA_DIR does not exist: start the deployment with deploy/ha/up.sh"

echo "== processes ($HA_DIR/run)"
for name in etcd "${NODES[@]}" haproxy; do
  pid="$(live_pid "$name")"
  extra=""
  if [[ " ${NODES[*]} " == *" $name "* ]]; then
    pm="$HA_DIR/$name/data/postmaster.pid"
    pgpid=""
    [[ -s "$pm" ]] && pgpid="$(head -1 "$pm")"
    if [[ -n "$pgpid" ]] && kill -0 "$pgpid" 2>/dev/null; then extra="  postgres pid $pgpid on :${PG_PORT[$name]}"; else extra="  postgres not running"; fi
  fi
  state="not running"
  [[ -n "$pid" ]] && state="pid $pid"
  printf '  %-8s %s%s\n' "$name" "$state" "$extra"
done

echo "== patronictl list"
cfg_node=""
for n in "${NODES[@]}"; do [[ -r "$HA_DIR/$n/patroni.yml" ]] && { cfg_node="$n"; break; }; done
if [[ -n "$cfg_node" && -n "$(live_pid etcd)" ]]; then
  patronictl_ "$cfg_node" list || echo "  (patronictl list failed)"
else
  echo "  (etcd is not running)"
fi

echo "== cluster settings (DCS)"
leader="$(leader_name)"
if [[ -n "$leader" ]]; then
  rest "$leader" /config | pyjson '
for k in ("ttl", "loop_wait", "retry_timeout", "primary_start_timeout", "maximum_lag_on_failover", "synchronous_mode", "synchronous_mode_strict", "synchronous_node_count"):
    print("  %s: %s" % (k, c.get(k, "(default)")))' || echo "  (GET /config failed)"
  echo "  synchronous_standby_names on $leader: $(super_psql "$leader" -d postgres -Atc 'show synchronous_standby_names' 2>/dev/null || echo '?')"
else
  echo "  (no leader)"
fi

echo "== HAProxy backends (stats http://127.0.0.1:$STATS_PORT/)"
if csv="$(curl -sf --max-time 2 "http://127.0.0.1:$STATS_PORT/;csv")"; then
  echo "$csv" | awk -F, '$1 ~ /^sika_/ && $2 != "FRONTEND" && $2 != "BACKEND" { printf "  %-8s %-6s %-5s %s\n", $1, $2, $18, $37 }'
else
  echo "  (HAProxy stats page not answering)"
fi

echo "== read-write port 127.0.0.1:$RW_PORT"
if [[ -r "$SECRETS" ]]; then
  load_secrets
  if r="$(app_psql "$RW_PORT" -Atc "select pg_is_in_recovery()::text || ' ' || inet_server_port()" 2>&1)"; then
    read -r recovery port <<<"$r"
    if [[ "$recovery" == false ]]; then echo "  primary (PostgreSQL port $port)"; exit 0; fi
    echo "  reaches a server in recovery (port $port): not a primary"
  else
    echo "  no answer: $r"
  fi
fi
exit 1
