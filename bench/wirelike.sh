# shellcheck shell=bash
# bench/wirelike.sh — the wire-like section of bench/run (sourced by it; not a command).
#
# On loopback a UDP GSO buffer is never cut into datagrams, so loopback figures are not real-path figures.
# This section measures on tests/lab/wirelike.sh's path instead: two network namespaces joined by a veth
# pair with gso_max_segs 1 (every datagram its own frame, as on a NIC without UDP segmentation offload),
# RPS steering the receiver's stack to the receiver CPU, the receiver pinned to that CPU and the sender to
# the other. Rows (info, not graded): iperf3 and iperf2 received rate at -l 16 / -l 64, netload's
# unpaced received rate at -m 1 / -m 64, and netload's best rate with <= 0.5 % loss (wirelike_netload_pdr).
# Around every run the kernel's counters are read, so each row can say where the loss happened.
#
# One graded row: the harness's rate search (PDR, <= 0.5 % loss, -m 64, one and two instances) within 10 % of
# the kernel's best rate (wirelike_harness_pdr, tests/lab/lab_wirelike.sh --grade 10).
#
# Uses bench/run's globals and helpers: ROOT RAW LIB NETLOAD NETSERVE HARNESS DUR SND_CPU RCV_CPU PIDS say
# stop_pid.
# Traffic only inside the two namespaces it creates (198.18.0.0/15); the EXIT trap of bench/run calls
# wl_bench_down, which ends whatever still runs inside them and deletes them.

WL_SCRIPT="$ROOT/tests/lab/wirelike.sh"
WL_TRUTH="$ROOT/tests/lab/wirelike_truth.py"
WL_NAME=nbbenchwl      # path NAME: namespaces nbbenchwl-tx / nbbenchwl-rx
WL_UP=no
WL_PDR_SECONDS=1.5     # per bisection trial: short, so the section stays under two minutes
WL_PDR_TRIALS=10       # bisection trials per message size (repeats included), after the two starting rates

# Why the section cannot run here, or nothing when it can (the same rules as tests/lab/wirelike.sh).
wirelike_unavailable() {
    if [ "$(id -u)" -ne 0 ]; then echo "not root (the wire-like path needs network namespaces)"; return; fi
    if ! unshare --net true 2>/dev/null; then echo "this kernel or sandbox refuses new network namespaces"; return; fi
    if [ "$(nproc)" -lt 2 ] || [ "$SND_CPU" = "$RCV_CPU" ]; then echo "needs two CPUs (sender and receiver apart)"; return; fi
    command -v ip >/dev/null || echo "ip (iproute2) is not installed"
}

wl_bench_up() {
    "$WL_SCRIPT" up "$WL_NAME" "$RCV_CPU" >"$RAW/wl_path.log" 2>&1 || { cat "$RAW/wl_path.log" >&2; return 1; }
    WL_UP=yes
    eval "$("$WL_SCRIPT" info "$WL_NAME")"   # WL_TX_NS WL_RX_NS WL_TX_ADDR WL_RX_ADDR WL_RECV_CPU
}

wl_bench_down() {  # from bench/run's EXIT trap too: must be safe to call twice
    [ "$WL_UP" = yes ] || return 0
    "$WL_SCRIPT" down "$WL_NAME" >>"$RAW/wl_path.log" 2>&1
    WL_UP=no
}

wl_counters() {  # FILE
    "$WL_SCRIPT" counters "$WL_NAME" >"$1" 2>>"$RAW/wl_path.log"
}

wl_wait_listen() {  # tcp|udp PORT — ss inside the receiver's namespace
    local flag=-Hltn _
    [ "$1" = udp ] && flag=-Huan
    for _ in $(seq 1 100); do
        [ -n "$(ip netns exec "$WL_RX_NS" ss $flag "sport = :$2" 2>/dev/null)" ] && return 0
        sleep 0.05
    done
    echo "bench/run: nothing listening on $1 port $2 in $WL_RX_NS" >&2
    return 1
}

# In a namespace, pinned; the pid recorded in PIDS (ip netns exec and taskset exec, timeout forwards signals).
# wl_in_rx starts servers, in the background only: a function run with & is a subshell of its own, which
# exec replaces, so that $! is the server's timeout and stop_pid reaches the server (without exec it would
# end only the subshell, and the server would live on until its timeout).
wl_in_rx() { exec ip netns exec "$WL_RX_NS" taskset -c "$RCV_CPU" "$@"; }
wl_in_tx() { ip netns exec "$WL_TX_NS" taskset -c "$SND_CPU" "$@"; }

WL_NS_PID="" WL_NS_PORT=""
wl_netserve_start() {  # [netserve options...]
    wl_in_rx timeout -k 2 600 "$NETSERVE" --bind "$WL_RX_ADDR" -p 0 --rcvbuf 4194304 "$@" \
        >"$RAW/wl_netserve.out" 2>"$RAW/wl_netserve.err" &
    WL_NS_PID=$!
    PIDS+=("$WL_NS_PID")
    WL_NS_PORT=$(python3 "$LIB" wait-ready "$RAW/wl_netserve.out" 5) || {
        echo "bench/run: wire-like netserve did not start:" >&2; cat "$RAW/wl_netserve.err" >&2; return 1; }
}

