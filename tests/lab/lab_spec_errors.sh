#!/usr/bin/env bash
# Lab test (no root needed: the file is checked before anything is touched): every [lab] error names
# file:line:col, addresses outside 198.18.0.0/15 are refused, unknown keys are errors.
#   lab_spec_errors.sh LAB_CLI
set -euo pipefail
lab_cli=$1
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

good='[lab]
name = "ok"
onprem_gateway = "198.18.0.1/24"
vpc_gateway = "198.19.0.1/24"
device = { namespace = "ok-dev", address = "198.18.0.2" }
instances = [ { namespace = "ok-i1", address = "198.19.0.2" } ]
[lab.circuit]
rate = "50M"
pps = 20000'
fails=0
# expect NAME SED-EXPRESSION EXPECTED-MESSAGE: the edited file must fail with file:LINE:COL: message.
expect() {
  local f="$work/$1.toml" out
  sed -E "$2" <<<"$good" >"$f"
  if out=$("$lab_cli" status "$f" 2>&1); then echo "FAIL $1: accepted"; fails=1; return; fi
  if ! grep -qE "^lab: $f:[0-9]+:[0-9]+: .*$3" <<<"$out"; then echo "FAIL $1: $out"; fails=1; return; fi
  echo "ok $1: $out"
}
expect public-address 's/198.19.0.2/10.0.0.2/' "outside 198.18.0.0/15"
expect public-gateway 's|198.18.0.1/24|192.168.100.1/24|' "outside 198.18.0.0/15"
expect wide-prefix 's|198.18.0.1/24|198.18.0.1/8|' "prefix must be /15 to /30"
expect junk-prefix 's|198.18.0.1/24|198.18.0.1/24x|' "prefix must be /15 to /30"
expect unknown-key 's/^pps = 20000/pps = 20000\nburst = 5/' "unknown key 'burst'"
expect unknown-host-key 's/address = "198.18.0.2"/address = "198.18.0.2", mtu = 9000/' "unknown key 'mtu'"
expect wrong-type 's/^pps = 20000/pps = "20k"/' "'pps' must be an integer"
expect bad-rate 's/"50M"/"fast"/' "'rate'"
expect outside-subnet 's/"198.19.0.2"/"198.18.0.9"/' "not a free host address"
expect long-name 's/"ok"/"averyverylongname"/' "name 'averyverylongname' must be"
expect duplicate-ns 's/ok-i1/ok-dev/' "used twice"
exit $fails
