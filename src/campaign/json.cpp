// JSON subset for the ledger (see json.h): recursive descent over the whole text, rejecting
// anything trailing, so a truncated ledger is an error rather than a silently shorter one.
#include "json.h"

#include <cstdlib>

#include <fmt/format.h>

namespace burnmark::json {

const Value* Value::get(const std::string& key) const {
  const Object* o = std::get_if<Object>(&v);
  if (o == nullptr) return nullptr;
  const auto it = o->find(key);
  return it == o->end() ? nullptr : &it->second;
}

std::string Value::string_or(const std::string& key, std::string fallback) const {
  const Value* x = get(key);
  const std::string* s = x ? std::get_if<std::string>(&x->v) : nullptr;
  return s ? *s : fallback;
}

double Value::number_or(const std::string& key, double fallback) const {
  const Value* x = get(key);
  const double* d = x ? std::get_if<double>(&x->v) : nullptr;
  return d ? *d : fallback;
}

std::vector<std::string> Value::strings(const std::string& key) const {
  std::vector<std::string> out;
  const Value* x = get(key);
  const Array* a = x ? std::get_if<Array>(&x->v) : nullptr;
  if (a == nullptr) return out;
  for (const Value& e : *a)
    if (const std::string* s = std::get_if<std::string>(&e.v)) out.push_back(*s);
  return out;
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      else
        out += c;
    }
  }
  return out + "\"";
}

namespace {

class Parser {
public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::optional<Value> document(std::string& error) {
    std::optional<Value> v = value();
    skip();
    if (v && i_ != s_.size()) fail("trailing characters");
    if (!error_.empty()) {
      error = error_;
      return std::nullopt;
    }
    return v;
  }

private:
  std::string_view s_;
  std::size_t i_ = 0;
  std::string error_;
  int depth_ = 0;

  void fail(std::string_view why) {
    if (error_.empty()) error_ = fmt::format("offset {}: {}", i_, why);
  }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  std::optional<std::string> string() {
    if (!eat('"')) {
      fail("expected a string");
      return std::nullopt;
    }
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) break;
      c = s_[i_++];
      switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        // The writer only escapes control characters this way, so one byte is enough.
        if (i_ + 4 > s_.size()) break;
        const unsigned long code = std::strtoul(std::string(s_.substr(i_, 4)).c_str(), nullptr, 16);
        i_ += 4;
        if (code > 0x7f) {
          fail("\\u escape above 0x7f is not supported");
          return std::nullopt;
        }
        out += static_cast<char>(code);
        break;
      }
      default: out += c; // \" \\ \/
      }
    }
    if (i_ >= s_.size()) {
      fail("unterminated string");
      return std::nullopt;
    }
    ++i_;
    return out;
  }

  std::optional<Value> value() {
    if (++depth_ > 64) {
      fail("nested too deeply");
      return std::nullopt;
    }
    std::optional<Value> out = value_inner();
    --depth_;
    return out;
  }

  std::optional<Value> value_inner() {
    skip();
    if (i_ >= s_.size()) {
      fail("unexpected end");
      return std::nullopt;
    }
    const char c = s_[i_];
    if (c == '"') {
      std::optional<std::string> s = string();
      if (!s) return std::nullopt;
      return Value{std::move(*s)};
    }
    if (c == '{') {
      ++i_;
      Object o;
      if (eat('}')) return Value{std::move(o)};
      do {
        std::optional<std::string> k = string();
        if (!k || !eat(':')) {
          fail("expected \"key\":");
          return std::nullopt;
        }
        std::optional<Value> v = value();
        if (!v) return std::nullopt;
        o[*k] = std::move(*v);
      } while (eat(','));
      if (!eat('}')) {
        fail("expected , or }");
        return std::nullopt;
      }
      return Value{std::move(o)};
    }
    if (c == '[') {
      ++i_;
      Array a;
      if (eat(']')) return Value{std::move(a)};
      do {
        std::optional<Value> v = value();
        if (!v) return std::nullopt;
        a.push_back(std::move(*v));
      } while (eat(','));
      if (!eat(']')) {
        fail("expected , or ]");
        return std::nullopt;
      }
      return Value{std::move(a)};
    }
    if (literal("true")) return Value{true};
    if (literal("false")) return Value{false};
    if (literal("null")) return Value{nullptr};
    const char* begin = s_.data() + i_;
    char* end = nullptr;
    const std::string tail(begin, std::min<std::size_t>(s_.size() - i_, 64));
    const double d = std::strtod(tail.c_str(), &end);
    if (end == tail.c_str()) {
      fail("unexpected character");
      return std::nullopt;
    }
    i_ += static_cast<std::size_t>(end - tail.c_str());
    return Value{d};
  }
};

} // namespace

std::optional<Value> parse(std::string_view text, std::string& error) {
  return Parser(text).document(error);
}

} // namespace burnmark::json
