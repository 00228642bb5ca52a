#!/bin/sh
# Sentinel sidecar: as soon as the sentinels announce `+switch-master` for SENTINEL_NAME, tells the
# old primary to follow the new one (`REPLICAOF <new ip> <new port>`), instead of waiting for the
# sentinels' next look at it (up to 10 s). With `repl-diskless-sync-delay 0` on the servers, the new
# primary has a replica again about a second after a planned switchover, and money moves (which
# wait for every replica that could be promoted) resume then (docs/operations.md "Redis topologies").
#
# Environment: SENTINEL_HOST (default 127.0.0.1), SENTINEL_PORT (default 26379), SENTINEL_NAME
# (required), SENTINEL_PASSWORD (optional), REDISCLI_AUTH (the data servers' password, optional;
# redis-cli reads it itself). Needs redis-cli 6 or later. Run one per sentinel, or one per
# deployment: a REPLICAOF to the primary a server already follows changes nothing.
set -eu
: "${SENTINEL_HOST:=127.0.0.1}"
: "${SENTINEL_PORT:=26379}"
: "${SENTINEL_NAME:?SENTINEL_NAME: the primary's name as the sentinels monitor it}"

subscribe() {
  if [ -n "${SENTINEL_PASSWORD:-}" ]; then
    REDISCLI_AUTH="$SENTINEL_PASSWORD" redis-cli -h "$SENTINEL_HOST" -p "$SENTINEL_PORT" SUBSCRIBE +switch-master
  else
    env -u REDISCLI_AUTH redis-cli -h "$SENTINEL_HOST" -p "$SENTINEL_PORT" SUBSCRIBE +switch-master
  fi
}

while true; do
  # redis-cli prints each message as three lines: "message", the channel, then
  # "<name> <old ip> <old port> <new ip> <new port>".
  subscribe | while read -r name old_ip old_port new_ip new_port; do
    [ "$name" = "$SENTINEL_NAME" ] && [ -n "${new_port:-}" ] || continue
    echo "+switch-master $name: $old_ip:$old_port follows $new_ip:$new_port"
    redis-cli -h "$old_ip" -p "$old_port" REPLICAOF "$new_ip" "$new_port" || echo "$old_ip:$old_port did not answer (the sentinels reconfigure it when it is back)"
  done
  # The sentinel went away: subscribe again after a pause.
  sleep 1
done
