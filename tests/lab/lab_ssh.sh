#!/usr/bin/env bash
# Lab test: the ssh launcher across the emulated circuit. An sshd (throw-away keys) runs inside the lab's
# device namespace; the harness itself runs inside instance 1's namespace, reaches the device over ssh
# through the circuit (pps limit 20000), starts netserve there, and drives eight netns instances against
# it (procedure A1, -m 1). Checks: the run is ok, it went through ssh, and the steady-state received pps is
# within 5 % of the circuit's limit. Skips (77) only where root, namespaces or sshd are missing.
#   lab_ssh.sh LAB_CLI HARNESS NETSERVE NETLOAD
lab_cli=$1 harness=$2 netserve=$3 netload=$4
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[[ -x $sshd ]] || { echo "SKIP: no sshd on this machine"; exit 77; }
command -v ssh >/dev/null || { echo "SKIP: no ssh client on this machine"; exit 77; }

lab_start "$lab_cli" "$(lab_file lsh 8 'pps = 20000')"
mkdir -p /run/sshd "$work/bin"
ln -s "$netserve" "$work/bin/netserve"
ln -s "$netload" "$work/bin/netload"
. "$here/../support/throwaway_sshd.sh"
make_throwaway_keys "$work"
write_sshd_config "$work" 22 198.18.0.2
ip netns exec lsh-dev "$sshd" -f "$work/sshd_config" -E "$work/sshd.log" ||
  { cat "$work/sshd.log"; echo "SKIP: sshd could not start in the device namespace"; exit 77; }
for _ in $(seq 50); do [[ -s $work/sshd.pid ]] && break; sleep 0.1; done
server_pids+=("$(cat "$work/sshd.pid")")

opts='ssh_options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"]'
{
  echo 'name = "lab-ssh"'
  echo '[defaults]'
  echo 'duration = 3'
  echo 'warmup = 1'
  echo 'lead = 2.0'
  echo 'ports = "11256-11263"'
  echo '[hosts]'
  echo "device = { address = \"198.18.0.2\", launcher = \"ssh\", user = \"root\", identity = \"$work/client_key\", bin_dir = \"$work/bin\", $opts }"
  for k in 1 2 3 4 5 6 7 8; do
    echo "i$k = { address = \"198.19.0.$((k + 1))\", launcher = \"netns\", namespace = \"lsh-i$k\", bin_dir = \"$work/bin\" }"
  done
  echo '[[tests]]'
  echo 'name = "pps-device-server-over-ssh"'
  echo 'message_size = 1'
  echo 'pps = 5000'
  echo 'topology = "fan-in"'
  echo 'server = "device"'
  echo 'clients = ["i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8"]'
} >"$work/plan.toml"

ip netns exec lsh-i1 "$harness" run "$work/plan.toml" --results "$work/results" --no-live >"$work/out" 2>&1 ||
  { cat "$work/out"; echo "FAIL: harness over ssh across the circuit failed"; exit 1; }
sed -n '/^Summary/,$p' "$work/out"
dir=$(ls -d "$work"/results/lab-ssh-*)
grep -q "ControlMaster=yes" "$dir/environment.json" || { echo "FAIL: the device was not reached over ssh"; exit 1; }
python3 - "$dir/summary.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["ok"], run["failures"]
pps = run["steady_state"]["receiver"]["pps"]
print(f"over ssh: limit 20000 pps, steady-state received {pps:.0f} pps ({(pps / 20000 - 1) * 100:+.2f} %)")
sys.exit(0 if abs(pps / 20000 - 1) <= 0.05 else 1)
PY
