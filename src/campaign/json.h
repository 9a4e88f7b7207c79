// The small JSON subset the ledger needs: a value tree, a writer for strings, and a strict
// parser. Internal to burnmark_campaign; the ledger's schema lives in ledger.cpp.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace burnmark::json {

struct Value;
using Array = std::vector<Value>;
using Object = std::map<std::string, Value>;

struct Value {
  // Numbers are doubles: the ledger's counts stay far below 2^53.
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v = nullptr;

  const Value* get(const std::string& key) const; // nullptr unless an object holding key
  std::string string_or(const std::string& key, std::string fallback = "") const;
  double number_or(const std::string& key, double fallback = 0) const;
  std::vector<std::string> strings(const std::string& key) const; // non-strings skipped
};

// A JSON string literal, quotes included; control characters and non-ASCII bytes below 0x20
// are escaped, UTF-8 passes through.
std::string quote(std::string_view text);

// nullopt on any syntax error, with `error` saying where.
std::optional<Value> parse(std::string_view text, std::string& error);

} // namespace burnmark::json
