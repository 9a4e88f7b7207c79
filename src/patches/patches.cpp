// Parsing corpus/patches.txt and selecting the active patches (see burnmark/patches/patches.h).
#include "burnmark/patches/patches.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "burnmark/ir/input_file.h"

namespace burnmark {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back()))
    s.remove_suffix(1);
  return s;
}

// The next blank-separated word of `rest`, which loses it.
std::string_view next_word(std::string_view& rest) {
  rest = trim(rest);
  std::size_t end = 0;
  while (end < rest.size() && !is_blank(rest[end]))
    ++end;
  const std::string_view word = rest.substr(0, end);
  rest.remove_prefix(end);
  return word;
}

// A word as it may be echoed in an error: the file may be anything, so control and non-ASCII
// bytes become \xNN, cut short.
std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out +=
        c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c)) : fmt::format("\\x{:02x}", c);
  }
  if (text.size() > kMax) out += "...";
  return out;
}

// bugs.md ids and plugin names: lowercase letters, digits, '-' (and '_' for plugin names, as
// plugin.h allows).
bool is_name(std::string_view s, bool underscore) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (underscore && c == '_');
  });
}

std::string ids_of(const std::vector<Patch>& table) {
  std::vector<std::string_view> ids;
  for (const Patch& p : table)
    ids.push_back(p.id);
  return ids.empty() ? std::string("the table is empty") : fmt::format("{}", fmt::join(ids, ", "));
}

} // namespace

PatchTableResult parse_patch_table(std::string_view text, std::string_view source) {
  std::vector<Patch> out;
  int number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    const std::string_view raw = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++number;
    std::string_view rest = trim(raw);
    if (rest.empty() || rest.front() == '#') continue;
    const auto fail = [&](const std::string& what) {
      return PatchTableResult{fmt::format("{}:{}: {}", source, number, what)};
    };
    Patch p;
    p.line = number;
    const std::string_view id = next_word(rest);
    const std::string_view backend = next_word(rest);
    const std::string_view ops = next_word(rest);
    const std::string_view description = trim(rest);
    if (description.empty())
      return fail("expected 'ID BACKEND OPS DESCRIPTION' (e.g. 'eigen-sqrt-inf plugin:eigen sqrt "
                  "scalar std::sqrt for +inf'), got a line with fewer fields");
    if (!is_name(id, false))
      return fail(fmt::format("patch id '{}' is not a bugs.md id (lowercase letters, digits, '-')",
                              printable(id)));
    if (std::any_of(out.begin(), out.end(), [&](const Patch& q) { return q.id == id; }))
      return fail(fmt::format("patch id '{}' appears twice", id));
    constexpr std::string_view kPlugin = "plugin:";
    if (!backend.starts_with(kPlugin) || !is_name(backend.substr(kPlugin.size()), true))
      return fail(fmt::format(
          "backend '{}' is not plugin:NAME (only plugins take patches so far; NAME as the "
          "plugin's table names it, e.g. plugin:eigen)",
          printable(backend)));
    std::string_view op_list = ops;
    while (true) {
      const std::size_t comma = op_list.find(',');
      const std::string_view name = op_list.substr(0, comma);
      const std::optional<Op> op = op_from_name(name);
      if (!op)
        return fail(fmt::format("unknown op '{}' (an op name of ops.def, or a comma list of them)",
                                printable(name)));
      p.ops.push_back(*op);
      if (comma == std::string_view::npos) break;
      op_list.remove_prefix(comma + 1);
    }
    p.id = std::string(id);
    p.backend = std::string(backend);
    p.plugin = std::string(backend.substr(kPlugin.size()));
    p.description = std::string(description);
    out.push_back(std::move(p));
  }
  return PatchTableResult{std::move(out)};
}

PatchTableResult load_patch_table(const std::string& path) {
  std::string error;
  const std::optional<std::string> text = read_input_file(path, error);
  if (!text) return PatchTableResult{std::move(error)};
  return parse_patch_table(*text, path);
}

PatchTableResult select_patches(const std::vector<Patch>& table, std::string_view knob) {
  knob = trim(knob);
  if (knob == "none") return PatchTableResult{std::vector<Patch>{}};
  if (knob == "all") return PatchTableResult{table};
  std::vector<Patch> out;
  std::string_view rest = knob;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view id = trim(rest.substr(0, comma));
    const auto it =
        std::find_if(table.begin(), table.end(), [&](const Patch& p) { return p.id == id; });
    if (it == table.end())
      return PatchTableResult{fmt::format(
          "BURNMARK_PATCHES: unknown patch '{}' (valid: all, none, or a comma list of {})",
          printable(id), ids_of(table))};
    if (std::none_of(out.begin(), out.end(), [&](const Patch& p) { return p.id == id; }))
      out.push_back(*it);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return PatchTableResult{std::move(out)};
}

std::vector<PluginPatch> plugin_patches(const std::vector<Patch>& patches) {
  std::vector<PluginPatch> out;
  for (const Patch& p : patches)
    out.push_back(PluginPatch{p.plugin, p.id});
  return out;
}

std::variant<std::vector<PluginPatch>, std::string>
active_plugin_patches(std::string_view knob, const std::string& table_path) {
  if (trim(knob) == "none") return std::vector<PluginPatch>{};
  if (table_path.empty())
    return fmt::format("BURNMARK_PATCHES: '{}' needs the patch table, and none was found (a "
                       "checkout's corpus/patches.txt, or share/burnmark/patches.txt when "
                       "installed); set it to none",
                       printable(knob));
  const PatchTableResult table = load_patch_table(table_path);
  if (!table.ok()) return fmt::format("BURNMARK_PATCHES: {}", table.error());
  const PatchTableResult chosen = select_patches(table.patches(), knob);
  if (!chosen.ok()) return chosen.error();
  return plugin_patches(chosen.patches());
}

std::vector<std::string> plugin_names_in(std::string_view backends) {
  std::vector<std::string> out;
  while (!backends.empty()) {
    const std::size_t comma = backends.find(',');
    std::string_view entry = backends.substr(0, comma);
    backends = comma == std::string_view::npos ? std::string_view() : backends.substr(comma + 1);
    // child:ENTRY and child[VAR=v;...]:ENTRY load ENTRY in the child, with the same patches.
    if (entry.starts_with("child:") || entry.starts_with("child[")) {
      const std::size_t close = entry.starts_with("child[") ? entry.find(']') : 4;
      if (close == std::string_view::npos) continue;
      entry = entry.substr(close + 1);
      if (entry.starts_with(":")) entry.remove_prefix(1);
    }
    // A path: the loader's file name for NAME is burnmark_NAME.so or libburnmark_NAME.so.
    if (entry.find('/') != std::string_view::npos || entry.ends_with(".so")) {
      entry = entry.substr(entry.rfind('/') + 1);
      if (entry.ends_with(".so")) entry.remove_suffix(3);
      for (const std::string_view prefix : {"libburnmark_", "burnmark_"})
        if (entry.starts_with(prefix)) {
          entry.remove_prefix(prefix.size());
          break;
        }
    }
    if (!entry.empty()) out.emplace_back(entry);
  }
  return out;
}

std::vector<bool> patched_ops(const std::vector<Patch>& table, std::string_view backends) {
  const std::vector<std::string> plugins = plugin_names_in(backends);
  std::vector<bool> ops(kOpCount, false);
  for (const Patch& patch : table)
    if (std::find(plugins.begin(), plugins.end(), patch.plugin) != plugins.end())
      for (const Op op : patch.ops)
        ops[static_cast<std::size_t>(op)] = true;
  return ops;
}

} // namespace burnmark
