// The environment and argument vectors of the campaign's child processes (spawn_env.h).
#include "spawn_env.h"

#include <algorithm>
#include <string_view>

extern char** environ;

namespace burnmark::campaign_detail {

std::vector<std::string> environment_with(const EnvOverrides& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    const bool overridden = std::any_of(overrides.begin(), overrides.end(), [&](const auto& o) {
      return kv.starts_with(o.first + "=");
    });
    if (!overridden) env.emplace_back(kv);
  }
  for (const auto& [k, v] : overrides)
    env.push_back(k + "=" + v);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v)
    out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

} // namespace burnmark::campaign_detail
