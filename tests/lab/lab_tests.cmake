# The emulated-circuit lab tests (harness/lab; README.md, "Rehearse on an emulated circuit"). Included from tests/lab/CMakeLists.txt.
# They need root and network namespaces (CI runs as root) and skip with 77, saying why, elsewhere.
# The limit tests measure rates on a 2-core machine: RUN_SERIAL keeps other tests off the CPU meanwhile.
# They drive the lab through lab_cli (harness/lab/lab_cli.cpp: the same lab_main as `harness lab`).
# lab_cli is built with the harness (harness/lab); without it (NETBENCH_HARNESS=OFF) there are no lab tests.
if(NOT TARGET lab_cli)
  return()
endif()
set(_lab ${CMAKE_CURRENT_LIST_DIR})
set(_lab_bins $<TARGET_FILE:lab_cli> $<TARGET_FILE:netserve> $<TARGET_FILE:netload>)

add_test(NAME "lab: [lab] errors name file:line:col, addresses outside 198.18.0.0/15 are refused"
         COMMAND ${_lab}/lab_spec_errors.sh $<TARGET_FILE:lab_cli>)
add_test(NAME "lab: up is idempotent, down leaves netns and links as before, also after a failed run"
         COMMAND ${_lab}/lab_updown.sh ${_lab_bins})
add_test(NAME "lab: packet-rate limit read back within 5 % in both roles, received = kernel UDP count within 1 %"
         COMMAND ${_lab}/lab_limits.sh pps ${_lab_bins})
add_test(NAME "lab: bit-rate limit read back within 5 % of rate x 1400/1442 in both roles"
         COMMAND ${_lab}/lab_limits.sh bps ${_lab_bins})
add_test(NAME "lab: XDP engine reads the packet-rate limit within 1 % in both roles, = kernel UDP count, no livelock verdict"
         COMMAND ${_lab}/lab_limits.sh xdp ${_lab_bins})
add_test(NAME "lab: MTU step 1500/1400 - UDP -m 1472 fails naming path MTU 1400, harness check warns of -m 1373, TCP MSS <= 1360"
         COMMAND ${_lab}/lab_mtu.sh ${_lab_bins} $<TARGET_FILE:harness>)
add_test(NAME "lab: nothing netserve sends fragments - UDP_RR answers and a raw reverse stream over the path MTU refused at registration"
         COMMAND ${_lab}/lab_df.sh ${_lab_bins})
add_test(NAME "lab: TCP_INFO across a 50 Mbit/s circuit - retransmits, RTT above idle, netload = ss -tin within 10 %, both directions"
         COMMAND ${_lab}/lab_tcp_info.sh ${_lab_bins})

# netload alone on the wire-like path (about 10 s): the seed's unpaced -m 1 line says what its overdriven
# figure means, and TCP across the path discards by itself. Serial: it overdrives a receiver on purpose.
add_test(NAME "lab: wire-like seed line - an overdriven receiver's figure says what it means, TCP to another host discards"
         COMMAND ${_lab}/lab_seed_line.sh $<TARGET_FILE:netserve> $<TARGET_FILE:netload>)
set_tests_properties(
  "lab: wire-like seed line - an overdriven receiver's figure says what it means, TCP to another host discards"
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 90 RUN_SERIAL TRUE)

