// `burnmark`: the command line, parsed by CLI11. Each command of commands.def becomes a
// subcommand whose options its cmd_<name>.cpp declares; this file adds the top-level flags
// (--help, --help-env, --version), turns every parse error into one "burnmark: ..." line and
// exit status 2, and runs the command that parsed.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "app.h"
#include "burnmark/backends/builtin.h"
#include "burnmark/backends/process.h"
#include "burnmark/driver/last_words.h"
#include "cli_common.h"
#include "commands.h"

#ifndef BURNMARK_VERSION
#error "BURNMARK_VERSION is defined by src/cli/CMakeLists.txt from project(... VERSION ...)"
#endif

namespace {

using namespace burnmark::cli;

constexpr std::string_view kDescription =
    "BurnMark runs random tensor programs on LibTorch and on an independent reference and "
    "compares values and gradients. The fuzz targets (fuzz_autograd, fuzz_tensor_ops) find "
    "divergences; these commands replay, minimise, triage and reproduce them, and run campaigns. "
    "FILE is a text program or a raw fuzzer input such as a crash-* artifact. Exit status: 0 "
    "agreement (or success), 1 divergence, 2 usage or input error. The environment knobs "
    "(BACKENDS, MODE, MAX_LEAVES, BURNMARK_TOLERANCE, ...) are listed by `burnmark --help-env`.";

std::string version_line() {
  return fmt::format("burnmark {} (built against LibTorch {})", BURNMARK_VERSION,
                     burnmark::libtorch_release());
}

} // namespace

int main(int argc, char** argv) {
  burnmark::quiet_libtorch_logs();
  burnmark::serve_backend_if_requested();
  // After serving: a child backend's death is its parent's outcome, not a line of its own.
  burnmark::install_last_words();

  CLI::App app(std::string(kDescription), "burnmark");
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("-h,--help", "print this help and exit");
  app.set_version_flag("--version", version_line(), "print BurnMark's version and LibTorch's");
  bool help_env = false;
  app.add_flag("--help-env", help_env, "print the environment knobs and exit");
  app.footer(
      examples_footer("burnmark run crash-0123abcd\n"
                      "BACKENDS=ref,libtorch-jit burnmark minimize crash-0123abcd > min.txt\n"
                      "burnmark repro --help"));
  std::map<const CLI::App*, const Command*> by_app;
  std::map<std::string_view, Action> actions;
  for (const Command& c : commands()) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.description));
    sub->group("Commands");
    sub->set_help_flag("-h,--help", "print this help and exit");
    sub->footer(examples_footer(c.examples));
    actions[c.name] = c.define(*sub);
    by_app[sub] = &c;
  }

  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    fmt::print(stderr, "{}", app.help());
    return kExitUsage;
  }
  if (args[0] == "help") { // kept from the hand-written parser
    fmt::print("{}", app.help());
    return kExitAgree;
  }
  const auto named = std::find_if(commands().begin(), commands().end(),
                                  [&](const Command& c) { return c.name == args[0]; });
  if (!args[0].starts_with("-") && named == commands().end())
    return usage_error(
        fmt::format("unknown command '{}' (run 'burnmark --help' for the list)", args[0]));

  // A command that takes arguments after `--` (campaign: libFuzzer's flags) gets them as they
  // are, never parsed as BurnMark's options. For the others CLI11 reads `--` as the end of the
  // options, so that a FILE may start with '-'.
  auto dashes = args.end();
  if (named != commands().end() && !named->after_dashes.empty())
    dashes = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> after_dashes(dashes == args.end() ? dashes : dashes + 1,
                                              args.end());
  const int parsed_argc = 1 + static_cast<int>(dashes - args.begin());
  const auto verb = [&]() -> const Command* {
    const std::vector<CLI::App*> chosen = app.get_subcommands();
    return chosen.empty() ? nullptr : by_app.at(chosen.front());
  };
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForHelp&) {
    fmt::print("{}", app.help());
    return kExitAgree;
  } catch (const CLI::CallForVersion& e) {
    fmt::print("{}\n", e.what());
    return kExitAgree;
  } catch (const CLI::ParseError& e) {
    const Command* c = verb();
    return usage_error(fmt::format("{}{} (run 'burnmark {}--help')",
                                   c ? fmt::format("{}: ", c->name) : "", e.what(),
                                   c ? fmt::format("{} ", c->name) : ""));
  }
  if (help_env) {
    fmt::print("{}", environment_help());
    return kExitAgree;
  }
  const Command* c = verb();
  if (!c) {
    fmt::print(stderr, "{}", app.help());
    return kExitUsage;
  }
  return actions.at(c->name)(after_dashes);
}
