// The parameter sweep over a minimised repro (see burnmark/triage/sweep.h).
#include "burnmark/triage/sweep.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>

#include "burnmark/triage/rewrite.h"
#include "burnmark/triage/signature.h"

namespace burnmark {
namespace {

std::string ranges(const std::vector<int>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1)
      ++j;
    if (!out.empty()) out += ',';
    out += j > i ? fmt::format("{}-{}", values[i], values[j]) : fmt::format("{}", values[i]);
    i = j + 1;
  }
  return out.empty() ? "-" : out;
}

bool same_as(const std::vector<int>& tried, const std::vector<int>& hits, auto&& pred) {
  std::vector<int> want;
  for (int n : tried)
    if (pred(n)) want.push_back(n);
  return want == hits;
}

// Inserts a copy of unary statement `reg` right after it, fed by `reg`; every later reader of
// `reg` reads the copy instead. Used to lengthen a chain of one op.
Program duplicate_after(const Program& p, Reg reg) {
  Program out = p;
  Stmt copy = p.stmts[static_cast<std::size_t>(reg)];
  copy.instr.operands = {reg};
  const auto shift = [&](Reg r) { return r >= reg ? r + 1 : r; };
  for (std::size_t i = static_cast<std::size_t>(reg) + 1; i < out.stmts.size(); ++i) {
    Stmt& s = out.stmts[i];
    switch (s.kind) {
    case StmtKind::Leaf: break;
    case StmtKind::Alias: s.source = shift(s.source); break;
    case StmtKind::Op:
      for (Reg& o : s.instr.operands)
        o = shift(o);
      break;
    }
  }
  out.stmts.insert(out.stmts.begin() + reg + 1, copy);
  out.root = shift(p.root);
  return out;
}

struct Sweeper {
  Runner& runner;
  const Program& repro;
  const Finding& finding;
  SweepResult result;

  bool hit(const std::optional<Program>& p) { return p && reproduces(runner, *p, finding); }

  void add(std::string parameter, std::string tried, std::string hits, std::string condition) {
    if (condition != "any" && condition != "none")
      result.conditions.push_back(parameter + ": " + condition);
    result.rows.push_back(
        {std::move(parameter), std::move(tried), std::move(hits), std::move(condition)});
  }

  void sizes() {
    std::set<std::int64_t> values;
    for (const Leaf& l : repro.leaves)
      for (int a = 0; a < l.shape.rank(); ++a)
        values.insert(l.shape[a]);
    for (std::int64_t v : values) {
      std::vector<int> tried, hits;
      for (int n = 1; n <= kMaxDim; ++n) {
        Program q = repro;
        for (std::size_t i = 0; i < q.leaves.size(); ++i)
          for (int a = 0; a < repro.leaves[i].shape.rank(); ++a)
            if (repro.leaves[i].shape[a] == v) q.leaves[i] = resize_axis(q.leaves[i], a, n);
        const std::optional<Program> legal = reinfer(std::move(q));
        if (!legal) continue;
        tried.push_back(n);
        if (hit(legal)) hits.push_back(n);
      }
      add(fmt::format("size {}", v), ranges(tried), ranges(hits), describe_hits(tried, hits));
    }
  }

  void specials() {
    // f64 programs try f64's own subnormals and magnitudes.
    const bool f64 = repro.float_dtype == FloatDType::F64;
    const double tiny = f64 ? 1e-310 : std::numeric_limits<float>::denorm_min() * 1000.0f;
    const std::vector<std::pair<std::string, double>> classes = {
        {"nan", std::numeric_limits<double>::quiet_NaN()},
        {"inf", std::numeric_limits<double>::infinity()},
        {"-inf", -std::numeric_limits<double>::infinity()},
        {"-0", -0.0},
        {"subnormal", tiny},
        {"huge", f64 ? 1e300 : 1e30f},
        {"0", 0.0},
        {"1", 1.0}};
    int swept = 0;
    for (std::size_t i = 0; i < repro.leaves.size(); ++i) {
      for (std::size_t j = 0; j < repro.leaves[i].data.size() && swept < 8; ++j) {
        const std::string_view own = special_class(repro.leaves[i].data[j]);
        if (own.empty()) continue;
        ++swept;
        std::vector<std::string> tried, hits;
        for (const auto& [name, value] : classes) {
          Program q = repro;
          q.leaves[i].data[j] = value;
          tried.push_back(name);
          if (hit(q)) hits.push_back(name);
        }
        std::string condition;
        if (hits.size() == tried.size())
          condition = "any";
        else if (hits.empty())
          condition = "none";
        else if (hits.size() == 1)
          condition = "needs " + hits[0];
        else if (std::all_of(hits.begin(), hits.end(), [](const std::string& h) {
                   return h == "nan" || h == "inf" || h == "-inf";
                 }))
          condition = "needs a non-finite value";
        else
          condition = "needs one of " + fmt::format("{}", fmt::join(hits, ","));
        add(fmt::format("L{}[{}]={}", i, j, own), fmt::format("{}", fmt::join(tried, ",")),
            hits.empty() ? "-" : fmt::format("{}", fmt::join(hits, ",")), condition);
      }
    }
  }

