// From diverging programs to distinct bugs: characterise one program (analyse, minimise,
// sign), and group a directory of artifacts by signature.
//
// Grouping is two-level to stay fast: every file gets the cheap pre-signature (one analyse()),
// then only one representative per pre-signature is minimised, and pre-groups whose minimised
// representatives share a signature are merged. Two bugs that share a pre-signature (same
// primary class, culprit op, its operands and the special values upstream of it) are counted
// as one; the minimised representative names which one.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/program.h"
#include "burnmark/triage/minimize.h"
#include "burnmark/triage/runner.h"
#include "burnmark/triage/signature.h"

namespace burnmark {

struct Characterization {
  Finding finding; // of the original program
  std::string pre; // pre_signature of the original
  Program minimized;
  Verdict minimized_verdict;
  Signature signature;
  std::size_t checks = 0; // predicate calls the minimiser spent
  bool exhausted = false;
};

// The evaluator the minimiser's cut needs, backed by the runner's reference.
Evaluator reference_evaluator(Runner& runner);

// nullopt when the backends agree on `program`.
std::optional<Characterization> characterize(Runner& runner, const Program& program,
                                             const MinimizeOptions& options = {});
// Same, reusing a finding already computed for `program`.
Characterization characterize(Runner& runner, const Program& program, const Finding& finding,
                              const MinimizeOptions& options = {});

// A file holding either a text program (after comment lines, "# burnmark program" or "%0 =")
// or raw fuzzer bytes, decoded with generate() under `options` exactly as the fuzz targets do.
// Raw bytes with a program text beside them (program_text_path) are that program instead: the
// fuzz targets write one with each finding, so a finding keeps the program it was found with
// when the generator's tables change.
// Returns "" on success, else "PATH: why" (unreadable file, malformed text program).
// Where the program text of a saved finding lives: ".<name>.txt" beside it (hidden, so that
// directory readers such as `burnmark triage` do not take it for a second finding).
std::string program_text_path(const std::string& finding_path);
std::string load_program_file(const std::string& path, const GeneratorOptions& options,
                              Program& out);

struct TriageInput {
  std::string name; // usually the file path
  Program program;
};

struct TriageGroup {
  Signature signature;
  Program minimized;
  std::vector<std::string> members; // input names, sorted
  std::string representative;       // the member that was minimised
  std::vector<std::string> pre_signatures;
};

// Signatures that share their root causes (root_key): one fault reached through several op
// graphs, dtypes or modes.
struct RootGroup {
  std::string key;                 // root_key of the roots
  std::vector<RootCause> roots;    // of the first signature
  std::vector<std::size_t> groups; // indices into TriageReport::groups, in that order
  std::size_t members = 0;         // inputs over all those signatures
};

struct TriageReport {
  std::vector<TriageGroup> groups;   // most members first, then by signature id
  std::vector<RootGroup> roots;      // most members first, then by key
  std::vector<std::string> agreeing; // inputs on which every backend agreed
};

// Groups signature groups by their root causes (triage() fills TriageReport::roots with it).
std::vector<RootGroup> group_by_root(const std::vector<TriageGroup>& groups);

struct TriageOptions {
  MinimizeOptions minimize;
  // Called after each input is analysed and after each representative is minimised.
  std::function<void(std::string_view stage, std::size_t done, std::size_t total)> progress;
};

TriageReport triage(Runner& runner, const std::vector<TriageInput>& inputs,
                    const TriageOptions& options = {});

// The op labels in canonical order joined by " -> ", e.g. "log -> relu -> relu".
std::string op_sequence(const Signature& signature);

} // namespace burnmark
