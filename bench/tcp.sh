# shellcheck shell=bash
# bench/tcp.sh — the TCP_STREAM rows of bench/run (sourced by it; not a command).
#
# netload against iperf3 and iperf2 at equal settings: the same write size (-m / -l), the same number of
# streams (--streams / -P), the same congestion control on every socket (-K / -C / -Z), sender and
# receiver pinned to their CPUs, socket buffers left to autotuning for all. The algorithm is cubic (Linux's
# default) where the host has it, else the host's default; --tcp-cc chooses. bbr paces inside TCP when the
# device has no fq qdisc (loopback, veth): a timer per burst, which can cap every tool alike (bench/README.md,
# the TCP rows), so a comparison under it measures the timer, not the tools.
# Each receiver reads with its own default size (netserve 256K under cubic, 64K under bbr; iperf3 the
# client's -l; iperf2 128K).
# Each tool sends and receives its own default way: netload sends with sendfile() from a memory file
# (core/data/tcp_send.hpp) and its receiver reads in the mode netload chooses (below); iperf3 and iperf2
# write() from a buffer and read() into one. Info rows say where a difference comes from: iperf3 -Z (its
# sendfile(); its receiver still copies) against netload, and netload --send-copy --recv-copy (copies at
# both ends, as iperf does) against iperf3 and iperf2.
# netload's receiver reads in the mode it chooses from where the peer is (core/policy/receive_mode.cpp: copy
# for one stream to this host, discard otherwise); an info row per cell runs the other mode beside it.
# Every cell runs TCP_ROUNDS times, the tools interleaved inside a round: TCP figures here swing between
# minutes more than the tools differ (bench/README.md), so one run per tool would compare the minutes. The report
# takes each cell's median. `--zerocopy` rows run beside netload's plain ones.
#
# Uses bench/run's globals and helpers: RAW LIB NETLOAD NETSERVE DUR SND_CPU RCV_CPU PIDS TCP_ROUNDS TCP_USER_* say
# stop_pid start_netserve NS_PORTS wait_listen; on the wire-like path also bench/wirelike.sh's WL_* and wl_wait_listen.

TCP_SIZES=(128K 1M)
TCP_STREAMS=(1 5)
tcp_host_cc() { sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null || echo reno; }
tcp_has_cc() {  # NAME: can every tool here set it? Without root it must also be in the allowed list.
    local cc_list=/proc/sys/net/ipv4/tcp_available_congestion_control
    [ "$(id -u)" -eq 0 ] || cc_list=/proc/sys/net/ipv4/tcp_allowed_congestion_control
    grep -qw "$1" "$cc_list" 2>/dev/null
}
if [ -z "${TCP_CC:-}" ]; then
    if tcp_has_cc cubic; then TCP_CC=cubic; else TCP_CC=$(tcp_host_cc); fi
fi

# In the receiver's or the sender's place of PATH (lo: this host; wl: the wire-like namespaces), pinned.
# Servers, in the background only: exec, so that $! is the server (bench/wirelike.sh wl_in_rx says why).
tcp_rx() { local where=$1; shift; if [ "$where" = wl ]; then exec ip netns exec "$WL_RX_NS" taskset -c "$RCV_CPU" "$@"; else exec taskset -c "$RCV_CPU" "$@"; fi; }
tcp_tx() { local where=$1; shift; if [ "$where" = wl ]; then ip netns exec "$WL_TX_NS" taskset -c "$SND_CPU" "$@"; else taskset -c "$SND_CPU" "$@"; fi; }
tcp_addr() { if [ "$1" = wl ]; then echo "$WL_RX_ADDR"; else echo 127.0.0.1; fi; }
tcp_listening() {  # WHERE PORT
    if [ "$1" = wl ]; then wl_wait_listen tcp "$2"; else wait_listen tcp "$2"; fi
}

