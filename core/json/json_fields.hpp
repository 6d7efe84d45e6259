#pragma once
// Strict reading of a JSON object: each field once with its type; done() rejects fields nobody read.
#include <fmt/format.h>
#include <boost/describe/members.hpp>
#include <boost/mp11/algorithm.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace nb {

template <class T>
inline constexpr bool is_std_optional = false;
template <class T>
inline constexpr bool is_std_optional<std::optional<T>> = true;

// How a field's value becomes its member: typed_values takes JSON's own types exactly (netbench's messages).
// Another program's JSON may need a looser reading: a Values type reads itself the types T whose
// reads<T> is true, with read<T>(value, fields, name) (iperf3's cJSON numbers, core/wire/iperf3_wire.cpp).
struct typed_values {
  template <class T>
  static constexpr bool reads = false;
};

template <class Error, class Values = typed_values>
class json_fields {
 public:
  json_fields(const nlohmann::json& j, std::string context) : j_(j), context_(std::move(context)) {
    if (!j_.is_object()) fail("", "must be an object");
  }

  template <class T>
  T get(const char* name) {
    auto it = j_.find(name);
    if (it == j_.end()) fail(name, "is missing");
    seen_.insert(name);
    return convert<T>(*it, name);
  }

  template <class T>
  T get_or(const char* name, T fallback) {
    if (!j_.contains(name)) return fallback;
    return get<T>(name);
  }

  // Fields another reader takes from the same object: done() accepts them unread.
  void known(std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (j_.contains(n)) seen_.insert(n);
  }

  void done() const {
    if (const auto rest = unread(); !rest.empty()) fail(rest.front().c_str(), "is not a known field");
  }

  // The fields nobody read, in the object's order: what done() refuses, or what a reader of another
  // program's messages lists.
  std::vector<std::string> unread() const {
    std::vector<std::string> out;
    for (const auto& [key, value] : j_.items())
      if (!seen_.count(key)) out.push_back(key);
    return out;
  }

  template <class S>
  void read_described(S& s) {
    read_members(s, false);
  }

  // The same for a message whose fields are all optional: a member whose field is absent keeps its value.
  template <class S>
  void read_present(S& s) {
    read_members(s, true);
  }

  template <class S>
  S read_described() {
    S s;
    read_described(s);
    return s;
  }

  template <class S>
  static S read_object(const nlohmann::json& j, std::string context) {
    json_fields f(j, std::move(context));
    S s = f.read_described<S>();
    f.done();
    return s;
  }

  const std::string& context() const noexcept { return context_; }

  [[noreturn]] void fail(const char* name, const char* what) const {
    if (*name) throw Error(fmt::format("{}: field '{}' {}", context_, name, what));
    throw Error(fmt::format("{} {}", context_, what));
  }

 private:
  template <class S>
  void read_members(S& s, bool only_present) {
    boost::mp11::mp_for_each<boost::describe::describe_members<S, boost::describe::mod_public>>([&](auto m) {
      using T = std::remove_cvref_t<decltype(s.*m.pointer)>;
      if (!only_present || j_.contains(m.name)) s.*m.pointer = get<T>(m.name);
    });
  }

  template <class T>
  T convert(const nlohmann::json& v, const char* name) const {
    if constexpr (Values::template reads<T>) {
      return Values::template read<T>(v, *this, name);
    } else if constexpr (std::is_same_v<T, nlohmann::json>) {
      return v;
    } else if constexpr (is_std_optional<T>) {  // null: absent
      if (v.is_null()) return std::nullopt;
      return convert<typename T::value_type>(v, name);
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(name, "must be a boolean");
      return v.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(name, "must be a string");
      return v.get<std::string>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) fail(name, "must be a number");
      return v.get<T>();
    } else if constexpr (std::is_unsigned_v<T>) {
      if (!v.is_number_unsigned()) fail(name, "must be a non-negative integer");
      auto u = v.get<std::uint64_t>();
      if (u > std::numeric_limits<T>::max()) fail(name, "is out of range");
      return static_cast<T>(u);
    } else if constexpr (std::is_integral_v<T>) {
      if (!v.is_number_integer()) fail(name, "must be an integer");
      if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        fail(name, "is out of range");
      auto s = v.get<std::int64_t>();
      if (s < std::numeric_limits<T>::min() || s > std::numeric_limits<T>::max()) fail(name, "is out of range");
      return static_cast<T>(s);
    } else {
      return convert_other<T>(v, name);
    }
  }

  template <class T>
  T convert_other(const nlohmann::json& v, const char* name) const {  // std::vector<U>
    if (!v.is_array()) fail(name, "must be an array");
    T out;
    for (const auto& e : v) out.push_back(convert<typename T::value_type>(e, name));
    return out;
  }

  const nlohmann::json& j_;
  std::string context_;
  std::set<std::string> seen_;
};

// A BOOST_DESCRIBE_STRUCT's members as a JSON object, each named as its member.
template <class S>
nlohmann::json write_described(const S& s) {
  nlohmann::json j = nlohmann::json::object();
  boost::mp11::mp_for_each<boost::describe::describe_members<S, boost::describe::mod_public>>([&](auto m) {
    const auto& v = s.*m.pointer;
    if constexpr (is_std_optional<std::remove_cvref_t<decltype(v)>>)
      j[m.name] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    else j[m.name] = v;
  });
  return j;
}

}  // namespace nb
