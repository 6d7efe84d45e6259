#!/bin/sh
# harness deploy against a real sshd: the test starts its own sshd on 127.0.0.1/127.0.0.2 on a free port
# (throw-away keys), and a plan whose two ssh hosts each have a bin_dir under the test's folder (one
# empty, one not there yet, with a space in its path). In order:
#   dry run     prints each host's commands and changes nothing;
#   check       fails, naming the host without programs;
#   deploy      copies netload and netserve to both hosts (same SHA-256 as here, executable);
#   check       every host ok: reachable, this version, a clock offset;
#   run         a short plan runs over ssh with the deployed programs;
#   deploy      again: every host current, nothing touched;
#   corrupt     one file there, deploy: exactly that file copied again;
#   failures    a host whose bin_dir cannot be made fails, named, and the other is still served; programs
#               of another version are refused before any copy.
set -eu
harness=$1
build=$2
[ -x "$(command -v sshd || echo /usr/sbin/sshd)" ] || { echo "SKIP: no sshd on this machine"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: sshd needs root to run here"; exit 77; }
tmp=$(mktemp -d /tmp/harness-deploy.XXXXXX)
cleanup() { [ -f "$tmp/sshd.pid" ] && kill "$(cat "$tmp/sshd.pid")" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
. "$(dirname "$0")/../support/throwaway_sshd.sh"
start_throwaway_sshd "$tmp" 127.0.0.1 127.0.0.2  # exits 77 (skip) saying why when it cannot

# The programs of this build, stripped of their debug information as the static build is (about 1 MB
# rather than 30: over this loaded box's ssh, a few MB/s, the difference is most of the test's time); in
# the build tree's layout, src/netload/netload.
src="$tmp/src"
for p in netload netserve; do
  mkdir -p "$src/$p"
  strip -o "$src/$p/$p" "$build/$p/$p" 2>/dev/null || cp "$build/$p/$p" "$src/$p/$p"
done
server_bin="$tmp/server-bin"
client_bin="$tmp/client bin/deeper"  # not there yet: deploy makes it
mkdir "$server_bin" "$tmp/results"
fail() { echo "FAIL: $*"; for f in "$tmp/out" "$tmp/err"; do [ -f "$f" ] && cat "$f"; done; exit 1; }

# write_plan FILE [SERVER_BIN]: the ssh test (fan-in, 2 instances, 2 s at 2000 pps of 100 bytes); for
# deploy also a host of the local launcher, which has nothing to copy.
write_plan() {
  opts='ssh_options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"]'
  ssh="launcher = \"ssh\", user = \"root\", ssh_port = $port, identity = \"$tmp/client_key\", $opts"
  cat > "$1" <<PLAN
name = "deploy"
[defaults]
duration = 2
warmup = 1
lead = 2.0
ports = [0, 0]
[hosts]
server = { address = "127.0.0.1", $ssh, bin_dir = "${2:-$server_bin}" }
client = { address = "127.0.0.2", $ssh, bin_dir = "$client_bin" }
here = { address = "127.0.0.3" }
[[tests]]
name = "over-ssh"
message_size = 100
pps = 2000
topology = "fan-in"
server = "server"
clients = ["client", "client"]
PLAN
  [ -z "${3:-}" ] || printf '[[tests]]\nname = "local"\nmessage_size = 100\ntopology = "fan-in"\nserver = "here"\nclients = ["here"]\n' >> "$1"
}
write_plan "$tmp/run.toml"
write_plan "$tmp/deploy.toml" "$server_bin" with-local

deploy() { "$harness" deploy "$tmp/deploy.toml" --from "$src" "$@" > "$tmp/out" 2> "$tmp/err"; }
sums() { sha256sum < "$1" | cut -d' ' -f1; }
# What changes when a file is replaced (mv gives it a new inode) or written (mtime to the nanosecond).
stamps() { stat -c '%n %i %y' "$server_bin/netload" "$server_bin/netserve" "$client_bin/netload" "$client_bin/netserve"; }

dry_run() {
  before=$(stat -c '%y' "$server_bin")
  deploy --dry-run || fail "dry run exited $?"
  grep -q "^## host server (127.0.0.1): to $server_bin\$" "$tmp/out" || fail "no commands for host server"
  grep -q "^## host client (127.0.0.2): to $client_bin\$" "$tmp/out" || fail "no commands for host client"
  grep -q "^## host here (127.0.0.3): local: nothing to copy\$" "$tmp/out" || fail "local host not named"
  [ "$(grep -c '^  copy: .* < ' "$tmp/out")" = 4 ] || fail "expected 4 copy commands"
  [ -z "$(ls -A "$server_bin")" ] && [ "$(stat -c '%y' "$server_bin")" = "$before" ] || fail "dry run changed $server_bin"
  [ ! -e "$tmp/client bin" ] || fail "dry run made the client's bin_dir"
  echo "ok: dry run printed $(grep -c '^  [a-z]*: ' "$tmp/out") commands and changed nothing"
}

first_deploy() {
  start=$(date +%s%N)
  deploy || fail "deploy exited $?"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  bytes=$(( $(stat -c %s "$src/netload/netload") + $(stat -c %s "$src/netserve/netserve") ))
  for h in "server (127.0.0.1)" "client (127.0.0.2)"; do
    grep -qx "host $h: copied netload, netserve ($bytes bytes)" "$tmp/out" || fail "host $h: not copied"
  done
  grep -qx "host here (127.0.0.3): local: nothing to copy" "$tmp/out" || fail "local host not named"
  for dir in "$server_bin" "$client_bin"; do
    for p in netload netserve; do
      [ -x "$dir/$p" ] || fail "$dir/$p missing or not executable"
      [ "$(sums "$dir/$p")" = "$(sums "$src/$p/$p")" ] || fail "$dir/$p differs from $src/$p/$p"
    done
    [ -z "$(ls -A "$dir" | grep '\.new$' || true)" ] || fail "a .new file left in $dir"
  done
  echo "ok: deployed to two hosts in $ms ms ($bytes bytes each)"
}

# harness check on the run's plan: before the deploy it fails, naming the host without programs; after
# it every host is reachable, of this version, with a clock offset measured.
check_before() {
  if "$harness" check "$tmp/run.toml" > "$tmp/out" 2> "$tmp/err"; then fail "check passed with empty bin_dirs"; fi
  grep -q "^error: host 'client' (127.0.0.2): .*netload" "$tmp/out" || fail "check did not name the host lacking netload"
  echo "ok: check before the deploy: $(grep -c '^error:' "$tmp/out") error(s), each host named"
}

check_deployed() {
  "$harness" check "$tmp/run.toml" > "$tmp/out" 2> "$tmp/err" || fail "harness check exited $?"
  grep -qx "every host ok" "$tmp/out" || fail "check did not say every host ok"
  for h in server client; do
    awk -v h=$h '$1 == h && $3 == "yes" && $5 ~ /^[-+][0-9.]+$/ { found = 1 } END { exit !found }' "$tmp/out" ||
      fail "host $h: not reachable, or no clock offset"
  done
  grep -q "$("$src/netload/netload" --version | awk '{print $NF}')" "$tmp/out" || fail "no version shown"
  echo "ok: check after the deploy: every host ok"
  cat "$tmp/out"
}

run_deployed() {
  "$harness" run "$tmp/run.toml" --results "$tmp/results" --no-live > "$tmp/out" 2> "$tmp/err" || fail "harness run exited $?"
  dir=$(ls -d "$tmp"/results/deploy-*)
  grep -q '"ok": true' "$dir/summary.json" || fail "run not ok"
  grep -q "$server_bin/netserve" "$dir/environment.json" || fail "the deployed netserve was not the one run"
  grep -q "deeper/netload" "$dir/environment.json" || fail "the deployed netload was not the one run"
  echo "ok: a plan ran over ssh with the deployed programs"
}

second_deploy() {
  before=$(stamps)
  deploy || fail "second deploy exited $?"
  for h in "server (127.0.0.1)" "client (127.0.0.2)"; do
    grep -qx "host $h: current, nothing copied" "$tmp/out" || fail "host $h: not current"
  done
  [ "$(stamps)" = "$before" ] || fail "a current file was touched: $(stamps)"
  echo "ok: a second deploy copied nothing"
}

corrupt_one() {
  printf x >> "$client_bin/netserve"
  before=$(stamps)
  deploy || fail "deploy after the corruption exited $?"
  grep -qx "host client (127.0.0.2): copied netserve ($(stat -c %s "$src/netserve/netserve") bytes)" "$tmp/out" ||
    fail "the corrupted netserve was not copied alone"
  grep -qx "host server (127.0.0.1): current, nothing copied" "$tmp/out" || fail "host server not current"
  [ "$(sums "$client_bin/netserve")" = "$(sums "$src/netserve/netserve")" ] || fail "netserve still corrupt"
  # Every stamp but the replaced file's is as it was.
  [ "$(echo "$before" | grep -v "deeper/netserve ")" = "$(stamps | grep -v "deeper/netserve ")" ] || fail "another file touched"
  echo "ok: exactly the corrupted file was copied again"
}

failures() {
  : > "$tmp/not-a-folder"
  write_plan "$tmp/deploy.toml" "$tmp/not-a-folder/bin" with-local
  printf x >> "$client_bin/netload"
  if deploy; then fail "deploy to a bin_dir under a file succeeded"; fi
  grep -q "^harness: host server (127.0.0.1): copying netload to .* failed (status 1): mkdir: " "$tmp/err" || fail "the failing host not named"
  grep -qx "host client (127.0.0.2): copied netload ($(stat -c %s "$src/netload/netload") bytes)" "$tmp/out" ||
    fail "the other host was not served"
  mkdir "$tmp/old"
  for p in netload netserve; do printf '#!/bin/sh\necho "%s 0.0.1"\n' $p > "$tmp/old/$p"; chmod +x "$tmp/old/$p"; done
  if "$harness" deploy "$tmp/deploy.toml" --from "$tmp/old" > "$tmp/out" 2> "$tmp/err"; then fail "old programs deployed"; fi
  grep -q "version 0.0.1, the harness is" "$tmp/err" || fail "no version refusal"
  [ ! -s "$tmp/out" ] || fail "a host was attempted with programs of another version"
  echo "ok: a failing host is named and the other served; programs of another version are refused"
}

dry_run
check_before
first_deploy
check_deployed
run_deployed
second_deploy
corrupt_one
failures