# A netserve of its own for the TCP rows: pinned to the receiver CPU, at its defaults (no --rcvbuf).
TCP_NS_PORT=""
tcp_netserve() {  # WHERE
    if [ "$1" = lo ]; then
        start_netserve netserve_tcp "$RCV_CPU"
        TCP_NS_PORT=${NS_PORTS[netserve_tcp]}
        return
    fi
    tcp_rx wl timeout -k 2 900 "$NETSERVE" --bind "$WL_RX_ADDR" -p 0 >"$RAW/wl_netserve_tcp.out" 2>"$RAW/wl_netserve_tcp.err" &
    PIDS+=("$!")
    TCP_NS_PORT=$(python3 "$LIB" wait-ready "$RAW/wl_netserve_tcp.out" 5) || {
        echo "bench/run: wire-like netserve (TCP) did not start:" >&2; cat "$RAW/wl_netserve_tcp.err" >&2; return 1; }
}

# Every tool's option for the congestion control, none where the host's own is used (TCP_CC empty).
tcp_cc() { [ -n "$TCP_CC" ] && printf '%s\n' "$1" "$TCP_CC"; }
TCP_PIN_THREADS=yes   # netload -T: its sender thread and netserve's receiving thread pinned as well

tcp_netload() {  # WHERE NAME SIZE STREAMS [extra test options]
    local where=$1 name=$2 size=$3 streams=$4 pin=() cc; shift 4
    mapfile -t cc < <(tcp_cc -K)
    [ "$TCP_PIN_THREADS" = yes ] && pin=(-T "$SND_CPU,$RCV_CPU")
    say "netload $name: -m $size --streams $streams ${cc[*]} ${pin[*]} $*"
    tcp_tx "$where" timeout -k 2 $((DUR + 20)) "$NETLOAD" -H "$(tcp_addr "$where")" -p "$TCP_NS_PORT" -t TCP_STREAM \
        -l "$DUR" --streams "$streams" "${pin[@]}" --json -- -m "$size" "${cc[@]}" "$@" \
        >"$RAW/$name.json" 2>"$RAW/$name.err" || say "  netload $name exited $?"
}

tcp_iperf3() {  # WHERE NAME SIZE STREAMS [extra client options]
    local where=$1 name=$2 size=$3 streams=$4 port cc; shift 4
    mapfile -t cc < <(tcp_cc -C)
    port=$(python3 "$LIB" freeport)
    tcp_rx "$where" timeout -k 2 $((DUR + 20)) iperf3 -s -1 -B "$(tcp_addr "$where")" -p "$port" --json \
        >"$RAW/$name.server.json" 2>"$RAW/$name.server.err" &
    local spid=$!; PIDS+=("$spid")
    tcp_listening "$where" "$port" || { stop_pid "$spid" TERM; return; }
    say "iperf3 $name: -l $size -P $streams ${cc[*]} $*"
    tcp_tx "$where" timeout -k 2 $((DUR + 20)) iperf3 -c "$(tcp_addr "$where")" -p "$port" -t "$DUR" --json \
        --get-server-output -l "$size" -P "$streams" "${cc[@]}" "$@" >"$RAW/$name.json" 2>"$RAW/$name.err" ||
        say "  iperf3 $name exited $?"
    stop_pid "$spid" TERM
}

tcp_iperf2() {  # WHERE NAME SIZE STREAMS — the server's CSV report (-y C): a line per stream
    local where=$1 name=$2 size=$3 streams=$4 port cc
    mapfile -t cc < <(tcp_cc -Z)
    port=$(python3 "$LIB" freeport)
    tcp_rx "$where" timeout -k 2 $((DUR + 20)) iperf -s -B "$(tcp_addr "$where")" -p "$port" -y C \
        >"$RAW/$name.server.csv" 2>"$RAW/$name.server.err" &
    local spid=$!; PIDS+=("$spid")
    tcp_listening "$where" "$port" || { stop_pid "$spid" INT; return; }
    say "iperf2 $name: -l $size -P $streams ${cc[*]}"
    tcp_tx "$where" timeout -k 2 $((DUR + 20)) iperf -c "$(tcp_addr "$where")" -p "$port" -t "$DUR" -l "$size" \
        -P "$streams" "${cc[@]}" -y C >"$RAW/$name.out" 2>"$RAW/$name.err" || say "  iperf $name exited $?"
    sleep 0.3   # the server writes its lines once every stream has ended
    stop_pid "$spid" INT
}

