# What the netload shell tests share (sourced; POSIX sh), after `netload=$1 netserve=$2`: a temporary
# folder, fail(), and one netserve on 127.0.0.1 with a port from the kernel ($port, its log in
# $tmp/serve.log), stopped and cleaned up at exit. TMP_NAME names the folder.
tmp=$(mktemp -d "/tmp/${TMP_NAME:-netload-test}.XXXXXX")
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }

"$netserve" -p 0 --bind 127.0.0.1 > "$tmp/ready" 2> "$tmp/serve.log" &
server=$!
for i in $(seq 50); do [ -s "$tmp/ready" ] && break; sleep 0.1; done
port=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0])' "$tmp/ready") ||
  { echo "FAIL: netserve did not start"; cat "$tmp/serve.log"; exit 1; }
