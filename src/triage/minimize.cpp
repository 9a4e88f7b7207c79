// The IR-level delta debugger (see burnmark/triage/minimize.h for the candidate order).
#include "burnmark/triage/minimize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "burnmark/ir/text.h"
#include "burnmark/triage/rewrite.h"
#include "burnmark/triage/signature.h"

namespace burnmark {

int value_complexity(double v) {
  if (std::isnan(v)) return 8;
  if (std::isinf(v)) return 7;
  if (v == 0.0) return std::signbit(v) ? 6 : 0;
  if (std::fabs(v) < std::numeric_limits<float>::min() || std::fabs(v) >= 1e15) return 6;
  if (v == 1.0) return 1;
  if (v == -1.0) return 2;
  if (v == std::nearbyint(v)) return std::fabs(v) <= 16.0 ? 3 : 4;
  return 5;
}

namespace {

class Minimizer {
public:
  Minimizer(const Program& program, const Predicate& predicate, const MinimizeOptions& options)
      : best_(program), predicate_(predicate), options_(options) {}

  MinimizeResult run() {
    if (!check(best_)) return finish();
    // Dead code normally never matters, but an op that raises does so even when unused: if
    // dropping it loses the bug, every later candidate keeps the dead statements too.
    const Program compacted = compact(best_);
    if (!(compacted == best_)) {
      compacting_ = check(compacted);
      if (compacting_) best_ = compacted;
    }
    bool changed = true;
    while (changed && !exhausted_) {
      changed = false;
      changed |= reroot_pass();
      changed |= replace_pass();
      changed |= cut_pass();
      changed |= shape_pass();
      changed |= data_pass();
    }
    return finish();
  }

private:
  MinimizeResult finish() { return MinimizeResult{best_, checks_, exhausted_}; }

  bool check(const Program& p) {
    if (checks_ >= options_.max_checks) {
      exhausted_ = true;
      return false;
    }
    ++checks_;
    return predicate_(p);
  }

  // Accepts `candidate` (after compaction) when it is legal, new, and still shows the bug.
  bool attempt(std::optional<Program> candidate) {
    if (!candidate || exhausted_) return false;
    if (compacting_) candidate = compact(*candidate);
    if (*candidate == best_ || !validate(*candidate).empty()) return false;
    const std::uint64_t key = fnv1a64(to_text(*candidate));
    if (rejected_.count(key)) return false;
    if (check(*candidate)) {
      best_ = std::move(*candidate);
      return true;
    }
    rejected_.insert(key);
    return false;
  }

  bool reroot_pass() {
    for (Reg r = 0; r < best_.root; ++r) {
      if (best_.stmts[static_cast<std::size_t>(r)].kind == StmtKind::Leaf) continue;
      Program q = best_;
      q.root = r;
      if (attempt(std::move(q))) return true;
    }
    return false;
  }

  // Replaces a statement by one of its operands, else by an earlier leaf.
  bool replace_pass() {
    bool changed = false;
    for (Reg r = static_cast<Reg>(best_.stmts.size()) - 1; r >= 0; --r) {
      r = std::min(r, static_cast<Reg>(best_.stmts.size()) - 1);
      const Stmt& s = best_.stmts[static_cast<std::size_t>(r)];
      if (s.kind == StmtKind::Leaf) continue;
      std::vector<Reg> with =
          s.kind == StmtKind::Alias ? std::vector<Reg>{s.source} : s.instr.operands;
      for (Reg l : best_.leaf_registers())
        if (l < r) with.push_back(l);
      for (std::size_t i = 0; i < with.size(); ++i) {
        if (std::find(with.begin(), with.begin() + static_cast<std::ptrdiff_t>(i), with[i]) !=
            with.begin() + static_cast<std::ptrdiff_t>(i))
          continue;
        if (attempt(reinfer(replace_register(best_, r, with[i])))) {
          changed = true;
          break;
        }
      }
    }
    return changed;
  }

  bool cut_pass() {
    if (!options_.evaluate) return false;
    bool changed = false;
    for (Reg r = static_cast<Reg>(best_.stmts.size()) - 1; r >= 0; --r) {
      r = std::min(r, static_cast<Reg>(best_.stmts.size()) - 1);
      const Stmt& s = best_.stmts[static_cast<std::size_t>(r)];
      // A leaf must have rank >= 1, so scalars stay computed.
      if (s.kind != StmtKind::Op || s.shape.rank() == 0 || exhausted_) continue;
      const auto values = options_.evaluate(best_, r);
      if (!values) continue;
      std::vector<double> data = *values;
      for (double& v : data)
        v = round_to(v, best_.float_dtype);
      if (attempt(cut_to_leaf(best_, r, std::move(data)))) changed = true;
    }
    return changed;
  }

