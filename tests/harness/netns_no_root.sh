#!/bin/sh
# `harness run` on a plan whose hosts run in network namespaces, by a user who may not enter them (no root,
# no CAP_SYS_ADMIN): one line saying that root is needed, exit status 1, no results folder; never one
# `ip netns exec ... Operation not permitted` per host. As root the test makes the two namespaces (so that
# `ip netns exec` would get as far as entering them) and runs the harness as uid 65534 (setpriv, else
# runuser -u nobody); as any other user it runs the harness as itself. Nothing is sent.
set -eu
harness=$1
build=$2
tmp=$(mktemp -d /tmp/harness-noroot.XXXXXX)
ns_s="hnr-$$-s"
ns_c="hnr-$$-c"
cleanup() {
  if [ "$(id -u)" = 0 ]; then ip netns del "$ns_s" 2>/dev/null || true; ip netns del "$ns_c" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err"; exit 1; }
as_user=""
if [ "$(id -u)" = 0 ]; then
  if command -v setpriv > /dev/null; then as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
  elif command -v runuser > /dev/null && id nobody > /dev/null 2>&1; then as_user="runuser -u nobody --"
  else echo "SKIP: running as root, and neither setpriv nor runuser (with a user nobody) to run as another user"; exit 77
  fi
  # The user may read the plan, and may write the results root (so that only the harness decides).
  chmod 755 "$tmp"
  $as_user test -x "$harness" || { echo "SKIP: $harness cannot be run by uid 65534 (a folder on its path is closed)"; exit 77; }
  ip netns add "$ns_s" && ip netns add "$ns_c" || echo "note: ip netns add failed; the check comes before any namespace is used"
fi
mkdir -m 1777 "$tmp/results"
cat > "$tmp/ns.toml" <<PLAN
name = "netns"
[defaults]
duration = 2
warmup = 0
ports = [0]
[hosts]
server = { address = "198.18.0.1", launcher = "netns", namespace = "$ns_s" }
client = { address = "198.18.0.2", launcher = "netns", namespace = "$ns_c" }
[[tests]]
name = "t"
message_size = 64
topology = "fan-in"
server = "server"
clients = ["client"]
PLAN
chmod 644 "$tmp/ns.toml"
status=0
$as_user "$harness" run "$tmp/ns.toml" --results "$tmp/results" --bin-dir "$build" --no-live > "$tmp/out" 2> "$tmp/err" ||
  status=$?
cat "$tmp/err"
[ "$status" = 1 ] || fail "exit status $status, not 1"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "more than one line on stderr"
grep -q "^harness: host 'client' and 1 more of the plan run in a network namespace (launcher = \"netns\"): entering one needs root (or CAP_SYS_ADMIN), which this harness does not have: run it as root$" \
  "$tmp/err" || fail "the line does not say that root (or CAP_SYS_ADMIN) is needed"
[ -z "$(ls -A "$tmp/results")" ] || fail "a results folder was made: $(ls -A "$tmp/results")"
echo "ok: without root, one line and exit 1${as_user:+ (as uid 65534 via ${as_user%% *})}"