wl_netload() {  # NAME SIZE — unpaced, DUR seconds, counters around it
    local name=$1 size=$2
    say "wire-like netload $name: -m $size unpaced"
    wl_counters "$RAW/$name.k0.json"
    wl_in_tx timeout -k 2 $((DUR + 20)) "$NETLOAD" -H "$WL_RX_ADDR" -p "$WL_NS_PORT" -t UDP_STREAM -l "$DUR" \
        -T "$SND_CPU,$RCV_CPU" --json -- -m "$size" >"$RAW/$name.json" 2>"$RAW/$name.err" || say "  netload $name exited $?"
    wl_counters "$RAW/$name.k1.json"
}

wl_iperf3() {  # NAME SIZE — iperf3 -u -l SIZE -b 0, receive buffer 4 MB as in the loopback rows
    local name=$1 size=$2 port=5201
    wl_in_rx timeout -k 2 $((DUR + 20)) iperf3 -s -1 -B "$WL_RX_ADDR" -p "$port" --json \
        >"$RAW/$name.server.json" 2>"$RAW/$name.server.err" &
    local spid=$!; PIDS+=("$spid")
    wl_wait_listen tcp "$port" || { stop_pid "$spid" TERM; return; }
    say "wire-like iperf3 $name: -u -l $size -b 0"
    wl_counters "$RAW/$name.k0.json"
    wl_in_tx timeout -k 2 $((DUR + 20)) iperf3 -c "$WL_RX_ADDR" -p "$port" -t "$DUR" --json --get-server-output \
        -u -l "$size" -b 0 -w 4M >"$RAW/$name.json" 2>"$RAW/$name.err" || say "  iperf3 $name exited $?"
    wl_counters "$RAW/$name.k1.json"
    stop_pid "$spid" TERM
}

wl_iperf2() {  # NAME SIZE — iperf -u -l SIZE -b 100G (its maximum), receive buffer 4 MB
    local name=$1 size=$2 port=5001
    wl_in_rx timeout -k 2 $((DUR + 20)) iperf -s -u -B "$WL_RX_ADDR" -p "$port" -e -w 4M >"$RAW/$name.server.out" 2>&1 &
    local spid=$!; PIDS+=("$spid")
    wl_wait_listen udp "$port" || { stop_pid "$spid" INT; return; }
    say "wire-like iperf2 $name: -u -l $size -b 100G"
    wl_counters "$RAW/$name.k0.json"
    wl_in_tx timeout -k 2 $((DUR + 20)) iperf -c "$WL_RX_ADDR" -p "$port" -u -l "$size" -b 100G -t "$DUR" -e \
        >"$RAW/$name.out" 2>&1 || say "  iperf $name exited $?"
    sleep 0.3   # the server prints its report after the client's last datagram
    wl_counters "$RAW/$name.k1.json"
    stop_pid "$spid" INT
}

# wirelike_xdp: netserve's receive engines side by side under the same unpaced netload -m 1 load, in
# WL_XDP_ROUNDS interleaved rounds: the socket engine, then the XDP engine on the receiving veth (--engine
# xdp, native, dropping). Graded (bench/report.py): the XDP engine's median count >= 5x the socket engine's,
# and every XDP count equal to the sending veth's tx_packets within 0.1 %.
WL_XDP_ROUNDS=3
wirelike_xdp() {
    local r
    if ! "$NETSERVE" --help 2>/dev/null | grep -- '--engine socket|xdp' >/dev/null; then  # no -q: pipefail
        say "wire-like XDP rows skipped: this netserve was built without the XDP engine"
        WL_XDP_ROUNDS=0
        return 0
    fi
    for r in $(seq 1 "$WL_XDP_ROUNDS"); do
        if wl_netserve_start; then
            wl_netload "wl_socket_m1_r$r" 1
            stop_pid "$WL_NS_PID" TERM
        fi
        if wl_netserve_start --engine xdp --interface wl-rx; then
            wl_netload "wl_xdp_m1_r$r" 1
            stop_pid "$WL_NS_PID" TERM
        fi
    done
}

