// A test-only `burnmark` holding just the campaign and repro subcommands, used by test_campaign
// until commands.def lists them (then the real binary is tested instead; see campaign.cmake).
#include <string_view>
#include <vector>

#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {
// Declared by commands.h once commands.def lists them.
int run_campaign(std::span<const std::string_view> args);
int run_repro(std::span<const std::string_view> args);
} // namespace burnmark::cli

int main(int argc, char** argv) {
  using namespace burnmark::cli;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("usage: burnmark campaign|repro ...");
  const std::span<const std::string_view> rest = std::span(args).subspan(1);
  if (args[0] == "campaign") return run_campaign(rest);
  if (args[0] == "repro") return run_repro(rest);
  return usage_error("this test binary only has the campaign and repro commands");
}
