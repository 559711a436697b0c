# Shared settings and helpers for the Sika HA reference deployment (sourced by up.sh, down.sh, status.sh,
# switchover.sh, kill-primary.sh, drill.sh). Not meant to be run on its own.
# shellcheck shell=bash disable=SC2034

HA_DIR="${SIKA_HA_DIR:-/tmp/sika-ha}"
SCOPE="sika-ha"                       # Patroni cluster name (also PostgreSQL's cluster_name)
NODES=(node1 node2 node3)
declare -A PG_PORT=([node1]=5441 [node2]=5442 [node3]=5443)
declare -A REST_PORT=([node1]=8011 [node2]=8012 [node3]=8013)
RW_PORT=5440                           # HAProxy: read-write, always the current primary
RO_PORT=5439                           # HAProxy: read-only, round robin over healthy replicas
STATS_PORT=8010                        # HAProxy stats page (http://127.0.0.1:8010/)
ETCD_CLIENT_PORT=23790                 # not etcd's default 2379, to stay out of the way of any other etcd
ETCD_PEER_PORT=23800
APP_USER="sika"
APP_DB="sika"

LOG_DIR="$HA_DIR/log"
RUN_DIR="$HA_DIR/run"
SECRETS="$HA_DIR/secrets.env"

die() { echo "sika-ha: error: $*" >&2; exit 1; }
say() { echo "sika-ha: $*"; }
now() { date +%s.%N; }
# Seconds between two `now` readings, one decimal.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# The newest PostgreSQL major installed from Debian packages, or PG_BIN.
find_pg_bin() {
  if [[ -n "${PG_BIN:-}" ]]; then
    [[ -x "$PG_BIN/postgres" ]] || die "PG_BIN=$PG_BIN has no postgres binary"
    echo "$PG_BIN"; return
  fi
  local v
  v=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -regex '.*/[0-9]+' -printf '%f\n' 2>/dev/null | sort -n | tail -1)
  [[ -n "$v" && -x "/usr/lib/postgresql/$v/bin/postgres" ]] ||
    die "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin: apt-get install postgresql (or set PG_BIN)"
  echo "/usr/lib/postgresql/$v/bin"
}

