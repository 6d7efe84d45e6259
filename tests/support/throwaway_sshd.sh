# Sourced by tests that need a real sshd: throw-away keys and a config that lets only those keys in.
# make_throwaway_keys DIR         -> DIR/host_key, DIR/client_key, DIR/authorized_keys
# write_sshd_config DIR PORT ADDRESS...  -> DIR/sshd_config (pid file DIR/sshd.pid)

make_throwaway_keys() {
  local dir=$1
  ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key"
  cp "$dir/client_key.pub" "$dir/authorized_keys"
  chmod 600 "$dir/authorized_keys"
}

write_sshd_config() {
  local dir=$1 port=$2 address
  shift 2
  {
    echo "Port $port"
    for address in "$@"; do echo "ListenAddress $address"; done
    cat <<CONF
HostKey $dir/host_key
AuthorizedKeysFile $dir/authorized_keys
PidFile $dir/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 50
MaxStartups 50
CONF
  } >"$dir/sshd_config"
}

# start_throwaway_sshd DIR ADDRESS...: keys (make_throwaway_keys) and an sshd on a free port of those
# addresses, retried on a port taken meanwhile; sets $port; returns 1 (DIR/sshd.log says why) when it
# never answers. The caller kills "$(cat DIR/sshd.pid)".
start_throwaway_sshd() {
  local dir=$1 sshd attempt i
  shift
  sshd=$(command -v sshd || echo /usr/sbin/sshd)
  make_throwaway_keys "$dir"
  mkdir -p /run/sshd
  for attempt in 1 2 3 4 5; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    write_sshd_config "$dir" "$port" "$@"
    "$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log" || continue
    for i in $(seq 50); do
      ssh -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
        -i "$dir/client_key" -p "$port" root@"$1" true 2>/dev/null && return 0
      sleep 0.1
    done
    kill "$(cat "$dir/sshd.pid" 2>/dev/null)" 2>/dev/null || true
  done
  return 1
}
