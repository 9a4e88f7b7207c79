// `burnmark`: dispatches argv[1] to the subcommand table (commands.def) and prints usage.
#include <algorithm>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "burnmark/backends/process.h"

#include "burnmark/config/config.h"
#include "burnmark/driver/last_words.h"
#include "cli_common.h"
#include "commands.h"

namespace {

std::string usage() {
  using namespace burnmark::cli;
  std::string out = "usage: burnmark <command> [arguments]\n\ncommands:\n";
  std::size_t name_width = 0, args_width = 0;
  for (const Command& c : commands()) {
    name_width = std::max(name_width, c.name.size());
    args_width = std::max(args_width, c.arguments.size());
  }
  for (const Command& c : commands())
    fmt::format_to(std::back_inserter(out), "  {:<{}}  {:<{}}  {}\n", c.name, name_width,
                   c.arguments, args_width, c.summary);
  out += "\nFILE is a text program (first line \"# burnmark program\" or \"%0 = ...\") or a raw "
         "fuzzer\n"
         "input such as a crash-* artifact, decoded with the environment's generator knobs.\n"
         "\nexit status: 0 agreement (or success), 1 divergence, 2 usage or input error\n"
         "\nenvironment (read once at start):\n";
  out += burnmark::knobs_help();
  return out;
}

} // namespace

int main(int argc, char** argv) {
  burnmark::serve_backend_if_requested();
  // After serving: a child backend's death is its parent's outcome, not a line of its own.
  burnmark::install_last_words();
  using namespace burnmark::cli;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    fmt::print(stderr, "{}", usage());
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    fmt::print("{}", usage());
    return kExitAgree;
  }
  for (const Command& c : commands()) {
    if (c.name != args[0]) continue;
    // Every verb's --help is its table line, so no verb can take the flag for a file name.
    if (args.size() > 1 && (args[1] == "--help" || args[1] == "-h")) {
      fmt::print("usage: burnmark {} {}\n  {}\n", c.name, c.arguments, c.summary);
      return kExitAgree;
    }
    return c.run(std::span(args).subspan(1));
  }
  return usage_error(
      fmt::format("unknown command '{}' (run 'burnmark --help' for the list)", args[0]));
}