set_tests_properties(
  "lab: [lab] errors name file:line:col, addresses outside 198.18.0.0/15 are refused"
  "lab: MTU step 1500/1400 - UDP -m 1472 fails naming path MTU 1400, harness check warns of -m 1373, TCP MSS <= 1360"
  "lab: nothing netserve sends fragments - UDP_RR answers and a raw reverse stream over the path MTU refused at registration"
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
# A correctness check, not a rate: it compares netload with ss on the same connections at nearly the
# same instants (about 25 s). Serial all the same: ss in a loop beside the test is what it needs the
# CPU for, and the more often it runs the closer the instants.
set_tests_properties(
  "lab: TCP_INFO across a 50 Mbit/s circuit - retransmits, RTT above idle, netload = ss -tin within 10 %, both directions"
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 90 RUN_SERIAL TRUE)
# It compares the whole machine's namespaces and links before and after: nothing else may create any
# meanwhile (another lab test, the harness netns tests), so it runs alone.
set_tests_properties(
  "lab: up is idempotent, down leaves netns and links as before, also after a failed run"
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 RUN_SERIAL TRUE)
set_tests_properties(
  "lab: packet-rate limit read back within 5 % in both roles, received = kernel UDP count within 1 %"
  "lab: bit-rate limit read back within 5 % of rate x 1400/1442 in both roles"
  "lab: XDP engine reads the packet-rate limit within 1 % in both roles, = kernel UDP count, no livelock verdict"
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 RUN_SERIAL TRUE)

# The harness reading the limits back: configs/express-connect-lab.toml end to end (about 25 s).
if(TARGET harness)
  add_test(NAME "lab: harness runs configs/express-connect-lab.toml - steady-state pps and Mbit/s within 5 % of the circuit"
           COMMAND ${_lab}/lab_harness.sh $<TARGET_FILE:lab_cli> $<TARGET_FILE:harness> $<TARGET_FILE:netserve>
                   $<TARGET_FILE:netload> ${PROJECT_SOURCE_DIR}/configs/express-connect-lab.toml)
  set_tests_properties(
    "lab: harness runs configs/express-connect-lab.toml - steady-state pps and Mbit/s within 5 % of the circuit"
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 90 RUN_SERIAL TRUE)
  # The same plan as a user trims it, its tests' pps and rate removed: unpaced -m 1, sixteen processes on
  # two cores; every run ends with its figures (a late start marks a run skewed, it does not void it).
  add_test(NAME "lab: harness runs configs/express-connect-lab.toml unpaced (pps and rate removed) - every run summed, limits read back within 5 %"
           COMMAND ${_lab}/lab_harness.sh $<TARGET_FILE:lab_cli> $<TARGET_FILE:harness> $<TARGET_FILE:netserve>
                   $<TARGET_FILE:netload> ${PROJECT_SOURCE_DIR}/configs/express-connect-lab.toml unpaced)
  set_tests_properties(
    "lab: harness runs configs/express-connect-lab.toml unpaced (pps and rate removed) - every run summed, limits read back within 5 %"
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 90 RUN_SERIAL TRUE)
  # Results that last: the circuit's limit lowered by 30 % between two runs of one plan is flagged
  # (--fail-on-regression exits 4), back at the first limit it is not (about 30 s).
  add_test(NAME "lab: circuit limit lowered 30 % - the run is flagged, --fail-on-regression exits 4, back at the limit not flagged"
           COMMAND ${_lab}/lab_regression.sh ${_lab_bins} $<TARGET_FILE:harness>)
  set_tests_properties(
    "lab: circuit limit lowered 30 % - the run is flagged, --fail-on-regression exits 4, back at the limit not flagged"
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 RUN_SERIAL TRUE)
endif()

# Round trips across the circuit, and a latency probe beside the BPS load: its p99 under load must rise
# by about the shaper's 20 ms queue (about 25 s).
if(TARGET harness)
  add_test(NAME "lab: latency probe p99 under load 10 to 25 ms above idle (the shaper queue, 20 ms), UDP_RR and TCP_RR across the circuit"
           COMMAND ${_lab}/lab_latency.sh $<TARGET_FILE:lab_cli> $<TARGET_FILE:harness> $<TARGET_FILE:netserve>
                   $<TARGET_FILE:netload> ${PROJECT_SOURCE_DIR}/configs/express-connect-lab.toml)
  set_tests_properties(
    "lab: latency probe p99 under load 10 to 25 ms above idle (the shaper queue, 20 ms), UDP_RR and TCP_RR across the circuit"
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 RUN_SERIAL TRUE)
endif()

# The rate search against the circuit's packet-rate limit, both roles (about 3 min). Label speed: under
# ASan, eight paced senders on two cores fall more than 1 % behind in 1-s trials (measured: every
# trial sender-limited), and the search would measure the sanitiser.
if(TARGET harness)
  add_test(NAME "lab: harness rate search - NDR and PDR relevant lower bounds within 3 % of the circuit's 20000 pps, upper bounds within the goal width, both roles"
           COMMAND ${_lab}/lab_search.sh $<TARGET_FILE:lab_cli> $<TARGET_FILE:harness> $<TARGET_FILE:netserve>
                   $<TARGET_FILE:netload> ${PROJECT_SOURCE_DIR}/configs/express-connect-lab.toml)
  set_tests_properties(
    "lab: harness rate search - NDR and PDR relevant lower bounds within 3 % of the circuit's 20000 pps, upper bounds within the goal width, both roles"
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE LABELS speed)
endif()

# netload alone: `netload --search both` across the circuit's packet-rate limit from one instance (about
# 60 s: 1-s trials, 1-% width, 5-s duration sum). Label speed, as the harness's search: a sanitised sender
# falls behind its paced target and the search would measure the sanitiser.
add_test(NAME "lab: netload --search - NDR and PDR lower bounds and conditional throughput within 3 % of the circuit's 20000 pps"
         COMMAND ${_lab}/lab_netload_search.sh ${_lab_bins})
set_tests_properties(
  "lab: netload --search - NDR and PDR lower bounds and conditional throughput within 3 % of the circuit's 20000 pps"
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240 RUN_SERIAL TRUE LABELS speed)

# The ssh launcher across the circuit: sshd in the device namespace, the harness in instance 1's (about 8 s).
if(TARGET harness)
  add_test(NAME "lab: harness over ssh to an sshd in the device namespace, across the circuit - pps within 5 %"
           COMMAND ${_lab}/lab_ssh.sh $<TARGET_FILE:lab_cli> $<TARGET_FILE:harness> $<TARGET_FILE:netserve>
                   $<TARGET_FILE:netload>)
  set_tests_properties(
    "lab: harness over ssh to an sshd in the device namespace, across the circuit - pps within 5 %"
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60 RUN_SERIAL TRUE)
endif()

# The wire-like path (tests/lab/wirelike.sh): livelock verdicts, and the harness's PDR beside the kernel's
# own counters for one instance, failing only on a gross miss (about 1.5 min; two instances and the 10 %
# target are bench/run's). Its search runs at the speed of the machine: the asan preset leaves it out (label "speed"),
# its sanitised binaries would measure themselves.
if(TARGET harness)
  add_test(NAME "lab: wire-like path - livelock verdicts, harness PDR beside the kernel's best rate, 1 instance"
           COMMAND ${_lab}/lab_wirelike.sh --instances 1 $<TARGET_FILE:harness> $<TARGET_FILE:netserve> $<TARGET_FILE:netload>)
  set_tests_properties(
    "lab: wire-like path - livelock verdicts, harness PDR beside the kernel's best rate, 1 instance"
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE LABELS speed)
endif()

# netload alone on the wire-like path: `netload --search pdr` beside the kernel's own best lossless rate,
# failing only on a gross miss as the harness's test there does (about 1.5 min; label speed as that one).
add_test(NAME "lab: wire-like path - netload --search PDR beside the kernel's best rate"
         COMMAND ${_lab}/lab_wirelike_search.sh $<TARGET_FILE:netserve> $<TARGET_FILE:netload>)
set_tests_properties("lab: wire-like path - netload --search PDR beside the kernel's best rate"
                     PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 RUN_SERIAL TRUE LABELS speed)

# A limiter behind veth as ip(8) makes it (GSO buffers pass whole): netload's search finds its rate with no
# option because it sends datagram by datagram there (about 75 s). Serial: it measures a rate.
add_test(NAME "lab: a packet-rate limiter behind veth - netload --search pdr -- -m 1 within 3 %, datagram by datagram, said both ways"
         COMMAND ${_lab}/lab_gso_limiter.sh $<TARGET_FILE:netserve> $<TARGET_FILE:netload>)
set_tests_properties(
  "lab: a packet-rate limiter behind veth - netload --search pdr -- -m 1 within 3 %, datagram by datagram, said both ways"
  PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240 RUN_SERIAL TRUE)
