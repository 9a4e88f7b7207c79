// Signatures and pre-signatures of divergences (see burnmark/triage/signature.h).
#include "burnmark/triage/signature.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <unordered_map>

namespace burnmark {

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string short_id(std::string_view text) {
  return fmt::format("{:016x}", fnv1a64(text)).substr(0, 12);
}

std::string_view special_class(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0.0) return std::signbit(v) ? "-0" : "";
  if (std::fabs(v) < std::numeric_limits<float>::min()) return "subnormal";
  if (std::fabs(v) >= 1e15) return "huge";
  return "";
}

namespace {

std::vector<std::string> sorted_unique(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += sep;
    out += v[i];
  }
  return out;
}

// The same op graph failing in bf16 and in f32 is usually two bugs (two kernels): a reduced
// dtype is part of the identity. Empty for f32, so f32 signatures stay what they were.
std::string dtype_part(const Program& p) {
  if (p.float_dtype == FloatDType::F32) return {};
  return fmt::format("dtype={}|", float_dtype_name(p.float_dtype));
}

bool commutative(const Stmt& s) {
  return s.kind == StmtKind::Op && (s.instr.op == Op::Add || s.instr.op == Op::Mul);
}

std::vector<Reg> inputs(const Stmt& s) {
  switch (s.kind) {
  case StmtKind::Leaf: return {};
  case StmtKind::Alias: return {s.source};
  case StmtKind::Op: return s.instr.operands;
  }
  return {};
}

// The structure-only walk that makes register numbering and statement order irrelevant.
class Canonicalizer {
public:
  explicit Canonicalizer(const Program& p) : p_(p) {}

  void walk(Reg r) {
    if (ids_.count(r)) return;
    std::vector<std::string> args;
    for (Reg o : ordered_inputs(r)) {
      walk(o);
      args.push_back(fmt::format("n{}", ids_.at(o)));
    }
    const int id = static_cast<int>(ids_.size());
    ids_[r] = id;
    const std::string label = stmt_label(p_, r);
    if (p_.stmts[static_cast<std::size_t>(r)].kind != StmtKind::Leaf) ops_.push_back(label);
    nodes_.push_back(fmt::format("n{}={}({})", id, label, join(args, ",")));
  }

  const std::vector<std::string>& nodes() const { return nodes_; }
  const std::vector<std::string>& ops() const { return ops_; }
  std::vector<Reg> visited() const {
    std::vector<Reg> out;
    for (const auto& [reg, id] : ids_)
      out.push_back(reg);
    return out;
  }

private:
  // A Merkle hash of the sub-DAG under r, blind to register numbers.
  std::uint64_t hash(Reg r) {
    if (auto it = hashes_.find(r); it != hashes_.end()) return it->second;
    std::string key = stmt_label(p_, r);
    for (Reg o : ordered_inputs(r))
      key += fmt::format(",{:x}", hash(o));
    return hashes_[r] = fnv1a64(key);
  }

  std::vector<Reg> ordered_inputs(Reg r) {
    const Stmt& s = p_.stmts[static_cast<std::size_t>(r)];
    std::vector<Reg> in = inputs(s);
    if (commutative(s))
      std::stable_sort(in.begin(), in.end(), [&](Reg a, Reg b) { return hash(a) < hash(b); });
    return in;
  }

  const Program& p_;
  std::unordered_map<Reg, int> ids_;
  std::unordered_map<Reg, std::uint64_t> hashes_;
  std::vector<std::string> nodes_;
  std::vector<std::string> ops_;
};

} // namespace

std::vector<std::string> special_classes(const Program& p, const std::vector<Reg>& regs) {
  std::vector<std::string> out;
  for (std::size_t r = 0; r < p.stmts.size(); ++r) {
    const Stmt& s = p.stmts[r];
    if (s.kind != StmtKind::Leaf) continue;
    if (!regs.empty() && std::find(regs.begin(), regs.end(), static_cast<Reg>(r)) == regs.end())
      continue;
    for (double v : p.leaves[static_cast<std::size_t>(s.leaf)].data)
      if (const std::string_view c = special_class(v); !c.empty()) out.emplace_back(c);
  }
  return sorted_unique(std::move(out));
}

