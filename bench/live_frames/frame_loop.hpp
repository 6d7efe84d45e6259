#pragma once
// The frame loop (loop.bpf.c): the reference load on a kernel that refuses BPF_PROG_RUN live frames.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

struct loop_options {
  std::string bounce, fanout;  // the two ends of the loop's veth pair (seeds leave by `bounce`)
  std::string out;             // where the copies go
  std::uint32_t copies = 4;    // per round
  std::uint32_t seeds = 128;   // frames in the loop: below a veth ring, so the loop itself never overflows
  double seconds = 5;
  bool write_seq = false;
};

// Runs the loop for `seconds` (or until `stop` is set) and leaves nothing attached; returns the time run.
double run_frame_loop(const loop_options& o, const std::vector<unsigned char>& frame, const std::atomic<bool>& stop);
