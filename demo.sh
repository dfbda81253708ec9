#!/usr/bin/env bash
# One request per tier against a running router: prints the tier the router assigned, the tier the
# guest believes fits, the score and where the verdict came from (kernel or user), and exits
# non-zero when a request fails or lands in another tier than the one its body was made for.
# Bodies (POST /v1/tasks/echo, no keyword bonus; score = body bytes / 4 under the default 60/130):
#   nano ~100 bytes (score ~25), small ~400 bytes (~95), large ~1300 bytes (255).
# Settings: see scripts/lib.sh (NEXUSCORE_CONFIG); NEXUSCORE_DATA_URL names the data plane directly.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ -f "$here/scripts/lib.sh" ]; then
  source "$here/scripts/lib.sh"
else
  NX_DATA_URL="${NEXUSCORE_DATA_URL:-http://127.0.0.1:8080}"   # inside the image: no scripts/
fi

words() { local i out=""; for ((i = 0; i < $1; i++)); do out+="${out:+ }$2"; done; printf '%s' "$out"; }

header() { printf '%s' "$1" | sed -n "s/^$2: *//Ip" | head -1; }

status=0
printf '%-6s %-8s %-8s %-6s %-7s %-6s %s\n' expect assigned guest score source http bytes
for tier in nano small large; do
  case "$tier" in
    nano) prompt="$(words 10 summarily)" ;;
    small) prompt="$(words 64 tier)" ;;
    large) prompt="$(words 260 big)" ;;
  esac
  body="{\"prompt\":\"$prompt\"}"
  headers="$(curl -sS --max-time 30 -o /dev/null -D - -H 'Content-Type: application/json' \
    --data "$body" "$NX_DATA_URL/v1/tasks/echo" 2>&1 | tr -d '\r')"
  code="$(printf '%s' "$headers" | sed -n 's/^HTTP\/[0-9.]* \([0-9]*\).*/\1/p' | tail -1)"
  assigned="$(header "$headers" X-NX-Assigned-Tier)"
  printf '%-6s %-8s %-8s %-6s %-7s %-6s %s\n' "$tier" "${assigned:--}" "$(header "$headers" X-NX-Tier)" \
    "$(header "$headers" X-NX-Score)" "$(header "$headers" X-NX-Route-Source)" "${code:-ERR}" "${#body}"
  if [ "$code" != "200" ] || [ "$assigned" != "$tier" ]; then
    [ -z "$code" ] && echo "demo: $tier: $headers" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "demo: every request landed in its tier" || echo "demo: some requests failed or landed elsewhere" >&2
exit $status
