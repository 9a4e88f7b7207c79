// Reads the knobs of knobs.def from the environment. Defaults go through the same parser as
// the environment, so a typo in the table fails the tests rather than shipping a bad default.
#include "burnmark/config/config.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "burnmark/driver/driver.h"
#include "burnmark/patches/patches.h"

namespace burnmark {

namespace {

constexpr std::string_view kModeChoices = "panic, continuous";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

using Error = std::optional<std::string>;

// A value as it may be echoed in a one-line error: control and non-ASCII bytes as \xNN, and
// cut short, so a knob holding binary junk cannot garble the terminal or the line.
std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 80;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > kMax) out += "...";
  return out;
}

Error parse(std::string_view env, std::string_view text, int& out, double lo, double hi) {
  const auto range = fmt::format("valid: {}..{}", lo, hi);
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    return fmt::format("{}: '{}' is not an integer ({})", env, printable(text), range);
  if (static_cast<double>(v) < lo || static_cast<double>(v) > hi)
    return fmt::format("{}: '{}' out of range ({})", env, printable(text), range);
  out = static_cast<int>(v);
  return std::nullopt;
}

Error parse(std::string_view env, std::string_view text, double& out, double lo, double hi) {
  const auto range = fmt::format("valid: {}..{}", lo, hi);
  const std::string copy(text); // strtod needs a terminator
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || errno == ERANGE || std::isnan(v))
    return fmt::format("{}: '{}' is not a number ({})", env, printable(text), range);
  if (v < lo || v > hi)
    return fmt::format("{}: '{}' out of range ({})", env, printable(text), range);
  out = v;
  return std::nullopt;
}

Error parse(std::string_view, std::string_view text, std::string& out, double, double) {
  out = std::string(text);
  return std::nullopt;
}

Error parse(std::string_view env, std::string_view text, std::vector<FloatDType>& out, double,
            double) {
  out.clear();
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view name = trim(text.substr(0, comma));
    const auto dtype = float_dtype_from_name(name);
    if (!dtype)
      return fmt::format("{}: unknown dtype '{}' (valid: comma list of f32, bf16, f16, f64)", env,
                         printable(name));
    out.push_back(*dtype);
    if (comma == std::string_view::npos) return std::nullopt;
    text.remove_prefix(comma + 1);
  }
}

// auto, all, or a comma list of ops.def names (duplicates ignored).
Error parse(std::string_view env, std::string_view text, OpSelection& out, double, double) {
  out = OpSelection{};
  if (text == "auto") return std::nullopt;
  if (text == "all") {
    out.kind = OpSelection::Kind::All;
    return std::nullopt;
  }
  out.kind = OpSelection::Kind::List;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view name = trim(text.substr(0, comma));
    const std::optional<Op> op = op_from_name(name);
    if (!op)
      return fmt::format("{}: unknown op '{}' (valid: auto, all, or a comma list of the op names "
                         "of programs, e.g. add,mul,exp)",
                         env, name);
    if (std::find(out.ops.begin(), out.ops.end(), *op) == out.ops.end()) out.ops.push_back(*op);
    if (comma == std::string_view::npos) return std::nullopt;
    text.remove_prefix(comma + 1);
  }
}

Error parse(std::string_view env, std::string_view text, HarnessMode& out, double, double) {
  if (text == "panic") {
    out = HarnessMode::Panic;
  } else if (text == "continuous") {
    out = HarnessMode::Continuous;
  } else {
    return fmt::format("{}: unknown mode '{}' (valid: {})", env, printable(text), kModeChoices);
  }
  return std::nullopt;
}

// Constraints between knobs, which the per-knob ranges cannot express.
Error cross_check(const Config& c) {
  if (c.min_dim > c.max_dim)
    return fmt::format(
        "FUZZ_MIN_DIM: {} exceeds FUZZ_MAX_DIM {} (valid: FUZZ_MIN_DIM <= FUZZ_MAX_DIM)", c.min_dim,
        c.max_dim);
  if (c.mutator != "structure" && c.mutator != "bytes" && c.mutator != "mixed")
    return fmt::format("BURNMARK_MUTATOR: unknown mutator '{}' (valid: structure, bytes, mixed)",
                       printable(c.mutator));
  // A patch id is checked against the table now, so a typo stops every entry point at once.
  if (auto active = active_plugin_patches(c.patches, default_patches_path());
      std::holds_alternative<std::string>(active))
    return std::get<std::string>(active);
  // A list named but absent would silently skip nothing: every known bug would stop a run again.
  if (!c.known_bugs.empty()) {
    std::error_code ec;
    if (!std::filesystem::exists(c.known_bugs, ec))
      return fmt::format("BURNMARK_KNOWN_BUGS: no such file: {} (unset it for the default list, "
                         "or set it empty for none)",
                         printable(c.known_bugs));
  }
  return std::nullopt;
}