tcp_sizes_json() { local IFS=,; echo "${TCP_SIZES[*]}" | sed 's/,/", "/g'; }  # inside ["..."]

# tcp_matrix WHERE: every cell, TCP_ROUNDS rounds, the tools interleaved; raw/tcp_WHERE.json says what ran.
tcp_matrix() {
    local where=$1 r size n cell other
    tcp_netserve "$where" || return 0
    for r in $(seq 1 "$TCP_ROUNDS"); do
        for size in "${TCP_SIZES[@]}"; do
            for n in "${TCP_STREAMS[@]}"; do
                cell="tcp_${where}_m${size}_s${n}"
                tcp_netload "$where" "${cell}_netload_r$r" "$size" "$n"
                # The receive mode netload did not choose, right after the one it did (raw/*.json "receive").
                other=--recv-copy
                [ "$(python3 "$LIB" field "$RAW/${cell}_netload_r$r.json" receive.mode 2>/dev/null)" = copy ] && other=--recv-discard
                tcp_netload "$where" "${cell}_othermode_r$r" "$size" "$n" "$other"
                tcp_iperf3 "$where" "${cell}_iperf3_r$r" "$size" "$n"
                tcp_iperf2 "$where" "${cell}_iperf2_r$r" "$size" "$n"
                tcp_netload "$where" "${cell}_zerocopy_r$r" "$size" "$n" --zerocopy
                tcp_iperf3 "$where" "${cell}_iperf3sendfile_r$r" "$size" "$n" -Z
                tcp_netload "$where" "${cell}_sendcopy_r$r" "$size" "$n" --send-copy --recv-copy
            done
        done
    done
    printf '{"ran": true, "where": "%s", "cc": "%s", "rounds": %s, "sizes": ["%s"], "streams": [%s], "seconds": %s}\n' \
        "$where" "$TCP_CC" "$TCP_ROUNDS" "$(tcp_sizes_json)" \
        "$(IFS=,; echo "${TCP_STREAMS[*]}")" "$DUR" >"$RAW/tcp_$where.json"
}

# tcp_user: one stream on loopback placed as users place the tools by hand: servers started under taskset on the
# receiver CPU, clients under taskset on the sender CPU, nothing else (no netload -T), 2-s runs, interleaved
# rounds; under the host's own congestion control (no option given), then under cubic named on every command line
# where the host's own is another. raw/tcp_user.json says what ran.
tcp_user() {
    local TCP_CC TCP_PIN_THREADS=no DUR=$TCP_USER_SECONDS r size cc cell own ccs=("")
    own=$(tcp_host_cc)
    [ "$own" != cubic ] && tcp_has_cc cubic && ccs+=(cubic)
    start_netserve netserve_user "$RCV_CPU"
    TCP_NS_PORT=${NS_PORTS[netserve_user]}
    for r in $(seq 1 "$TCP_USER_ROUNDS"); do
        for cc in "${ccs[@]}"; do
            TCP_CC=$cc
            for size in "${TCP_SIZES[@]}"; do
                cell="tcp_user_${cc:-$own}_m${size}_s1"
                tcp_netload lo "${cell}_netload_r$r" "$size" 1
                tcp_iperf3 lo "${cell}_iperf3_r$r" "$size" 1
                tcp_iperf2 lo "${cell}_iperf2_r$r" "$size" 1
            done
        done
    done
    local named='[{"cc": "'"$own"'", "named": false}'
    [ "${#ccs[@]}" -gt 1 ] && named+=', {"cc": "cubic", "named": true}'
    printf '{"ran": true, "where": "user", "ccs": %s], "rounds": %s, "sizes": ["%s"], "streams": [1], "seconds": %s}\n' \
        "$named" "$TCP_USER_ROUNDS" "$(tcp_sizes_json)" "$DUR" >"$RAW/tcp_user.json"
}
