#!/bin/sh
# The self-contained netload and netserve with nothing but themselves: a root folder that holds only the two
# programs, /proc and /dev/null (no libraries, no /etc). Inside it, in a mount and PID namespace of its own,
# netserve listens on 127.0.0.1 (a port the kernel picks) and netload runs a 1-second UDP_STREAM and
# TCP_STREAM against it: each result's counts reconcile (sent = received + lost). Then, with an /etc/hosts
# added, netload reaches netserve by a name from it, and a name not in it fails with one line saying that
# the static build reads only /etc/hosts. Every test authenticates with a key (--psk-file), so the static
# libcrypto works there too, with no config file and no /dev/urandom. A dynamic program cannot even start
# in that root.
# Arguments: the netload and netserve programs. Root only (mounts, chroot): exits 77 (skipped) otherwise,
# or when the programs are not built.
set -u

# Inside the namespaces (the script calls itself): runs everything, leaves the outputs in $work.
if [ "${1:-}" = --inside ]; then
  root=$2 work=$3
  mount --bind /dev/null "$root/dev/null" || exit 3
  chroot "$root" /netserve --bind 127.0.0.1 -p 0 --psk-file /key >"$work/ready" 2>"$work/netserve.log" &
  server=$!
  i=0
  while [ $i -lt 100 ] && ! grep -q . "$work/ready"; do sleep 0.1; i=$((i + 1)); done
  port=$(sed -n 's/.*"ports":\[\([0-9]*\).*/\1/p' "$work/ready")
  [ -n "$port" ] || { echo "netserve gave no ready line"; exit 3; }
  # run NAME HOST TEST GLOBAL-OPTIONS... -- TEST-OPTIONS...: netload in the root; NAME.json, .err, .status
  run() {
    name=$1 host=$2 test=$3
    shift 3
    chroot "$root" /netload -H "$host" -p "$port" -t "$test" -l 1 --json --psk-file /key "$@" >"$work/$name.json" 2>"$work/$name.err"
    echo $? >"$work/$name.status"
  }
  run udp 127.0.0.1 UDP_STREAM --pps 50000 -- -m 64
  run tcp 127.0.0.1 TCP_STREAM --rate 200M -- -m 16K
  printf '# chroot.sh\n127.0.0.1\tnetbench-static-test  alias # comment\n' >"$root/etc/hosts"
  run named netbench-static-test TCP_STREAM --rate 200M -- -m 16K
  run unknown no-such-host.invalid TCP_STREAM
  kill "$server"
  wait "$server"
  exit 0
fi

netload=$1 netserve=$2
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (chroot and mounts)"
for p in "$netload" "$netserve"; do
  [ -x "$p" ] || skip "no $p (build it: cmake --preset static && cmake --build --preset static)"
done
for tool in unshare chroot python3; do
  command -v $tool >/dev/null || skip "needs $tool"
done

work=$(mktemp -d /tmp/netbench-static.XXXXXX)
root=$work/root
cleanup() {
  # The mounts belong to the namespace, gone with it; never remove through one that is somehow left.
  if grep -qF " $root/" /proc/self/mounts; then echo "mounts left under $root: not removing $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
mkdir -p "$root/proc" "$root/dev" "$root/etc"
: >"$root/dev/null"
(umask 077 && echo "chroot-test-key-$$-not-a-secret" >"$root/key")
cp "$netload" "$root/netload" && cp "$netserve" "$root/netserve" || exit 1

# The static build has no XDP engine: asked for, it says so in one line and exits 1 before binding anything.
"$netserve" -p 0 --engine xdp --interface lo >/dev/null 2>"$work/xdp.err"
status=$?
if [ $status -ne 1 ] || [ "$(wc -l <"$work/xdp.err")" -ne 1 ] || ! grep -q "built without the XDP engine" "$work/xdp.err"; then
  echo "FAIL: static netserve --engine xdp: status $status (want 1), stderr: $(cat "$work/xdp.err")"
  exit 1
fi

unshare --mount --pid --fork --mount-proc="$root/proc" "$0" --inside "$root" "$work"
status=$?
if [ $status -ne 0 ]; then
  echo "FAIL: the run inside the chroot ended with status $status"
  cat "$work/netserve.log" 2>/dev/null
  exit 1
fi

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def text(name): return open(f"{work}/{name}").read()
fails = []
for name, tcp in (("udp", False), ("tcp", True), ("named", True)):
    status = int(text(f"{name}.status"))
    if status not in (0, 4):  # 4: a paced sender fell short of its target on a busy machine; counts still hold
        fails.append(f"{name}: netload exited {status}: {text(name + '.err').strip()}")
        continue
    r = json.loads(text(f"{name}.json"))
    sent, got, lost = r["sender"]["packets"], r["receiver"]["packets"], r["loss"]["packets"]
    print(f"{name}: sent {sent} = received {got} + lost {lost}; bytes {r['sender']['bytes']} -> {r['receiver']['bytes']}")
    if not (r["ok"] is True and r["loss"]["reconciles"] is True and sent == got + lost and sent > 0):
        fails.append(f"{name}: counts do not reconcile: {json.dumps(r)}")
    if tcp and r["sender"]["bytes"] != r["receiver"]["bytes"]:
        fails.append(f"{name}: TCP bytes sent and received differ")
err = text("unknown.err")
want = "cannot resolve 'no-such-host.invalid': the static build reads only /etc/hosts; give a numeric address"
if int(text("unknown.status")) == 0 or err.count("\n") != 1 or want not in err:
    fails.append(f"unknown name: want one line containing \"{want}\" and a failure, got status "
                 f"{text('unknown.status').strip()} and: {err!r}")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
