# Sourced by the lab tests: skip rules, a lab file per test, netserve / netload inside the lab's
# namespaces, and a trap that always stops what the test started and takes the lab down.
# Only the lab's own namespaces (198.18.0.0/15) ever carry traffic.
set -euo pipefail

lab_require() {
  if [[ $(id -u) -ne 0 ]]; then echo "SKIP: the lab needs root (network namespaces, tc, nft)"; exit 77; fi
  if ! unshare --net true 2>/dev/null; then echo "SKIP: this kernel or sandbox refuses new network namespaces"; exit 77; fi
  for tool in ip tc nft python3; do
    command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
  done
}

# lab_file NAME INSTANCES [circuit keys...] -> path of a lab TOML in $work
lab_file() {
  local name=$1 n=$2; shift 2
  local f="$work/$name.toml" k
  {
    echo "[lab]"
    echo "name = \"$name\""
    echo 'onprem_gateway = "198.18.0.1/24"'
    echo 'vpc_gateway = "198.19.0.1/24"'
    echo "device = { namespace = \"$name-dev\", address = \"198.18.0.2\" }"
    echo "instances = ["
    for ((k = 1; k <= n; k++)); do echo "  { namespace = \"$name-i$k\", address = \"198.19.0.$((k + 1))\" },"; done
    echo "]"
    echo "[lab.circuit]"
    for k in "$@"; do echo "$k"; done
  } >"$f"
  echo "$f"
}

server_pids=() load_pids=()
lab_cleanup() {
  local rc=$? p
  for p in "${load_pids[@]}" "${server_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${load_pids[@]}" "${server_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n ${lab_toml:-} ]] && "$lab_cli" down "$lab_toml" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$rc"
}

lab_start() {  # lab_start CLI TOML
  lab_cli=$1 lab_toml=$2
  "$lab_cli" up "$lab_toml" >/dev/null
}

# netserve_in NS ADDR PORTSPEC OUTFILE [OPTIONS...]: starts netserve in a namespace and waits for its ready line.
netserve_in() {
  ip netns exec "$1" "$netserve" --bind "$2" -p "$3" "${@:5}" >"$4" 2>"$4.err" &
  server_pids+=($!)
  local i
  for i in $(seq 100); do grep -q '"ready"' "$4" 2>/dev/null && return 0; sleep 0.05; done
  echo "FAIL: netserve in $1 not ready: $(cat "$4.err")"; exit 1
}

# netload_in NS OUT ARGS...: one netload in a namespace, in the background, its JSON to OUT.
netload_in() {
  local ns=$1 out=$2; shift 2
  ip netns exec "$ns" "$netload" "$@" >"$out" 2>"$out.err" &
  load_pids+=($!)
}

# Waits for every background netload of this test; one that exits other than 0 or the statuses named
# (`wait_loads 4`: netload's "paced target missed") fails the test with its stderr.
wait_loads() {
  local p s rc=0
  for p in "${load_pids[@]}"; do
    s=0
    wait "$p" || s=$?
    [[ $s == 0 || " $* " == *" $s "* ]] || rc=1
  done
  load_pids=()
  return $rc
}

stop_servers() {
  local p
  for p in "${server_pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  server_pids=()
}

work=$(mktemp -d)
trap lab_cleanup EXIT
