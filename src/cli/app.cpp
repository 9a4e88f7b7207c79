// The CLI11 pieces every `burnmark` command shares (see app.h).
#include "app.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "burnmark/config/config.h"
#include "commands.h"

namespace burnmark::cli {

namespace {

// The subcommand list's name column: "  campaign" and two spaces.
constexpr std::size_t kCommandColumn = 12;

const Command* command_of(const CLI::App* app) {
  if (app->get_parent() == nullptr) return nullptr;
  for (const Command& c : commands())
    if (c.name == app->get_name()) return &c;
  return nullptr;
}

} // namespace

std::string wrap(std::string_view text, std::size_t width, std::string_view first_indent,
                 std::string_view indent) {
  std::string out;
  std::size_t start = 0;
  bool first_line = true;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view paragraph = text.substr(start, end - start);
    std::string line(first_line ? first_indent : indent);
    std::size_t line_start = line.size();
    std::size_t pos = 0;
    while (pos < paragraph.size()) {
      if (paragraph[pos] == ' ') {
        ++pos;
        continue;
      }
      const std::size_t word_end = std::min(paragraph.find(' ', pos), paragraph.size());
      const std::string_view word = paragraph.substr(pos, word_end - pos);
      const bool empty = line.size() == line_start;
      if (!empty && line.size() + 1 + word.size() > width) {
        out += line + '\n';
        line = std::string(indent);
        line_start = line.size();
      }
      if (line.size() != line_start) line += ' ';
      line += word;
      pos = word_end;
    }
    out += line;
    first_line = false;
    if (end == text.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

HelpFormatter::HelpFormatter() {
  column_width(30);
  label("Usage", "usage");
  label("Positionals", "Arguments");
  label("SUBCOMMAND", "COMMAND");
}

std::string HelpFormatter::make_help(const CLI::App* app, std::string name,
                                     CLI::AppFormatMode mode) const {
  if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
  std::string out = make_usage(app, std::move(name));
  if (const std::string d = make_description(app); !d.empty()) out += "\n" + d;
  out += make_positionals(app);
  out += make_groups(app, mode);
  out += make_subcommands(app, mode);
  if (const std::string f = make_footer(app); !f.empty()) out += "\n" + f;
  return out;
}

std::string HelpFormatter::make_usage(const CLI::App* app, std::string name) const {
  std::string usage = CLI::Formatter::make_usage(app, std::move(name));
  const Command* c = command_of(app);
  if (c && !c->after_dashes.empty() && usage.ends_with('\n'))
    usage.insert(usage.size() - 1, fmt::format(" [-- {}...]", c->after_dashes));
  return usage;
}

std::string HelpFormatter::make_description(const CLI::App* app) const {
  const std::string d = app->get_description();
  return d.empty() ? std::string() : wrap(d, kHelpWidth) + "\n";
}

std::string HelpFormatter::make_option_opts(const CLI::Option* opt) const {
  // A positional's name (FILE, DIR) says what it is; CLI11 would add "TEXT REQUIRED".
  return opt->get_positional() ? std::string() : CLI::Formatter::make_option_opts(opt);
}

std::string HelpFormatter::make_option_desc(const CLI::Option* opt) const {
  // CLI11 indents each line after a '\n' to the description column.
  return wrap(opt->get_description(), kHelpWidth - get_column_width());
}

std::string HelpFormatter::make_subcommand(const CLI::App* sub) const {
  // The list shows each command's one-line summary; its own help has the paragraph.
  const Command* c = command_of(sub);
  const std::string summary = c ? std::string(c->summary) : sub->get_description();
  std::ostringstream out;
  CLI::detail::format_help(out, sub->get_name(), wrap(summary, kHelpWidth - kCommandColumn),
                           kCommandColumn);
  return out.str();
}

std::string examples_footer(std::string_view examples) {
  return "Examples:\n" + wrap(examples, kHelpWidth, "  ", "  ");
}

std::string environment_help() {
  std::string out = "Environment (read once at start; a bad value is an error naming the knob):\n";
  for (const KnobInfo& k : knob_table()) {
    const std::string def = k.default_text.empty() ? "\"\"" : std::string(k.default_text);
    std::string head = fmt::format("  {}  default {}", k.env, def);
    if (!k.range.empty()) head += fmt::format("  ({})", k.range);
    out += head + "\n" + wrap(k.help, kHelpWidth, "      ", "      ") + "\n";
  }
  return out;
}

CLI::Validator check_with(std::function<std::string(const std::string&)> error) {
  // No description: it would be appended to the option's type name in the help.
  return CLI::Validator([error = std::move(error)](std::string& value) { return error(value); },
                        "");
}

} // namespace burnmark::cli