Signature make_signature(const Program& minimized, const Verdict& verdict) {
  Signature sig;
  sig.kinds = divergence_classes(verdict);
  for (const Regression& r : verdict.regressions)
    sig.regressions.push_back(fmt::format("{}:{}<{}", r.backend, kind_name(r.kind), r.baseline));
  sig.regressions = sorted_unique(std::move(sig.regressions));
  Canonicalizer canon(minimized);
  canon.walk(minimized.root);
  sig.ops = canon.ops();
  // Only what the root reads counts, even if the caller passed an uncompacted program.
  sig.specials = special_classes(minimized, canon.visited());
  const auto text_of = [&](const std::vector<std::string>& kinds) {
    return fmt::format("sig1|{}div={}|graph={}|special={}", dtype_part(minimized), join(kinds, ","),
                       join(canon.nodes(), ";"), join(sig.specials, ","));
  };
  sig.text = text_of(sig.kinds);
  sig.id = short_id(sig.text);
  // Each diverging backend's share, named by its library.
  std::vector<std::string> backends;
  for (const std::string& k : sig.kinds) {
    const std::string backend = k.substr(0, k.rfind(':'));
    if (std::find(backends.begin(), backends.end(), backend) == backends.end())
      backends.push_back(backend);
  }
  if (backends.size() > 1)
    for (const std::string& backend : backends) {
      BackendSignature share;
      share.backend = backend;
      share.library = backend_library(backend);
      for (const std::string& k : sig.kinds)
        if (k.substr(0, k.rfind(':')) == backend)
          share.kinds.push_back(share.library + k.substr(k.rfind(':')));
      std::sort(share.kinds.begin(), share.kinds.end());
      share.id = short_id(text_of(share.kinds));
      sig.per_backend.push_back(std::move(share));
    }
  return sig;
}

std::string backend_library(std::string_view backend) {
  if (backend.starts_with("child:")) backend.remove_prefix(6);
  if (backend.starts_with("child[")) {
    const std::size_t close = backend.find("]:");
    if (close != std::string_view::npos) backend.remove_prefix(close + 2);
  }
  // A release in a child (libtorch@1.13, libtorch-fwd-over-rev@1.13) is the same library: a
  // bug live in both releases is known by the lines a single-release campaign wrote.
  if (const std::size_t at = backend.find('@'); at != std::string_view::npos)
    backend = backend.substr(0, at);
  if (backend == "libtorch" || backend.starts_with("libtorch-")) return "libtorch";
  return std::string(backend);
}

namespace {
std::string culprit_id_of(const Program& minimized, const std::vector<std::string>& kinds,
                          std::string_view label) {
  return short_id(
      fmt::format("culprit1|{}div={}|culprit={}", dtype_part(minimized), join(kinds, ","), label));
}
} // namespace

std::string culprit_signature_id(const Program& minimized, const Signature& signature,
                                 std::string_view label) {
  return culprit_id_of(minimized, signature.kinds, label);
}

std::string culprit_signature_id(const Program& minimized, const BackendSignature& share,
                                 std::string_view label) {
  return culprit_id_of(minimized, share.kinds, label);
}

std::string pre_signature(const Program& p, const Finding& f) {
  std::vector<std::string> operand_labels;
  for (Reg o : inputs(p.stmts[static_cast<std::size_t>(f.culprit)]))
    operand_labels.push_back(stmt_label(p, o));
  // The cone: every register the culprit reads, directly or not.
  std::vector<bool> in_cone(p.stmts.size(), false);
  in_cone[static_cast<std::size_t>(f.culprit)] = true;
  std::vector<Reg> cone;
  for (std::size_t i = static_cast<std::size_t>(f.culprit) + 1; i-- > 0;) {
    if (!in_cone[i]) continue;
    cone.push_back(static_cast<Reg>(i));
    for (Reg o : inputs(p.stmts[i]))
      in_cone[static_cast<std::size_t>(o)] = true;
  }
  return fmt::format("pre1|{}{}|{}({})|special={}", dtype_part(p), f.primary, f.culprit_label,
                     join(operand_labels, ","), join(special_classes(p, cone), ","));
}

} // namespace burnmark
