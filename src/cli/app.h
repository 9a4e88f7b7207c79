// The CLI11 pieces every `burnmark` command shares: a help formatter that keeps every line within
// kHelpWidth columns (CLI11 2.1 does not wrap), the environment knobs' help made from the knob
// table, and checks whose message CLI11 prints after the option's name.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace burnmark::cli {

inline constexpr std::size_t kHelpWidth = 100;

// `text` wrapped at word boundaries so that no line (indent included) exceeds `width`; the first
// line starts with `first_indent`, the others with `indent`. A '\n' in `text` starts a new line.
// A single word longer than the room is kept whole on its own line.
std::string wrap(std::string_view text, std::size_t width, std::string_view first_indent = "",
                 std::string_view indent = "");

// Usage line first ("usage: burnmark show [OPTIONS] FILE"), then the wrapped description, the
// positionals and options with their descriptions wrapped in a right column, the subcommands,
// and the footer. A command that takes arguments after `--` shows them in its usage line.
class HelpFormatter : public CLI::Formatter {
public:
  HelpFormatter();
  std::string make_help(const CLI::App* app, std::string name,
                        CLI::AppFormatMode mode) const override;
  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_option_opts(const CLI::Option* opt) const override;
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
};

// "Examples:" and the command lines, indented, for a subcommand's footer.
std::string examples_footer(std::string_view examples);

// The environment knobs (knobs.def), each as "NAME  default D  range" and its help wrapped below.
std::string environment_help();

// A check for add_option(...)->check(): `error(value)` is "" for a valid value, else what is
// wrong ("unknown dtype 'x' (valid: ...)"); a parse error then reads "--dtype: unknown ...".
CLI::Validator check_with(std::function<std::string(const std::string&)> error);

} // namespace burnmark::cli