# Run a command as the postgres user (PostgreSQL refuses root), with a small clean environment, from /:
# the caller's directory (a checkout under a root-only directory, say) may be closed to postgres, and
# Patroni and initdb fail to start there.
pg_prefix() {
  PG_PREFIX=(env -i --chdir=/ PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$HA_DIR" LANG=C.UTF-8 LC_ALL=C.UTF-8 PYTHONDONTWRITEBYTECODE=1)
  if [[ $(id -u) -eq 0 ]]; then
    PG_PREFIX=(setpriv --reuid=postgres --regid=postgres --init-groups "${PG_PREFIX[@]}")
  elif [[ $(id -un) != postgres ]]; then
    die "run as root or as the postgres user (PostgreSQL and Patroni run as postgres)"
  fi
}
as_pg() { pg_prefix; "${PG_PREFIX[@]}" "$@"; }

# Start a long-running process as postgres in its own session; its pid goes to $RUN_DIR/<name>.pid
# (the pid of the program itself: sh writes $$ and then execs it), output to $LOG_DIR/<name>.log.
start_daemon() {
  local name="$1"; shift
  local pidfile="$RUN_DIR/$name.pid" log="$LOG_DIR/$name.log"
  rm -f "$pidfile"
  as_pg touch "$log"
  pg_prefix
  # shellcheck disable=SC2016
  (exec "${PG_PREFIX[@]}" setsid sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" >>"$log" 2>&1 </dev/null) &
  local i
  for i in $(seq 1 50); do [[ -s "$pidfile" ]] && break; sleep 0.1; done
  [[ -s "$pidfile" ]] || die "$name did not start (no $pidfile); see $log"
}

# The pid in $RUN_DIR/<name>.pid when that process is still alive, else nothing.
live_pid() {
  local pidfile="$RUN_DIR/$1.pid" pid
  [[ -s "$pidfile" ]] || return 0
  pid=$(head -1 "$pidfile")
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
  return 0
}

# Stop the process in $RUN_DIR/<name>.pid: SIGTERM, wait up to <seconds>, then SIGKILL.
stop_daemon() {
  local name="$1" seconds="${2:-30}" pid
  pid=$(live_pid "$name")
  if [[ -z "$pid" ]]; then rm -f "$RUN_DIR/$name.pid"; return 0; fi
  say "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((seconds * 10))); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    say "$name (pid $pid) still running after ${seconds}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN_DIR/$name.pid"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

rest() { curl -s --max-time 2 "http://127.0.0.1:${REST_PORT[$1]}$2"; }
rest_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:${REST_PORT[$1]}$2" || true; }

# Patroni's view of the cluster (GET /cluster) from the first node that answers.
cluster_json() {
  local n out
  for n in "${NODES[@]}"; do
    out=$(rest "$n" /cluster || true)
    if [[ "$out" == \{* ]]; then echo "$out"; return 0; fi
  done
  return 1
}

# Python (the system one: Patroni's) reading /cluster JSON on stdin.
pyjson() { /usr/bin/python3 -c "import json,sys; c=json.load(sys.stdin); $1"; }

# Name of the member holding the leader lock, or nothing.
leader_name() {
  cluster_json 2>/dev/null | pyjson 'print(next((m["name"] for m in c.get("members", []) if m.get("role") == "leader"), ""))' 2>/dev/null || true
}
# Names of the synchronous standbys (space separated), or nothing.
sync_names() {
  cluster_json 2>/dev/null | pyjson 'print(" ".join(m["name"] for m in c.get("members", []) if m.get("role") == "sync_standby"))' 2>/dev/null || true
}
# Members that are running replicas (any replica role) on the leader's timeline.
replica_count() {
  cluster_json 2>/dev/null | pyjson '
lead = [m for m in c.get("members", []) if m.get("role") == "leader" and m.get("state") == "running"]
tl = lead[0].get("timeline") if lead else None
print(sum(1 for m in c.get("members", []) if m.get("role") in ("replica", "sync_standby") and m.get("state") in ("running", "streaming") and m.get("timeline") == tl))' 2>/dev/null || echo 0
}

load_secrets() {
  [[ -r "$SECRETS" ]] || die "no $SECRETS: is the deployment set up? run deploy/ha/up.sh"
  # shellcheck disable=SC1090
  source "$SECRETS"
}

database_url() { echo "postgres://$APP_USER:$APP_PASSWORD@127.0.0.1:${1:-$RW_PORT}/$APP_DB"; }

# psql as the application user through a port (default HAProxy's read-write one).
app_psql() {
  local port="$1"; shift
  PGPASSWORD="$APP_PASSWORD" PGCONNECT_TIMEOUT=2 psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U "$APP_USER" -d "$APP_DB" "$@"
}

# psql as the postgres superuser on a node's unix socket (local trust).
super_psql() {
  local node="$1"; shift
  as_pg psql -X -q -v ON_ERROR_STOP=1 -h "$HA_DIR/$node" -p "${PG_PORT[$node]}" -U postgres "$@"
}

patronictl_() { as_pg patronictl -c "$HA_DIR/$1/patroni.yml" "${@:2}"; }

# One write through a port into the probe table (database ha_probe, created by up.sh); prints its id.
probe_write() {
  PGPASSWORD="$APP_PASSWORD" PGCONNECT_TIMEOUT=2 PGOPTIONS="-c statement_timeout=5000" psql -X -q -v ON_ERROR_STOP=1 \
    -h 127.0.0.1 -p "${2:-$RW_PORT}" -U "$APP_USER" -d ha_probe -Atc "insert into probe (note) values ('${1:-probe}') returning id"
}

# Wait until HAProxy's read-write port reaches a primary (pg_is_in_recovery() is false) that takes and
# acknowledges a write; prints the seconds waited.
wait_rw() {
  local timeout="$1" start t
  start=$(now)
  while :; do
    if [[ "$(app_psql "$RW_PORT" -Atc 'select pg_is_in_recovery()' 2>/dev/null || true)" == f ]] &&
      probe_write wait_rw >/dev/null 2>&1; then
      elapsed "$start" "$(now)"; return 0
    fi
    t=$(elapsed "$start" "$(now)")
    awk -v t="$t" -v m="$timeout" 'BEGIN { exit !(t > m) }' && return 1
    sleep 0.2
  done
}
