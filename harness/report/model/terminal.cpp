#include "harness/report/model/terminal.hpp"

#include "core/base/text.hpp"

namespace harness {

namespace {

void escape(std::string& s) { s = nb::printable(s); }

void escape(instance_record& i) {
  for (std::string* s : {&i.name, &i.client, &i.server, &i.client_address, &i.server_address, &i.category, &i.error})
    escape(*s);
  for (auto& p : i.problems) escape(p);
}

}  // namespace

run_summary for_terminal(run_summary s) {
  for (std::string* f : {&s.run.id, &s.run.test, &s.run.role, &s.run.error, &s.steady_note, &s.limit_instance})
    escape(*f);
  for (auto& i : s.run.instances) escape(i);
  if (s.run.probe) escape(*s.run.probe);
  for (auto& f : s.failures) escape(f);
  for (auto& m : s.target_misses) escape(m);
  for (auto& l : s.late) escape(l.instance);
  if (s.limit) {
    escape(s.limit->limit);
    escape(s.limit->text);
  }
  if (s.probe) escape(s.probe->error);
  return s;
}

nlohmann::json for_terminal(nlohmann::json j) {
  // Iterative: this need not rely on the depth bound applied on read.
  std::vector<nlohmann::json*> todo{&j};
  while (!todo.empty()) {
    nlohmann::json* v = todo.back();
    todo.pop_back();
    if (v->is_string()) *v = nb::printable(v->get_ref<const std::string&>());
    else if (v->is_structured())
      for (auto& e : *v) todo.push_back(&e);
  }
  return j;
}

}  // namespace harness
