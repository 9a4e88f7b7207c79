// Characterising one diverging program and grouping many by signature (see
// burnmark/triage/triage.h).
#include "burnmark/triage/triage.h"

#include "burnmark/ir/input_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "burnmark/ir/text.h"

namespace burnmark {

Evaluator reference_evaluator(Runner& runner) {
  return [&runner](const Program& p, Reg r) { return runner.values(p, r); };
}

namespace {

// The signature of `p` (a variant of a minimised program: in f32, without forward mode) when it
// diverges with exactly `kinds`, the same bug seen there.
std::optional<Signature> signature_if_diverges_as(Runner& runner, const Program& p,
                                                  const std::vector<std::string>& kinds) {
  const Verdict v = runner.check(p);
  if (v.agree()) return std::nullopt;
  Signature s = make_signature(p, v);
  if (s.kinds != kinds) return std::nullopt;
  return s;
}

// Its id, and each backend's share's id into `field` of the same backend's share of `into`.
std::string id_if_diverges_as(Runner& runner, const Program& p,
                              const std::vector<std::string>& kinds, Signature& into,
                              std::string BackendSignature::*field) {
  const std::optional<Signature> s = signature_if_diverges_as(runner, p, kinds);
  if (!s) return {};
  for (BackendSignature& share : into.per_backend)
    for (const BackendSignature& other : s->per_backend)
      if (other.backend == share.backend) share.*field = other.id;
  return s->id;
}

} // namespace

Characterization characterize(Runner& runner, const Program& program, const Finding& finding,
                              const MinimizeOptions& options) {
  Characterization c;
  c.finding = finding;
  c.pre = pre_signature(program, finding);
  MinimizeOptions opts = options;
  if (!opts.evaluate) opts.evaluate = reference_evaluator(runner);
  const MinimizeResult m = minimize(
      program, [&](const Program& p) { return reproduces(runner, p, finding); }, opts);
  c.minimized = m.program;
  c.checks = m.checks;
  c.exhausted = m.exhausted;
  c.minimized_verdict = runner.check(c.minimized);
  c.signature = make_signature(c.minimized, c.minimized_verdict);
  c.signature.culprit_id = culprit_signature_id(c.minimized, c.signature, finding.culprit_label);
  for (BackendSignature& share : c.signature.per_backend)
    share.culprit_id = culprit_signature_id(c.minimized, share, finding.culprit_label);
  c.signature.roots =
      root_causes(runner, c.minimized, c.minimized_verdict, finding.culprit_label, c.signature.id);
  const bool reduced = c.minimized.float_dtype != FloatDType::F32;
  if (reduced)
    c.signature.f32_id =
        id_if_diverges_as(runner, with_float_dtype(c.minimized, FloatDType::F32), c.signature.kinds,
                          c.signature, &BackendSignature::f32_id);
  // Forward mode and second order: what still diverges in plain reverse mode is the same finding
  // as a reverse-mode campaign's, and is known by its id.
  if (runner.options().tangents || runner.options().hessian) {
    OracleOptions reverse_only = runner.options();
    reverse_only.tangents = false;
    reverse_only.hessian = false;
    Runner reverse(runner.backends(), reverse_only);
    std::vector<std::string> kinds;
    for (const std::string& k : c.signature.kinds)
      if (!k.ends_with(":" + kind_name(DivergenceKind::Tangent)) &&
          !k.ends_with(":" + kind_name(DivergenceKind::Hvp)))
        kinds.push_back(k);
    if (!kinds.empty()) {
      c.signature.reverse_id = id_if_diverges_as(reverse, c.minimized, kinds, c.signature,
                                                 &BackendSignature::reverse_id);
      if (reduced)
        if (const auto s = signature_if_diverges_as(
                reverse, with_float_dtype(c.minimized, FloatDType::F32), kinds))
          c.signature.f32_reverse_id = s->id;
    }
  }
  return c;
}

std::optional<Characterization> characterize(Runner& runner, const Program& program,
                                             const MinimizeOptions& options) {
  const std::optional<Finding> f = analyse(runner, program);
  if (!f) return std::nullopt;
  return characterize(runner, program, *f, options);
}

std::string program_text_path(const std::string& finding_path) {
  const std::filesystem::path p(finding_path);
  return (p.parent_path() / ("." + p.filename().string() + ".txt")).string();
}

std::string load_program_file(const std::string& path, const GeneratorOptions& options,
                              Program& out) {
  std::string error;
  const std::optional<std::string> read = read_input_file(path, error);
  if (!read) return error;
  const std::string& bytes = *read;
  if (!looks_like_program_text(bytes)) {
    const std::string beside = program_text_path(path);
    std::string ignored;
    if (std::filesystem::is_regular_file(beside))
      if (const std::optional<std::string> text = read_input_file(beside, ignored))
        if (ParseResult parsed = parse_program(*text); parsed.ok()) {
          out = std::move(parsed.program());
          return {};
        }
  }
  if (looks_like_program_text(bytes)) {
    ParseResult parsed = parse_program(bytes);
    if (!parsed.ok()) return path + ": " + parsed.error();
    out = std::move(parsed.program());
    return {};
  }
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  out = generate(std::span<const std::uint8_t>(data, bytes.size()), options);
  return {};
}

TriageReport triage(Runner& runner, const std::vector<TriageInput>& inputs,
                    const TriageOptions& options) {
  TriageReport report;
  struct PreGroup {
    std::vector<std::size_t> members; // indices into inputs
    Finding finding;                  // of the first member
  };
  std::map<std::string, PreGroup> pre_groups; // ordered, so the output does not depend on hashing
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::optional<Finding> f = analyse(runner, inputs[i].program);
    if (!f) {
      report.agreeing.push_back(inputs[i].name);
    } else {
      PreGroup& g = pre_groups[pre_signature(inputs[i].program, *f)];
      if (g.members.empty()) g.finding = *f;
      g.members.push_back(i);
    }
    if (options.progress) options.progress("analysed", i + 1, inputs.size());
  }

