#!/usr/bin/env bash
# Checks a running router end to end and exits non-zero naming every check that failed:
#   router healthy (GET /healthz), kernel mode, every map pinned and loaded (bpftool), XDP and TC
#   (tcx) attached on each interface and using the pinned maps, guest modules and the eBPF object in the
#   jar well-formed, one request classified as expected.
# In user-space mode the kernel checks fail unless NEXUSCORE_VERIFY_MODE=user (then they are skipped).
# Settings: see scripts/lib.sh (NEXUSCORE_CONFIG).
set -uo pipefail
source "$(dirname "$0")/scripts/lib.sh"

failed=()
ok() { echo "ok    $1"; }
fail() { echo "FAIL  $1: $2"; failed+=("$1"); }
skip() { echo "skip  $1: $2"; }

# 1. healthy
health="$(curl -fsS --max-time 5 "$NX_CONTROL_URL/healthz" 2>&1)"
if [ $? -eq 0 ] && [ "$(printf '%s' "$health" | jq -r '.status' 2>/dev/null)" != "null" ]; then
  status="$(printf '%s' "$health" | jq -r '.status')"
  case "$status" in
    ok|up|UP|healthy) ok "router healthy ($NX_CONTROL_URL/healthz: $health)" ;;
    *) fail "router healthy" "status is '$status' ($health)" ;;
  esac
else
  fail "router healthy" "no answer from $NX_CONTROL_URL/healthz ($health)"
  health='{}'
fi
mode="$(printf '%s' "$health" | jq -r '.mode // "unknown"' 2>/dev/null)"

# 2-4. kernel: mode, pinned maps, attachments
kernel_checks=true
if [ "$mode" != "kernel" ]; then
  if [ "${NEXUSCORE_VERIFY_MODE:-kernel}" = "user" ]; then
    skip "kernel checks" "router in $mode mode and NEXUSCORE_VERIFY_MODE=user"
    kernel_checks=false
  else
    fail "kernel mode" "router reports mode '$mode' (set NEXUSCORE_VERIFY_MODE=user to accept user-space mode)"
  fi
else
  ok "kernel mode"
fi
if $kernel_checks; then
  if ! command -v bpftool >/dev/null; then
    fail "bpftool" "not installed (scripts/install-deps.sh)"
  else
    map_ids=()
    for m in "${NX_PINNED_MAPS[@]}"; do
      if out="$(bpftool -j map show pinned "$NX_PIN_DIR/$m" 2>&1)"; then
        id="$(printf '%s' "$out" | jq -r '.id')"
        map_ids+=("$id")
        ok "map $m pinned and loaded (id $id, $(printf '%s' "$out" | jq -r '.type'))"
      else
        fail "map $m" "bpftool map show pinned $NX_PIN_DIR/$m: $out"
      fi
    done
    # Each hook must use one of our pinned maps: XDP reads score_thresholds, the TC chain only reads the
    # verdict XDP stored (verdict_slots, then the routing_decisions fallback), so each is checked against
    # a map it really uses.
    thresholds_id="$(bpftool -j map show pinned "$NX_PIN_DIR/score_thresholds" 2>/dev/null | jq -r '.id // empty')"
    verdicts_id="$(bpftool -j map show pinned "$NX_PIN_DIR/routing_decisions" 2>/dev/null | jq -r '.id // empty')"
    for dev in $NX_INTERFACES; do
      [ -e "/sys/class/net/$dev" ] || { fail "interface $dev" "no such interface"; continue; }
      for hook in xdp tc; do
        want="$NX_XDP_PROGRAM"; map_name=score_thresholds; map_id="$thresholds_id"
        [ "$hook" = tc ] && { want="$NX_TC_PROGRAM"; map_name=routing_decisions; map_id="$verdicts_id"; }
        if [ "$hook" = xdp ]; then
          id="$(nx_attached_progs "$dev" xdp "$want" | head -1)"
          where="bpftool net show dev $dev: $(bpftool -j net show dev "$dev" | jq -c '.[0].xdp')"
        else
          # A tcx link: bpftool 7.1 lists it only as "type 11" with no interface, so the router's
          # /healthz names the program on each interface and the link holding it must exist.
          id="$(nx_tcx_prog "$dev" "$want" "$health")"
          where="/healthz: $(printf '%s' "$health" | jq -c '.attachment.interfaces')"
        fi
        if [ -z "$id" ]; then
          fail "$hook on $dev" "no $want attached ($where)"
        elif [ -n "$map_id" ] && ! nx_prog_uses_map "$id" "$map_id"; then
          fail "$hook on $dev" "$want (prog $id) does not use the map pinned at $NX_PIN_DIR/$map_name (another router's?)"
        else
          ok "$hook on $dev: $want attached (prog $id, uses the pinned maps)"
        fi
      done
    done
  fi
fi

# 5. artifacts in the jar: Wasm guests (\0asm, version 1) and the eBPF object (ELF, machine BPF = 247)
jar="${NEXUSCORE_JAR:-$(nx_jar)}"
if [ -z "$jar" ] || [ ! -f "$jar" ]; then
  fail "jar" "no router jar under $NX_ROOT/target (NEXUSCORE_JAR to name one)"
else
  tmp="$(mktemp -d)"
  ( cd "$tmp" && jar xf "$jar" guests bpf 2>/dev/null || unzip -q "$jar" 'guests/*' 'bpf/*' 2>/dev/null ) || true
  for g in nano small large; do
    f="$tmp/guests/$g.wasm"
    if [ -f "$f" ] && [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = "0061736d01000000" ]; then
      ok "guest $g.wasm valid (wasm magic, version 1, $(stat -c %s "$f") bytes)"
    else
      fail "guest $g.wasm" "missing from $jar or not a wasm v1 module"
    fi
  done
  o="$tmp/bpf/nexus_classify.bpf.o"
  if [ -f "$o" ] && [ "$(head -c 4 "$o" | od -An -tx1 | tr -d ' \n')" = "7f454c46" ] \
     && [ "$(od -An -j18 -N2 -tu2 "$o" | tr -d ' ')" = "247" ]; then
    ok "eBPF object nexus_classify.bpf.o valid (ELF, machine BPF)"
  else
    fail "eBPF object" "bpf/nexus_classify.bpf.o missing from $jar or not an ELF BPF object"
  fi
  rm -rf "$tmp"
fi

# 6. one request classified as expected (a ~100-byte body scores ~25: nano)
body='{"prompt":"summarily summarily summarily summarily summarily summarily summarily summarily"}'
headers="$(curl -sS --max-time 10 -o /dev/null -D - -H 'Content-Type: application/json' --data "$body" "$NX_DATA_URL/v1/tasks/echo" 2>&1 | tr -d '\r')"
assigned="$(printf '%s' "$headers" | sed -n 's/^[Xx]-[Nn][Xx]-[Aa]ssigned-[Tt]ier: *//p')"
source_="$(printf '%s' "$headers" | sed -n 's/^[Xx]-[Nn][Xx]-[Rr]oute-[Ss]ource: *//p')"
if [ "$assigned" = "nano" ]; then
  ok "request classified: nano (route source ${source_:-?})"
else
  fail "request classified" "expected X-NX-Assigned-Tier nano from $NX_DATA_URL, got '${assigned}' ($(printf '%s' "$headers" | head -1))"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "verify: ${#failed[@]} check(s) failed: ${failed[*]}"
  exit 1
fi
echo "verify: all checks passed"