# wirelike_netload_pdr NAME SIZE: netload's best rate with <= 0.5 % loss on the wire-like path, by
# netload's own counts (sent vs received), found by tests/lab/wirelike_truth.py's bisection (to 2 %,
# WL_PDR_SECONDS per trial). It starts from half the unpaced run's received rate and its sent rate (rows
# wl_netload_mSIZE, run before). The helper prints the kernel's loss for every trial beside netload's.
# The row and its JSON hold the result only, so another search can replace the helper without changing them.
wirelike_netload_pdr() {  # NAME SIZE
    local name=$1 size=$2 rx tx rates
    rx=$(python3 "$LIB" field "$RAW/wl_netload_m$size.json" receiver.pps 2>/dev/null) || rx=""
    tx=$(python3 "$LIB" field "$RAW/wl_netload_m$size.json" sender.pps 2>/dev/null) || tx=""
    if [ -z "$rx" ] || [ -z "$tx" ]; then
        say "  $name: no unpaced netload result at -m $size to start from; skipped"
        return
    fi
    rates=$(python3 -c "import sys; rx, tx = map(float, sys.argv[1:]); print(f'{max(rx / 2, 1000):.0f},{tx:.0f}')" "$rx" "$tx")
    say "wire-like netload PDR $name: -m $size, starting rates $rates, ${WL_PDR_SECONDS}s trials"
    # The helper runs in the foreground under timeout; it has its own netserve, stopped by itself (and
    # by wl_bench_down, which ends everything left in the namespaces).
    timeout -k 5 100 python3 "$WL_TRUTH" --netload "$NETLOAD" --netserve "$NETSERVE" --name "$WL_NAME" \
        --recv-cpu "$RCV_CPU" --send-cpu "$SND_CPU" -m "$size" --senders 1 -l "$WL_PDR_SECONDS" \
        --no-unpaced --rates "$rates" --max-trials "$WL_PDR_TRIALS" --criterion netload --thresholds 0.5 \
        --netserve-arg=--rcvbuf=4194304 --json "$RAW/$name.json" >"$RAW/$name.out" 2>"$RAW/$name.err" ||
        say "  $name exited $? (see $RAW/$name.err)"
}

# wirelike_harness_pdr: the harness's search against the kernel's counters, on the lab test's own path
# (namespaces wlh-tx / wlh-rx, receiver CPU 0, sender CPU 1; about 3 min, 6 when both need a second
# attempt). Writes raw/wl_harness_pdr.json; without a harness binary, a record saying so.
wirelike_harness_pdr() {
    if [ -z "$HARNESS" ]; then
        echo '{"ran": false, "reason": "no harness binary under the bin dir (a core-only build)"}' >"$RAW/wl_harness_pdr.json"
        return
    fi
    say "wire-like harness PDR: -m 64, 1 and 2 instances, against the kernel's counters (tests/lab/lab_wirelike.sh)"
    timeout -k 5 900 "$ROOT/tests/lab/lab_wirelike.sh" --grade 10 --json "$RAW/wl_harness_pdr.json" \
        "$HARNESS" "$NETSERVE" "$NETLOAD" >"$RAW/wl_harness_pdr.out" 2>&1 ||
        say "  lab_wirelike.sh exited $? (see $RAW/wl_harness_pdr.out)"
    [ -s "$RAW/wl_harness_pdr.json" ] ||
        echo '{"ran": false, "reason": "lab_wirelike.sh wrote no figures (raw/wl_harness_pdr.out)"}' >"$RAW/wl_harness_pdr.json"
}

# wirelike_tcp_section: only the TCP rows on the wire-like path (bench/run --tcp).
wirelike_tcp_section() {
    local why
    why=$(wirelike_unavailable)
    if [ -z "$why" ] && ! wl_bench_up; then why="tests/lab/wirelike.sh up failed (raw/wl_path.log)"; fi
    if [ -n "$why" ]; then
        say "wire-like TCP rows skipped: $why"
        printf '{"ran": false, "reason": "%s"}\n' "$why" >"$RAW/tcp_wl.json"
        return 0
    fi
    tcp_matrix wl
    wl_bench_down
}

# wirelike_section: every wire-like run; writes raw/wirelike.json (ran / why not) for the report.
wirelike_section() {
    local why t0
    t0=$(date +%s)
    why=$(wirelike_unavailable)
    if [ -n "$why" ]; then
        say "wire-like section skipped: $why"
        printf '{"ran": false, "reason": "%s"}\n' "$why" >"$RAW/wirelike.json"
        return 0
    fi
    if ! wl_bench_up; then
        printf '{"ran": false, "reason": "tests/lab/wirelike.sh up failed (raw/wl_path.log)"}\n' >"$RAW/wirelike.json"
        return 0
    fi
    say "wire-like path: $WL_TX_NS $WL_TX_ADDR -> $WL_RX_NS $WL_RX_ADDR, gso_max_segs 1, RPS to CPU $RCV_CPU"
    wl_iperf3 wl_iperf3_l16 16
    wl_iperf3 wl_iperf3_l64 64
    wl_iperf2 wl_iperf2_l16 16
    wl_iperf2 wl_iperf2_l64 64
    if wl_netserve_start; then
        wl_netload wl_netload_m1 1
        wl_netload wl_netload_m64 64
        stop_pid "$WL_NS_PID" TERM
    fi
    wirelike_netload_pdr wl_pdr_m1 1
    wirelike_netload_pdr wl_pdr_m64 64
    wirelike_xdp
    tcp_matrix wl
    wl_bench_down
    wirelike_harness_pdr
    printf '{"ran": true, "path": "%s", "recv_cpu": %s, "send_cpu": %s, "seconds": %s, "pdr_trial_seconds": %s, "xdp_rounds": %s, "elapsed": %s}\n' \
        "$WL_NAME" "$RCV_CPU" "$SND_CPU" "$DUR" "$WL_PDR_SECONDS" "$WL_XDP_ROUNDS" "$(( $(date +%s) - t0 ))" >"$RAW/wirelike.json"
}