  std::map<std::string, TriageGroup> by_id;
  std::size_t done = 0;
  for (const auto& [pre, g] : pre_groups) {
    // The representative is the smallest member: less to minimise, the same bug.
    std::size_t rep = g.members.front();
    for (std::size_t m : g.members)
      if (inputs[m].program.stmts.size() < inputs[rep].program.stmts.size()) rep = m;
    Finding f = g.finding;
    if (rep != g.members.front()) {
      if (std::optional<Finding> fr = analyse(runner, inputs[rep].program))
        f = std::move(*fr);
      else
        rep = g.members.front(); // a flaky member: fall back to the one analysed above
    }
    const Characterization c = characterize(runner, inputs[rep].program, f, options.minimize);
    TriageGroup& out = by_id[c.signature.id];
    if (out.members.empty()) {
      out.signature = c.signature;
      out.minimized = c.minimized;
      out.representative = inputs[rep].name;
    }
    for (std::size_t m : g.members)
      out.members.push_back(inputs[m].name);
    out.pre_signatures.push_back(pre);
    if (options.progress) options.progress("minimised", ++done, pre_groups.size());
  }
  for (auto& [id, g] : by_id) {
    std::sort(g.members.begin(), g.members.end());
    report.groups.push_back(std::move(g));
  }
  std::stable_sort(report.groups.begin(), report.groups.end(),
                   [](const TriageGroup& a, const TriageGroup& b) {
                     return a.members.size() > b.members.size();
                   });
  report.roots = group_by_root(report.groups);
  return report;
}

std::vector<RootGroup> group_by_root(const std::vector<TriageGroup>& groups) {
  std::map<std::string, RootGroup> by_key;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string key = root_key(groups[i].signature.roots);
    RootGroup& g = by_key[key];
    if (g.groups.empty()) {
      g.key = key;
      g.roots = groups[i].signature.roots;
    }
    g.groups.push_back(i);
    g.members += groups[i].members.size();
  }
  std::vector<RootGroup> out;
  for (auto& [key, g] : by_key)
    out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(),
                   [](const RootGroup& a, const RootGroup& b) { return a.members > b.members; });
  return out;
}

std::string op_sequence(const Signature& signature) {
  std::string out;
  for (std::size_t i = 0; i < signature.ops.size(); ++i) {
    if (i) out += " -> ";
    out += signature.ops[i];
  }
  return out;
}

} // namespace burnmark
