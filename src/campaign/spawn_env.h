// What the campaign's fuzzer processes are started with (campaign.cpp's workers, merge.cpp's
// corpus merge): the parent's environment with a few variables set, as posix_spawn takes it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace burnmark::campaign_detail {

using EnvOverrides = std::vector<std::pair<std::string, std::string>>;

// The parent's environment, each variable named in `overrides` replaced by its value there.
std::vector<std::string> environment_with(const EnvOverrides& overrides);

// Pointers to the strings of `v` and a final nullptr (argv / envp); valid while `v` lives.
std::vector<char*> c_strings(std::vector<std::string>& v);

} // namespace burnmark::campaign_detail