  static std::vector<std::int64_t> smaller_sizes(std::int64_t d) {
    std::vector<std::int64_t> out;
    for (std::int64_t n : {std::int64_t{1}, d / 4, d / 2, (3 * d) / 4, d - 1})
      if (n >= 1 && n < d && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    return out;
  }

  bool shape_pass() {
    bool changed = false;
    for (std::size_t i = 0; i < best_.leaves.size(); ++i) {
      bool again = true;
      while (again && i < best_.leaves.size() && !exhausted_) {
        again = false;
        const Leaf leaf = best_.leaves[i];
        std::vector<Leaf> variants;
        for (int a = 0; a < leaf.shape.rank() && leaf.shape.rank() > 1; ++a) {
          if (leaf.shape[a] != 1) continue;
          Shape squeezed;
          for (int b = 0; b < leaf.shape.rank(); ++b)
            if (b != a) squeezed.push_back(leaf.shape[b]);
          variants.push_back(reshape_leaf(leaf, squeezed));
        }
        if (leaf.shape.rank() > 1)
          variants.push_back(reshape_leaf(leaf, Shape{leaf.shape.numel()}));
        // Both the leading and the trailing rows, so that the one element that matters can
        // end up alone whichever end it sits at.
        for (int a = 0; a < leaf.shape.rank(); ++a)
          for (std::int64_t n : smaller_sizes(leaf.shape[a])) {
            variants.push_back(slice_axis(leaf, a, 0, n));
            variants.push_back(slice_axis(leaf, a, leaf.shape[a] - n, n));
          }
        for (Leaf& v : variants) {
          Program q = best_;
          q.leaves[i] = std::move(v);
          if (attempt(reinfer(std::move(q)))) {
            again = changed = true;
            break;
          }
        }
      }
    }
    // Broadcast and matmul partners must shrink together: resize every leaf axis of one size.
    std::vector<std::int64_t> sizes;
    for (const Leaf& l : best_.leaves)
      for (int a = 0; a < l.shape.rank(); ++a)
        if (l.shape[a] > 1) sizes.push_back(l.shape[a]);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) {
      for (std::int64_t n : smaller_sizes(*it)) {
        Program q = best_;
        for (Leaf& l : q.leaves)
          for (int a = 0; a < l.shape.rank(); ++a)
            if (l.shape[a] == *it) l = resize_axis(l, a, n);
        if (attempt(reinfer(std::move(q)))) {
          changed = true;
          break;
        }
      }
    }
    return changed;
  }

  // Moves elements towards simpler values in halving chunks (ddmin over element positions).
  bool data_pass() {
    bool changed = false;
    // Targets: 0, 1, -1, then each element rounded to an integer (NaN marks "round").
    const double round_marker = std::nan("");
    for (double target : {0.0, 1.0, -1.0, round_marker}) {
      for (std::size_t i = 0; i < best_.leaves.size() && !exhausted_; ++i) {
        const std::size_t n = best_.leaves[i].data.size();
        for (std::size_t chunk = n; chunk >= 1 && !exhausted_; chunk /= 2) {
          for (std::size_t start = 0; start < n && !exhausted_; start += chunk) {
            Program q = best_;
            bool any = false;
            for (std::size_t j = start; j < std::min(n, start + chunk); ++j) {
              double& x = q.leaves[i].data[j];
              double t = target;
              if (std::isnan(target)) {
                if (!std::isfinite(x) || std::fabs(x) >= 1e6) continue;
                t = std::nearbyint(x);
              }
              if (value_complexity(t) < value_complexity(x)) {
                x = t;
                any = true;
              }
            }
            if (any && attempt(std::move(q))) changed = true;
          }
          if (chunk == 1) break;
        }
      }
    }
    // Index values towards 0, so that the operand they index can shrink in the next shape pass.
    for (std::size_t i = 0; i < best_.leaves.size() && !exhausted_; ++i) {
      const std::size_t n = best_.leaves[i].indices.size();
      for (std::size_t chunk = n; chunk >= 1 && !exhausted_; chunk /= 2) {
        for (std::size_t start = 0; start < n && !exhausted_; start += chunk) {
          Program q = best_;
          bool any = false;
          for (std::size_t j = start; j < std::min(n, start + chunk); ++j) {
            std::int64_t& v = q.leaves[i].indices[j];
            any = any || v != 0;
            v = 0;
          }
          if (any && attempt(std::move(q))) changed = true;
        }
        if (chunk == 1) break;
      }
    }
    return changed;
  }

  Program best_;
  const Predicate& predicate_;
  const MinimizeOptions& options_;
  std::size_t checks_ = 0;
  bool exhausted_ = false;
  bool compacting_ = true;
  std::unordered_set<std::uint64_t> rejected_;
};

} // namespace

MinimizeResult minimize(const Program& program, const Predicate& predicate,
                        const MinimizeOptions& options) {
  return Minimizer(program, predicate, options).run();
}

} // namespace burnmark
