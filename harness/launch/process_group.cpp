#include "harness/launch/process_group.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

namespace harness {

namespace asio = boost::asio;

process_group::process_group(asio::io_context& io, std::chrono::milliseconds kill_after,
                             std::function<void()> before_kill)
    : escalate_(io), kill_after_(kill_after), before_kill_(std::move(before_kill)) {}

process_group::membership::membership(process_group& g, nb::child_process& p, std::function<void()> on_leave)
    : group_(g), p_(&p), on_leave_(std::move(on_leave)) {
  group_.join(p);
}

process_group::membership::~membership() {
  group_.leave(*p_);
  if (on_leave_) on_leave_();
}

void process_group::leave(nb::child_process& p) {
  members_.erase(&p);
  if (stopping_ && members_.empty()) escalate_.cancel();  // nothing left to kill
}

asio::awaitable<nb::process_outcome> process_group::run(const std::vector<std::string>& argv,
                                                        std::chrono::milliseconds limit, const std::string* input) {
  using namespace asio::experimental::awaitable_operators;
  nb::child_process p(escalate_.get_executor(), argv, input != nullptr);
  membership m(*this, p);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  if (!input) co_return co_await p.finish(deadline);
  co_return co_await (p.feed_stdin(*input) && p.finish(deadline));
}

void process_group::stop(const std::function<bool(nb::child_process*)>& spare) {
  stopping_ = true;
  for (nb::child_process* c : members_)
    if (!spare || !spare(c)) c->request_stop();
  if (members_.empty()) return;
  // A stopped or wedged process ignores SIGTERM: it must not hold the command for its deadline.
  escalate_.expires_after(kill_after_);
  escalate_.async_wait([this](boost::system::error_code ec) {
    if (!ec) kill();
  });
}

void process_group::kill() {
  if (killed_) return;
  killed_ = true;
  escalate_.cancel();
  if (before_kill_) before_kill_();
  for (nb::child_process* c : members_) c->kill();
}

}  // namespace harness