// The directory of the running binary, from /proc/self/exe; empty when it cannot be read.
std::filesystem::path binary_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : exe.parent_path();
}

// Numeric knobs show their range; a Mode shows its choices; Text has none.
constexpr std::string_view range_for(std::string_view type, std::string_view numeric_range) {
  if (type == "Mode") return "panic|continuous";
  if (type == "Text") return {};
  if (type == "DTypes") return "f32,bf16,f16,f64";
  if (type == "Ops") return "auto|all|op,op,...";
  return numeric_range;
}

} // namespace

std::span<const KnobInfo> knob_table() {
  static const KnobInfo table[] = {
#define BURNMARK_KNOB(field, env, type, def, lo, hi, help)                                         \
  {env, def, range_for(#type, #lo ".." #hi), help},
#include "burnmark/config/knobs.def"
#undef BURNMARK_KNOB
  };
  return table;
}

ConfigResult load_config(const EnvLookup& lookup) {
  Config c;
#define BURNMARK_KNOB(field, env, type, def, lo, hi, help)                                         \
  {                                                                                                \
    std::optional<std::string> value = lookup(env);                                                \
    std::string_view text = value ? trim(*value) : std::string_view();                             \
    /* Unset takes the default. Set but empty is "off" for a knob whose help promises it  */       \
    /* (BURNMARK_KNOWN_BUGS=); for any other it is an error, not a silent default. */              \
    const bool empty_is_off =                                                                      \
        std::string_view(help).find("empty = off") != std::string_view::npos;                      \
    if (value && text.empty() && !empty_is_off)                                                    \
      return ConfigResult{                                                                         \
          fmt::format("{}: set but empty (unset it for the default '{}')", env, def)};             \
    if (!value) text = def;                                                                        \
    if (Error e = parse(env, text, c.field, lo, hi)) return ConfigResult{std::move(*e)};           \
  }
#include "burnmark/config/knobs.def"
#undef BURNMARK_KNOB
  if (c.known_bugs == "auto") c.known_bugs = default_known_bugs_path();
  if (Error e = cross_check(c)) return ConfigResult{std::move(*e)};
  return ConfigResult{std::move(c)};
}

namespace {
bool backends_name_any(std::string_view backends, std::initializer_list<std::string_view> names) {
  while (!backends.empty()) {
    const std::size_t comma = backends.find(',');
    const std::string_view entry = backends.substr(0, comma);
    for (std::string_view n : names)
      if (entry == n) return true;
    backends = comma == std::string_view::npos ? std::string_view() : backends.substr(comma + 1);
  }
  return false;
}
} // namespace

bool backends_have_python(std::string_view backends) {
  return backends_name_any(backends, {"torch-eager-py", "torch-compile", "jax"});
}

bool backends_compile(std::string_view backends) {
  return backends_name_any(backends, {"torch-compile", "jax"});
}

namespace {
// A data file of corpus/ (known_bugs.txt, patches.txt): beside the binary, else installed,
// else the checkout's; empty when none exists.
std::string default_data_path(std::string_view name) {
  std::error_code ec;
  const std::filesystem::path dir = binary_dir();
  if (!dir.empty()) {
    const std::filesystem::path beside = dir / name;
    if (std::filesystem::is_regular_file(beside, ec))
      return std::filesystem::weakly_canonical(beside, ec).string();
    const std::filesystem::path installed = dir / ".." / "share" / "burnmark" / name;
    if (std::filesystem::is_regular_file(installed, ec))
      return std::filesystem::weakly_canonical(installed, ec).string();
  }
#ifdef BURNMARK_SOURCE_DIR
  // A build tree: its binaries are not installed, the list is the checkout's.
  const std::filesystem::path source = std::filesystem::path(BURNMARK_SOURCE_DIR) / "corpus" / name;
  if (std::filesystem::is_regular_file(source, ec)) return source.string();
#endif
  return {};
}
} // namespace

std::string default_known_bugs_path() {
  return default_data_path("known_bugs.txt");
}

std::string default_patches_path() {
  return default_data_path("patches.txt");
}

std::vector<PluginPatch> active_plugin_patches_or_exit(const Config& config) {
  auto active = active_plugin_patches(config.patches, default_patches_path());
  if (const auto* error = std::get_if<std::string>(&active)) {
    std::fprintf(stderr, "burnmark: %s\n", error->c_str());
    std::exit(2);
  }
  return std::get<std::vector<PluginPatch>>(std::move(active));
}

ConfigResult load_config_from_environment() {
  return load_config([](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

Config default_config() {
  ConfigResult r = load_config([](std::string_view) { return std::nullopt; });
  return r.config(); // the defaults are valid by construction (tested)
}

Config config_or_exit() {
  ConfigResult r = load_config_from_environment();
  if (!r.ok()) {
    std::fprintf(stderr, "burnmark: %s\n", r.error().c_str());
    std::exit(2);
  }
  return r.config();
}

GeneratorOptions generator_options(const Config& c) {
  GeneratorOptions g;
  g.max_leaves = c.max_leaves;
  g.min_ops = c.min_ops;
  g.min_dim = c.min_dim;
  g.max_dim = c.max_dim;
  g.max_elements = c.max_elements;
  g.special_rate = c.special_rate;
  g.edge_rate = c.edge_rate;
  g.layout_rate = c.layout_rate;
  g.dtypes = c.dtypes;
  g.forward_mode = c.tangents != 0;
  g.second_order = c.hvp != 0;
  if (c.ops.kind == OpSelection::Kind::List) g.ops = c.ops.ops;
  return g;
}

namespace {

// BURNMARK_OPS=auto: the intersection of the op lists of the backends that have one, in ops.def
// order, and those backends' names; nullopt when no backend has a list.
std::optional<std::vector<Op>> common_ops(std::span<const std::unique_ptr<Backend>> backends,
                                          std::vector<std::string>* names = nullptr) {
  std::optional<std::vector<bool>> common;
  for (const auto& b : backends) {
    const std::optional<std::vector<Op>> ops = b->supported_ops();
    if (!ops) continue;
    std::vector<bool> listed(kOpCount, false);
    for (Op op : *ops)
      listed[static_cast<std::size_t>(op)] = true;
    if (common)
      for (std::size_t i = 0; i < kOpCount; ++i)
        (*common)[i] = (*common)[i] && listed[i];
    else
      common = std::move(listed);
    if (names != nullptr) names->push_back(b->name());
  }
  if (!common) return std::nullopt;
  std::vector<Op> out;
  for (const OpInfo& info : kOpTable)
    if ((*common)[static_cast<std::size_t>(info.op)]) out.push_back(info.op);
  return out;
}

} // namespace

GeneratorOptions generator_options(const Config& c,
                                   std::span<const std::unique_ptr<Backend>> backends) {
  GeneratorOptions g = generator_options(c);
  if (c.ops.kind != OpSelection::Kind::Auto) return g;
  if (std::optional<std::vector<Op>> ops = common_ops(backends)) g.ops = std::move(*ops);
  return g;
}

std::string op_set_text(const Config& c, std::span<const std::unique_ptr<Backend>> backends) {
  std::vector<std::string> names;
  std::optional<std::vector<Op>> ops;
  if (c.ops.kind == OpSelection::Kind::List) ops = c.ops.ops;
  if (c.ops.kind == OpSelection::Kind::Auto) ops = common_ops(backends, &names);
  if (!ops) return {};
  std::string out;
  for (Op op : *ops)
    fmt::format_to(std::back_inserter(out), "{}{}", out.empty() ? "" : ",", op_name(op));
  if (out.empty()) out = "(none)";
  if (!names.empty())
    fmt::format_to(std::back_inserter(out), " (the ops of {})", fmt::join(names, ", "));
  return out;
}

OracleOptions oracle_options(const Config& c, bool gradients) {
  OracleOptions o;
  o.tolerance = c.tolerance;
  o.gradients = gradients;
  o.tangents = c.tangents != 0;
  o.hessian = gradients && c.hvp != 0;
  return o;
}

RunOptions run_options(const Config& c, bool gradients) {
  return RunOptions{gradients, c.tangents != 0, gradients && c.hvp != 0};
}

std::string knobs_help() {
  std::string out;
  for (const KnobInfo& k : knob_table()) {
    const std::string def = k.default_text.empty() ? "\"\"" : std::string(k.default_text);
    fmt::format_to(std::back_inserter(out), "  {:<24} default {:<14} {:<18} {}\n", k.env, def,
                   k.range, k.help);
  }
  return out;
}

} // namespace burnmark
