#!/bin/sh
# A stream: handler for the tests (stream protocol 2). Acknowledges each document, echoing
# its token, after logging its id to $LOG; misbehaves at the document whose id is $BAD_ID
# the way $MODE says.
[ -n "${PIDFILE:-}" ] && awk '{print $5}' /proc/$$/stat > "$PIDFILE"
# (|| [ -n … ]: as exec:, the one document comes without a newline.)
while IFS= read -r line || [ -n "$line" ]; do
  id=$(printf '%s\n' "$line" | grep -o '"id":[0-9]*' | head -n 1 | cut -d: -f2)
  token=$(printf '%s\n' "$line" | grep -o '"token":"[0-9a-f]*"' | cut -d'"' -f4)
  [ "${MODE:-}" = v1 ] && token= # a protocol 1 handler: no token in its acks
  if [ "$id" = "${BAD_ID:-}" ]; then
    case "$MODE" in
      nack) echo "about to refuse $id" >&2; printf '{"id": %s, "ok": false, "error": "receiver said no\\u001b[31m"}\n' "$id"; continue ;;
      wrongid) printf '{"id": %s, "token": "%s", "ok": true}\n' "$((id + 1))" "$token"; continue ;;
      garbage) printf 'Traceback (most recent call last):\n'; continue ;;
      crash) printf 'dying on %s\033[2J\n' "$id" >&2; exit 3 ;;
      ahead) echo "$id" >> "$LOG"; printf '{"id": %s, "token": "%s", "ok": true}\n' "$id" "$token" "$((id + 1))" "$token" "$((id + 2))" "$token"; continue ;;
      hang) echo "$id" > "$LOG.hang"; sleep "${HANG:-30}"; continue ;;
    esac
  fi
  echo "$id" >> "$LOG"
  sleep "${SLEEP:-0}"
  printf '{"id": %s, "token": "%s", "ok": true}\n' "$id" "$token"
done
