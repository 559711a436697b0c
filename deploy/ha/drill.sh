#!/usr/bin/env bash
# Failover drill, from nothing to nothing: up.sh, status.sh, one write through 127.0.0.1:5440, then for each
# round: the write probe (probe.mjs, 4 clients) runs through 5440 while kill-primary.sh --wait SIGKILLs the
# primary's postmaster; the drill prints the seconds until 5440 takes writes again, the seconds until the
# killed node streams again, the errors the clients saw, and whether any acknowledged write is missing;
# then switchover.sh hands the primary back to the node that led before. Finally down.sh --purge.
#
#   deploy/ha/drill.sh [rounds]        default 1 round; SYNC_MODE / HA_TIMING are passed on to up.sh
#   deploy/ha/drill.sh --keep [rounds] leave the deployment running at the end
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

keep=0; rounds=1
for a in "$@"; do
  case "$a" in
    --keep) keep=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) [[ "$a" =~ ^[0-9]+$ ]] || die "unknown argument $a (see --help)"; rounds="$a" ;;
  esac
done
repo="$(cd "$here/../.." && pwd)"

[[ ! -d "$HA_DIR" ]] || die "$HA_DIR exists: the drill starts from nothing (deploy/ha/down.sh --purge first)"
t0=$(now)
"$here/up.sh"
say "up.sh from nothing took $(elapsed "$t0" "$(now)")s"
"$here/status.sh"
load_secrets
id="$(probe_write drill)"
say "write through 127.0.0.1:$RW_PORT: probe row $id"

summary=()
for r in $(seq 1 "$rounds"); do
  before="$(leader_name)"
  say "round $r: leader $before; write probe running, killing the primary in 3 s"
  out="$HA_DIR/probe-round-$r.json"
  (cd "$repo" && exec node "$here/probe.mjs" --clients 4 --interval-ms 20 >"$out") &
  probe_pid=$!
  sleep 3
  kill_out="$("$here/kill-primary.sh" --wait)"
  echo "$kill_out"
  sleep 2
  kill -TERM "$probe_pid"
  probe_rc=0; wait "$probe_pid" || probe_rc=$?
  cat "$out"
  rw_back="$(sed -n 's/^rw_back_seconds=//p' <<<"$kill_out")"
  rejoined="$(sed -n 's/^rejoined_seconds=//p' <<<"$kill_out")"
  new="$(sed -n 's/^new_leader=//p' <<<"$kill_out")"
  read -r writes errs outage missing < <(/usr/bin/python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(c["writes_acknowledged"], c["errors"], c["client_outage_seconds"], c["acknowledged_missing"])' "$out")
  "$here/status.sh" || true
  "$here/switchover.sh" "$before"
  line="round $r: $before killed -> $new leads; 5440 takes writes after ${rw_back}s; $before streams again after ${rejoined}s; probe: $writes writes acknowledged, $errs errors, client outage ${outage}s, acknowledged but missing: $missing (probe exit $probe_rc); switched back to $(leader_name)"
  say "$line"
  summary+=("$line")
done

"$here/status.sh" || true
if ((keep)); then say "left running (deploy/ha/down.sh --purge stops it)"; else "$here/down.sh" --purge; fi
echo "== drill summary (SYNC_MODE=${SYNC_MODE:-on}, HA_TIMING=${HA_TIMING:-tuned})"
printf '%s\n' "${summary[@]}"
