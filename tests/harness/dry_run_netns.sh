#!/bin/sh
# The plans with real addresses are only ever dry-run here. This proves the dry run opens no socket to
# any of their addresses: it runs inside a fresh network namespace where no address is reachable (only
# a down loopback exists), under strace when available to show not one socket is even created, and it
# must still print every host's commands.
set -eu
harness=$1
configs=$2
if ! unshare --net true 2>/dev/null; then
  echo "SKIP: cannot create a network namespace (unshare --net needs root)"; exit 77
fi
tracer=""
if command -v strace >/dev/null 2>&1; then
  tracer="strace -f -qq -e trace=socket,connect,sendto,sendmsg,sendmmsg -o /dev/stderr"
  # LeakSanitizer cannot run under ptrace; the asan preset's leak checks run in the other tests.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi
status=0
for plan in express-connect-onprem-server express-connect-onprem-client oci-hub-spoke; do
  file="$configs/$plan.toml"
  out=$(unshare --net -- sh -c "ip -o link show | grep -qv ' lo:' && exit 99; exec $tracer '$harness' run '$file' --dry-run" 2>/tmp/dry-trace.$$) || {
    echo "FAIL: dry run of $plan exited $?"; cat /tmp/dry-trace.$$; status=1; continue; }
  if grep -E 'socket\(|connect\(|send(to|msg|mmsg)\(' /tmp/dry-trace.$$ | grep -v 'AF_UNIX' | grep -q .; then
    echo "FAIL: dry run of $plan touched the network:"; grep -E 'socket\(|connect\(|send' /tmp/dry-trace.$$; status=1
  fi
  # Every host of the plan must appear with its address, and every address's commands.
  for host_line in $(sed -n 's/^\([A-Za-z0-9_-]*\) = { address = "\([^"]*\)".*/\1=\2/p' "$file"); do
    name=${host_line%%=*}; addr=${host_line#*=}
    if ! printf '%s\n' "$out" | grep -q "^## host $name ($addr, launcher ssh)"; then
      echo "FAIL: $plan: no commands for host $name ($addr)"; status=1
    fi
  done
  lines=$(printf '%s\n' "$out" | grep -c 'netload -H' || true)
  echo "ok: $plan: $(printf '%s\n' "$out" | grep -c '^## host') hosts, $lines netload commands, no socket opened"
done
rm -f /tmp/dry-trace.$$
exit $status