  void signs() {
    for (std::size_t i = 0; i < repro.leaves.size(); ++i) {
      const auto& data = repro.leaves[i].data;
      const bool has_neg = std::any_of(data.begin(), data.end(), [](double v) { return v < 0; });
      const bool has_pos = std::any_of(data.begin(), data.end(), [](double v) { return v > 0; });
      if (!has_neg && !has_pos) continue;
      std::vector<std::string> tried{"as-is"}, hits{"as-is"};
      std::string condition = "any";
      for (const bool negative : {false, true}) {
        if (!(negative ? has_pos : has_neg)) continue; // the variant equals the original
        Program q = repro;
        for (double& v : q.leaves[i].data)
          if (!std::isnan(v)) v = negative ? -std::fabs(v) : std::fabs(v);
        tried.push_back(negative ? "<=0" : ">=0");
        if (hit(q))
          hits.push_back(tried.back());
        else
          condition = negative ? fmt::format("needs positive values in L{}", i)
                               : fmt::format("needs negative values in L{}", i);
      }
      if (tried.size() > 1)
        add(fmt::format("L{} sign", i), fmt::format("{}", fmt::join(tried, ",")),
            fmt::format("{}", fmt::join(hits, ",")), condition);
    }
  }

  void chains() {
    std::vector<bool> in_chain(repro.stmts.size(), false);
    for (Reg top = static_cast<Reg>(repro.stmts.size()) - 1; top >= 0; --top) {
      const Stmt& s = repro.stmts[static_cast<std::size_t>(top)];
      if (s.kind != StmtKind::Op || op_arity(s.instr.op) != 1 ||
          in_chain[static_cast<std::size_t>(top)])
        continue;
      // Walk down while the operand is the same op with the same attributes.
      int length = 1;
      Reg bottom = top;
      in_chain[static_cast<std::size_t>(top)] = true;
      for (;;) {
        const Reg below = repro.stmts[static_cast<std::size_t>(bottom)].instr.operands[0];
        const Stmt& b = repro.stmts[static_cast<std::size_t>(below)];
        if (b.kind != StmtKind::Op ||
            !(b.instr == Instr{s.instr.op, b.instr.operands, s.instr.attrs}))
          break;
        bottom = below;
        in_chain[static_cast<std::size_t>(below)] = true;
        ++length;
      }
      std::vector<int> tried, hits;
      for (int want = 1; want <= length + 2; ++want) {
        Program q = repro;
        Reg t = top;
        for (int k = length; k > want; --k) {
          const Reg below = q.stmts[static_cast<std::size_t>(t)].instr.operands[0];
          q = replace_register(q, t, below);
          t = below;
        }
        for (int k = length; k < want; ++k)
          q = duplicate_after(q, t++);
        const std::optional<Program> legal = reinfer(std::move(q));
        if (!legal) continue;
        tried.push_back(want);
        if (hit(legal)) hits.push_back(want);
      }
      const std::string label = stmt_label(repro, top);
      std::string condition = describe_hits(tried, hits);
      if (condition.rfind("needs n > ", 0) == 0)
        condition = fmt::format("needs {} chained {}", std::stoi(condition.substr(10)) + 1, label);
      else if (hits.size() == 1)
        condition = fmt::format("needs exactly {} chained {}", hits[0], label);
      add(fmt::format("chain {}", label), ranges(tried), ranges(hits), condition);
    }
  }
};

} // namespace

std::string describe_hits(const std::vector<int>& tried, const std::vector<int>& hits) {
  if (hits.empty()) return "none";
  if (hits == tried) return "any";
  const int lo = hits.front(), hi = hits.back();
  if (same_as(tried, hits, [&](int n) { return n >= lo; }))
    return fmt::format("needs n > {}", lo - 1);
  if (same_as(tried, hits, [&](int n) { return n <= hi; }))
    return fmt::format("needs n < {}", hi + 1);
  for (int m : {2, 4, 8, 16, 32}) {
    if (same_as(tried, hits, [&](int n) { return n % m != 0; }))
      return fmt::format("needs n mod {} != 0", m);
    if (same_as(tried, hits, [&](int n) { return n % m == 0; }))
      return fmt::format("needs n mod {} == 0", m);
    if (same_as(tried, hits, [&](int n) { return n >= lo && n % m != 0; }))
      return fmt::format("needs n > {} and n mod {} != 0", lo - 1, m);
  }
  return fmt::format("needs n in {{{}}}", ranges(hits));
}

SweepResult sweep(Runner& runner, const Program& repro) {
  const std::optional<Finding> finding = analyse(runner, repro);
  if (!finding) return {};
  Sweeper s{runner, repro, *finding, {}};
  s.sizes();
  s.specials();
  s.signs();
  s.chains();
  return std::move(s.result);
}

std::string format_sweep(const SweepResult& r) {
  std::size_t w0 = 9, w1 = 5, w2 = 10;
  for (const SweepRow& row : r.rows) {
    w0 = std::max(w0, row.parameter.size());
    w1 = std::max(w1, row.tried.size());
    w2 = std::max(w2, row.hits.size());
  }
  std::string out = fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", "parameter", w0, "tried", w1,
                                "reproduces", w2, "condition");
  for (const SweepRow& row : r.rows)
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", row.parameter, w0, row.tried, w1, row.hits,
                       w2, row.condition);
  out += "needs: ";
  out += r.conditions.empty() ? std::string("nothing the sweep varied")
                              : fmt::format("{}", fmt::join(r.conditions, "; "));
  out += '\n';
  return out;
}

} // namespace burnmark
