#pragma once
// Tests run a child process to completion through the harness's own process code, on a private
// io_context, and get its outcome (or the exception the run raised).
#include "harness/process.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <exception>
#include <string>
#include <vector>

namespace harness::test {

inline process_outcome run_sync(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
  boost::asio::io_context io;
  process_outcome out;
  std::exception_ptr failure;
  boost::asio::co_spawn(io, run_command(argv, limit), [&](std::exception_ptr e, process_outcome o) {
    failure = e;
    out = std::move(o);
  });
  io.run();
  if (failure) std::rethrow_exception(failure);
  return out;
}

}  // namespace harness::test
