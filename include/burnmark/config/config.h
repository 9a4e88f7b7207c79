// The environment knobs (knobs.def) as one struct, read once at start-up, and their mapping onto
// the generator's and the oracle's options. A bad value is a one-line message naming the valid
// choices; the entry points print it as "burnmark: <message>" and exit with status 2.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/plugin/loader.h"

namespace burnmark {

class Backend;

enum class HarnessMode {
  Panic,      // report, then abort() so libFuzzer writes the input as a crash artifact
  Continuous, // report (then summarise) and keep fuzzing
};

// BURNMARK_OPS: which ops the generator draws.
struct OpSelection {
  enum class Kind {
    Auto, // the ops every backend that lists its ops (a plugin) supports; all when none does
    All,  // every op, whatever the backends
    List, // exactly `ops`
  };
  Kind kind = Kind::Auto;
  std::vector<Op> ops; // Kind::List only, in the knob's order, without duplicates
};

namespace knob_types {
using Int = int;
using Real = double;
using Text = std::string;
using Mode = HarnessMode;
using DTypes = std::vector<FloatDType>;
using Ops = OpSelection;
} // namespace knob_types

struct Config {
#define BURNMARK_KNOB(field, env, type, def, lo, hi, help) knob_types::type field{};
#include "burnmark/config/knobs.def"
#undef BURNMARK_KNOB
};

struct KnobInfo {
  std::string_view env;
  std::string_view default_text;
  std::string_view range; // "1..8", "panic|continuous", or empty
  std::string_view help;
};
std::span<const KnobInfo> knob_table();

struct ConfigResult {
  std::variant<Config, std::string> value; // the config, or "ENV: what is wrong (valid: ...)"
  bool ok() const { return std::holds_alternative<Config>(value); }
  const Config& config() const { return std::get<Config>(value); }
  const std::string& error() const { return std::get<std::string>(value); }
};

// Looks a variable up; nullopt when unset. Set but empty is an error (`MODE= cmd` is a typo, not
// the default), except for the knobs whose help says "empty = off".
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

ConfigResult load_config(const EnvLookup& lookup);
ConfigResult load_config_from_environment();
Config default_config();

// BURNMARK_KNOWN_BUGS=auto (its default): <binary's dir>/known_bugs.txt beside the binary (an
// OSS-Fuzz $OUT, whose runner passes no environment of ours, .clusterfuzzlite/build.sh), else
// <binary's dir>/../share/burnmark/known_bugs.txt when installed, else the source tree's
// corpus/known_bugs.txt (a build tree); empty when none exists. Never relative to the working
// directory.
std::string default_known_bugs_path();

// The patch table BURNMARK_PATCHES selects from, found as the known-bug list is (beside the
// binary, installed share/burnmark/patches.txt, the checkout's corpus/patches.txt); empty when
// none exists.
std::string default_patches_path();

// BURNMARK_PATCHES resolved against default_patches_path() for RegistryOptions::patches.
// load_config has checked every id; a table that became unreadable since prints
// "burnmark: <message>" and exits with status 2, as config_or_exit does.
std::vector<PluginPatch> active_plugin_patches_or_exit(const Config& config);

// Loads from the environment or prints "burnmark: <message>" on stderr and exits with status 2.
Config config_or_exit();

// BURNMARK_OPS=auto leaves the op set to the overload below, which knows the backends.
GeneratorOptions generator_options(const Config& config);
// With BURNMARK_OPS=auto, the ops every backend that lists its ops supports (the intersection
// of the plugins' lists; no restriction when no backend lists any). Otherwise as above.
GeneratorOptions generator_options(const Config& config,
                                   std::span<const std::unique_ptr<Backend>> backends);
// What generator_options(config, backends) restricts the ops to, for start lines: empty when
// it does not restrict them, else "add,sub,..." and, under auto, " (the ops of NAME, ...)".
std::string op_set_text(const Config& config, std::span<const std::unique_ptr<Backend>> backends);
OracleOptions oracle_options(const Config& config, bool gradients);
// What each backend is asked for: second order only with gradients.
RunOptions run_options(const Config& config, bool gradients);

// BACKENDS entries (comma list) that run in a Python child (the names of python_backend.cpp's
// table: torch-eager-py, torch-compile, jax), and among them those that compile once per
// program structure (torch-compile, jax). A campaign with a Python backend runs in one process
// (its child and caches live for the whole campaign); with a compiling one, the fuzz targets'
// mutator makes kCompileValueMutations percent of its mutations value-only by default.
bool backends_have_python(std::string_view backends);
bool backends_compile(std::string_view backends);
inline constexpr int kCompileValueMutations = 90;

// The knob table as aligned text lines, for --help.
std::string knobs_help();

} // namespace burnmark
