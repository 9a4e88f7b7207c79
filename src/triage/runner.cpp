// Runs programs through the backends and the oracle, and derives the primary divergence class
// and the culprit register (see burnmark/triage/runner.h).
#include "burnmark/triage/runner.h"

#include <algorithm>
#include <bit>
#include <fmt/format.h>

#include "burnmark/ir/layout.h"
#include "burnmark/ir/text.h"
#include "burnmark/triage/rewrite.h"

namespace burnmark {

Runner::Runner(std::vector<Backend*> backends, OracleOptions options, ConventionJudge* conventions)
    : backends_(std::move(backends)), options_(std::move(options)), conventions_(conventions) {}

namespace {

// Mixes one 64-bit word at a time (a multiply and a rotate: hashing runs before every memoised
// check, on every leaf value, so it must cost far less than the run it saves).
struct Hasher {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  void add(std::uint64_t v) { h = std::rotl((h ^ v) * 0xbf58476d1ce4e5b9ull, 31); }
  void add(double v) { add(std::bit_cast<std::uint64_t>(v)); }
  void add(const Shape& s) {
    add(static_cast<std::uint64_t>(s.rank()));
    for (int i = 0; i < s.rank(); ++i)
      add(static_cast<std::uint64_t>(s[i]));
  }
};

// The entry of `memo` for (program, reg), or nullptr.
template <class Memo>
const auto* find_entry(const Memo& memo, std::uint64_t hash, const Program& program, Reg reg) {
  const auto it = memo.entries.find(hash);
  if (it == memo.entries.end()) return static_cast<decltype(&it->second.front())>(nullptr);
  for (const auto& e : it->second)
    if (e.reg == reg && e.program == program) return &e;
  return static_cast<decltype(&it->second.front())>(nullptr);
}

// What an entry holds on the heap, about: leaf values and indices, statements and their
// operands, and the answer's values. Programs grow over a run (libFuzzer lengthens its inputs
// step by step), so a bound in entries alone is not a bound in memory.
std::size_t approx_bytes(const Program& p) {
  std::size_t bytes = sizeof(Program) + p.leaves.size() * sizeof(Leaf) +
                      p.stmts.size() * (sizeof(Stmt) + 2 * sizeof(Reg));
  for (const Leaf& l : p.leaves)
    bytes += l.data.size() * sizeof(double) + l.indices.size() * sizeof(std::int64_t);
  return bytes;
}
std::size_t approx_bytes(const Verdict& v) {
  return sizeof(Verdict) + v.divergences.size() * sizeof(Divergence);
}
std::size_t approx_bytes(const std::optional<std::vector<double>>& g) {
  return sizeof(g) + (g ? g->size() * sizeof(double) : 0);
}

template <class Memo, class Answer>
void keep_entry(Memo& memo, const MemoCapacity& capacity, std::uint64_t hash,
                const Program& program, Reg reg, const Answer& answer) {
  const std::size_t bytes = approx_bytes(program) + approx_bytes(answer);
  if (bytes > capacity.bytes) return; // one entry larger than the whole memo: not kept
  if (memo.size >= capacity.entries || memo.bytes + bytes > capacity.bytes) {
    // Starting over (not evicting one by one) keeps the bookkeeping free; the hits come from
    // the short prefixes many consecutive inputs share, which come back within a few inputs.
    memo.entries = {};
    memo.size = 0;
    memo.bytes = 0;
  }
  memo.entries[hash].push_back({program, reg, answer});
  ++memo.size;
  memo.bytes += bytes;
}

} // namespace

std::uint64_t program_hash(const Program& p) {
  Hasher h;
  const auto u = [](auto v) { return static_cast<std::uint64_t>(v); };
  h.add(u(p.float_dtype) << 32 | u(static_cast<std::uint32_t>(p.root)));
  for (const Leaf& l : p.leaves) {
    h.add(l.shape);
    h.add(u(l.dtype));
    for (double v : l.data)
      h.add(v);
    for (std::int64_t i : l.indices)
      h.add(u(i));
  }
  for (const Stmt& s : p.stmts) {
    h.add(u(s.kind) << 56 | u(s.dtype) << 48 | u(s.instr.op) << 32 |
          u(static_cast<std::uint32_t>(s.leaf)));
    h.add(u(static_cast<std::uint32_t>(s.source)));
    for (Reg o : s.instr.operands)
      h.add(u(static_cast<std::uint32_t>(o)));
    const Attrs& a = s.instr.attrs;
    h.add(u(static_cast<std::uint32_t>(a.dim)) << 32 | u(static_cast<std::uint32_t>(a.dim1)));
    h.add(u(static_cast<std::uint32_t>(a.times)) << 32 | u(static_cast<std::uint32_t>(a.variant)));
    h.add(u(a.keepdim) << 1 | u(a.include_self));
    for (double v : {a.exponent, a.lo, a.hi, a.alpha, a.slope, a.lambd, a.beta, a.threshold,
                     a.weight, a.eps, a.fill})
      h.add(v);
    h.add(s.shape);
  }
  return h.h;
}

void Runner::memoise(MemoCapacity capacity) {
  memo_capacity_ = capacity;
  checks_ = {};
  upstream_ = {};
}

Verdict Runner::check(const Program& program) {
  if (memo_capacity_.entries == 0) {
    bool keep = false;
    return run_check(program, keep);
  }
  const std::uint64_t hash = program_hash(program);
  if (const auto* e = find_entry(checks_, hash, program, -1)) {
    ++memo_hits_;
    return e->answer;
  }
  bool keep = false;
  Verdict verdict = run_check(program, keep);
  if (keep) keep_entry(checks_, memo_capacity_, hash, program, -1, verdict);
  return verdict;
}

Verdict Runner::run_check(const Program& program, bool& keep) {
  ++runs_;
  std::vector<Outcome> outcomes;
  outcomes.reserve(backends_.size());
  const RunOptions run{options_.gradients, options_.tangents, options_.hessian};
  for (Backend* b : backends_)
    outcomes.push_back(run_backend(*b, program, run));
  // A child process's death, hang or OOM may not recur: such a verdict is never remembered.
  keep = std::none_of(outcomes.begin(), outcomes.end(), [](const Outcome& o) {
    return o.status == Status::Crash || o.status == Status::Hang || o.status == Status::Oom;
  });
  Verdict verdict = compare(outcomes, options_);
  // The judge's switched references are the built-in reference's: only valid against it.
  if (conventions_ == nullptr || verdict.agree() || backends_.front()->name() != "ref")
    return verdict;
  return conventions_->judge(program, run, outcomes, verdict, options_).residual;
}

std::optional<std::vector<double>> Runner::values(const Program& program, Reg reg) {
  if (backends_.empty()) return std::nullopt;
  ++runs_;
  const Outcome out = run_backend(*backends_[0], reroot(program, reg), RunOptions{false});
  if (out.status != Status::Ok ||
      static_cast<std::int64_t>(out.root.values.size()) != program.shape_of(reg).numel())
    return std::nullopt;
  return out.root.values;
}

std::optional<std::vector<double>> Runner::leaf_gradient(const Program& program, int leaf) {
  if (backends_.empty()) return std::nullopt;
  ++runs_;
  const Outcome out = run_backend(*backends_[0], program, RunOptions{true});
  if (out.status != Status::Ok || leaf < 0 || static_cast<std::size_t>(leaf) >= out.grads.size())
    return std::nullopt;
  return out.grads[static_cast<std::size_t>(leaf)].values;
}

std::optional<std::vector<double>> Runner::upstream_gradient(const Program& program, Reg reg) {
  if (memo_capacity_.entries == 0) return run_upstream_gradient(program, reg);
  const std::uint64_t hash = program_hash(program) ^ (static_cast<std::uint64_t>(reg) << 32);
  if (const auto* e = find_entry(upstream_, hash, program, reg)) {
    ++memo_hits_;
    return e->answer;
  }
  std::optional<std::vector<double>> g = run_upstream_gradient(program, reg);
  // The reference alone: a gradient is kept; "cannot say" may be a child reference's crash.
  if (g) keep_entry(upstream_, memo_capacity_, hash, program, reg, g);
  return g;
}

std::optional<std::vector<double>> Runner::run_upstream_gradient(const Program& program, Reg reg) {
  const auto at = static_cast<std::size_t>(reg);
  if (!backends_.empty() && program.stmts[at].kind == StmtKind::Op) {
    if (!have_gradients_ || !(gradients_of_ == program)) {
      ++runs_;
      const RunningBackend running(backends_[0]->name());
      register_gradients_ = backends_[0]->register_gradients(program);
      gradients_of_ = program;
      have_gradients_ = true;
    }
    if (at < register_gradients_.size() && register_gradients_[at]) return register_gradients_[at];
  }
  const std::optional<std::vector<double>> vals = values(program, reg);
  if (!vals) return std::nullopt;
  // Registers keep their numbers in cut_to_leaf; the operands that fed `reg` stay as dead code.
  const Program cut = cut_to_leaf(program, reg, *vals);
  return leaf_gradient(cut, cut.stmts[static_cast<std::size_t>(reg)].leaf);
}

std::string divergence_class(const Divergence& d) {
  return d.backend + ":" + kind_name(d.kind);
}

std::vector<std::string> divergence_classes(const Verdict& verdict) {
  std::vector<std::string> out;
  for (const Divergence& d : verdict.divergences)
    out.push_back(divergence_class(d));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

int kind_rank(DivergenceKind kind) {
  switch (kind) {
  case DivergenceKind::Crash: return 0;
  case DivergenceKind::Hang: return 0;
  case DivergenceKind::Oom: return 0;
  case DivergenceKind::Error: return 0;
  case DivergenceKind::Shape: return 1;
  case DivergenceKind::Forward: return 2;
  case DivergenceKind::Gradient: return 3;
  case DivergenceKind::Tangent: return 3;
  // A wrong first derivative usually makes the second one wrong too: the first is the finding.
  case DivergenceKind::Hvp: return 4;
  }
  return 5;
}

} // namespace

std::string primary_class(const Verdict& verdict) {
  const Divergence* best = nullptr;
  for (const Divergence& d : verdict.divergences) {
    if (!best || kind_rank(d.kind) < kind_rank(best->kind) ||
        (kind_rank(d.kind) == kind_rank(best->kind) && d.backend < best->backend))
      best = &d;
  }
  return best ? divergence_class(*best) : std::string{};
}

bool has_class(const Verdict& verdict, const std::string& cls, int ignore_leaf) {
  return std::any_of(
      verdict.divergences.begin(), verdict.divergences.end(), [&](const Divergence& d) {
        if (ignore_leaf >= 0 && d.kind == DivergenceKind::Gradient && d.leaf == ignore_leaf)
          return false;
        return divergence_class(d) == cls;
      });
}

std::string stmt_label(const Program& p, Reg reg) {
  const Stmt& s = p.stmts[static_cast<std::size_t>(reg)];
  switch (s.kind) {
  case StmtKind::Leaf: return "leaf";
  case StmtKind::Alias: return "alias";
  case StmtKind::Op: break;
  }
  const Attrs& a = s.instr.attrs;
  // The op's parameters are part of the label (pow[0.5] and pow[2] take different kernels);
  // its dims are not (one root cause shows along any axis).
  const auto real = [](double v) { return float_to_text(static_cast<float>(v)); };
  const std::string name(op_name(s.instr.op));
  switch (op_info(s.instr.op).attr_kind) {
  case AttrKind::Exponent: return fmt::format("{}[{}]", name, real(a.exponent));
  case AttrKind::Bounds: return fmt::format("{}[{},{}]", name, real(a.lo), real(a.hi));
  case AttrKind::Min: return fmt::format("{}[{}]", name, real(a.lo));
  case AttrKind::Max: return fmt::format("{}[{}]", name, real(a.hi));
  case AttrKind::Alpha: return fmt::format("{}[{}]", name, real(a.alpha));
  case AttrKind::Slope: return fmt::format("{}[{}]", name, real(a.slope));
  case AttrKind::Lambd: return fmt::format("{}[{}]", name, real(a.lambd));
  case AttrKind::Softplus: return fmt::format("{}[{},{}]", name, real(a.beta), real(a.threshold));
  case AttrKind::Weight: return fmt::format("{}[{}]", name, real(a.weight));
  case AttrKind::Eps:
    return a.variant == 0 ? name + "[none]" : fmt::format("{}[{}]", name, real(a.eps));
  case AttrKind::Gelu:
  case AttrKind::Rounding:
  case AttrKind::Accumulate:
  case AttrKind::Correction:
  case AttrKind::DimKeepCorrection: return fmt::format("{}[{}]", name, a.variant);
  case AttrKind::Ord:
  case AttrKind::DimKeepOrd:
  case AttrKind::PDim: return fmt::format("{}[{}]", name, real(a.exponent));
  case AttrKind::BetaAlpha: return fmt::format("{}[{},{}]", name, real(a.beta), real(a.alpha));
  case AttrKind::Diagonal: return fmt::format("{}[{}]", name, a.times);
  case AttrKind::ScatterReduce:
    return fmt::format("{}[{},{}]", name, kScatterReduceNames[static_cast<std::size_t>(a.variant)],
                       a.include_self ? "self" : "noself");
  case AttrKind::Fill:
  case AttrKind::DimFill: return fmt::format("{}[{}]", name, real(a.fill));
  case AttrKind::DiagonalDims:
  case AttrKind::Offset: return fmt::format("{}[{}]", name, a.times);
  // A strided slice (step > 1) takes other paths than a contiguous one.
  case AttrKind::Slice: return fmt::format("{}[{}]", name, a.variant);
  // Each layout kind meets other kernel paths (strided, transposed, misaligned).
  case AttrKind::Layout: return fmt::format("{}[{}]", name, layout_kind_name(attrs_layout(a).kind));
  case AttrKind::Reshape:
  case AttrKind::Permutation:
  case AttrKind::Chunk:
  case AttrKind::Shift:
  case AttrKind::Narrow:
  case AttrKind::DimIndex:
  case AttrKind::DimSize:
  case AttrKind::None:
  case AttrKind::DimKeep:
  case AttrKind::TwoDims:
  case AttrKind::Dim:
  case AttrKind::DimTimes: break;
  }
  return std::string(op_name(s.instr.op));
}

bool has_label(const Program& p, const std::string& label) {
  for (std::size_t r = 0; r < p.stmts.size(); ++r)
    if (stmt_label(p, static_cast<Reg>(r)) == label) return true;
  return false;
}

namespace {

// Whether the prefix ending at `reg`, weighted by the reference's upstream gradient there, shows
// the gradient class `cls` on one of the program's own leaves. False where the upstream gradient
// is all ones (the plain prefix was that very check) or the reference cannot give it.
bool weighted_prefix_shows(Runner& runner, const Program& program, const Program& prefix, Reg reg,
                           const std::string& cls) {
  if (program.stmts[static_cast<std::size_t>(reg)].dtype != DType::F32) return false;
  const std::optional<std::vector<double>> upstream = runner.upstream_gradient(program, reg);
  if (!upstream || std::all_of(upstream->begin(), upstream->end(), [](double u) { return u == 1; }))
    return false;
  const Program w = weighted(prefix, *upstream);
  if (!validate(w).empty()) return false;
  return has_class(runner.check(w), cls, static_cast<int>(w.leaves.size()) - 1);
}

} // namespace

std::optional<Finding> analyse(Runner& runner, const Program& program) {
  return analyse(runner, program, runner.check(program));
}

std::optional<Finding> analyse(Runner& runner, const Program& program, const Verdict& verdict) {
  Finding f;
  f.verdict = verdict;
  if (f.verdict.agree()) return std::nullopt;
  f.primary = primary_class(f.verdict);
  f.culprit = program.root;
  // Weighted per register rather than in a second pass after the plain one: a view's wrong
  // backward already shows in the plain prefix of the op after it (which hands the view a
  // gradient that is not ones), so a pass run only when no plain prefix shows the class would
  // never reach the view.
  const bool gradient =
      runner.options().gradients && f.primary.ends_with(":" + kind_name(DivergenceKind::Gradient));
  // The earliest prefix that already diverges the same way ends at the op that went wrong;
  // every statement after it only carries the damage along.
  for (Reg r = 0; r < program.root; ++r) {
    if (program.stmts[static_cast<std::size_t>(r)].kind == StmtKind::Leaf) continue;
    const Program prefix = reroot(program, r);
    if (has_class(runner.check(prefix), f.primary) ||
        (gradient && weighted_prefix_shows(runner, program, prefix, r, f.primary))) {
      f.culprit = r;
      break;
    }
  }
  f.culprit_label = stmt_label(program, f.culprit);
  return f;
}

bool reproduces(Runner& runner, const Program& candidate, const Finding& finding) {
  if (!has_label(candidate, finding.culprit_label)) return false;
  return has_class(runner.check(candidate), finding.primary);
}

} // namespace burnmark
