#include "netserve/server/served_port.hpp"

namespace nb::serve {

bool served_port::add(std::shared_ptr<served_test> test, const std::string& client) {
  const std::string cookie = test->cookie();
  if (!tests.emplace(cookie, std::move(test)).second) return false;
  ++tests_of_client[client];
  return true;
}

void served_port::remove(const served_test& test, const std::string& client) noexcept {
  auto it = tests.find(test.cookie());
  if (it == tests.end() || it->second.get() != &test) return;
  tests.erase(it);
  if (auto c = tests_of_client.find(client); c != tests_of_client.end() && --c->second == 0) tests_of_client.erase(c);
}

}  // namespace nb::serve
