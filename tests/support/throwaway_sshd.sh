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
