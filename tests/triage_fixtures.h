// The planted-bug backend and the program builder the triage tests share (test_triage.cpp,
// test_root_cause.cpp): a backend with known faults, wrapping the real reference, so that triage
// can be checked against what was planted.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/triage/rewrite.h"
#include "burnmark/triage/runner.h"

namespace burnmark::triage_test {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Faults planted on request, besides A and B (see PlantedBackend).
struct ExtraFaults {
  // C, for root-cause tests: exp of a huge value (>= 1e15) gives NaN instead of +inf (a second
  // fault of exp, with another trigger than B's).
  bool exp_of_huge_is_nan = false;
  // D: flip's backward returns its upstream gradient un-flipped; its forward value is right.
  bool flip_backward_unflipped = false;
  // E: neg(+0) gives +0 instead of -0 (a zero of the wrong sign, which the oracle compares as
  // equal: only an op downstream that tells the signs apart, 1/x, shows it).
  bool neg_zero_positive = false;
};

// The reference with two bugs planted, both in the forward pass of one op:
//   A: sigmoid adds 0.25 to every element at flat index >= 8 (a vector-tail bug);
//   B: exp(-inf) gives 1 instead of 0.
// Each is planted by rewriting the program before the real reference runs it: the op's result
// gets a constant leaf added, whose gradient is then dropped, so gradients stay correct and
// downstream ops carry the damage exactly as a wrong kernel would. Rank-0 results are left
// alone (a leaf cannot be rank 0).
// D, a backward fault, is planted the same way: flip(x) becomes (x - X) + F, with X and F leaves
// holding the reference's values of x and flip(x), their gradients dropped. The value is flip(x)
// exactly for finite x without -0 (x - x is +0), and x's gradient is the upstream one, un-flipped.
class PlantedBackend final : public Backend {
public:
  PlantedBackend() = default;
  explicit PlantedBackend(ExtraFaults faults) : faults_(faults) {}
  explicit PlantedBackend(bool exp_of_huge_is_nan) : faults_{exp_of_huge_is_nan, false, false} {}

  const std::string& name() const override { return name_; }

  Outcome run(const Program& p, const RunOptions& options) override {
    Program q;
    q.float_dtype = p.float_dtype;
    std::vector<Reg> map(p.stmts.size(), -1);
    std::vector<std::size_t> injected;
    // A leaf whose gradient the caller never sees, and an op on the rewritten program.
    const auto push_injected = [&](const Shape& shape, const std::vector<double>& data) {
      Stmt leaf;
      leaf.kind = StmtKind::Leaf;
      leaf.shape = shape;
      leaf.leaf = static_cast<int>(q.leaves.size());
      injected.push_back(q.leaves.size());
      q.leaves.push_back(Leaf{shape, data});
      q.stmts.push_back(leaf);
      return static_cast<Reg>(q.stmts.size()) - 1;
    };
    const auto push_op = [&](Op op, std::vector<Reg> operands, const Shape& shape) {
      Stmt s;
      s.kind = StmtKind::Op;
      s.instr.op = op;
      s.instr.operands = std::move(operands);
      s.shape = shape;
      q.stmts.push_back(s);
      return static_cast<Reg>(q.stmts.size()) - 1;
    };
    for (std::size_t r = 0; r < p.stmts.size(); ++r) {
      Stmt s = p.stmts[r];
      if (const auto unflipped = unflipped_flip(p, static_cast<Reg>(r))) {
        const Reg x = map[static_cast<std::size_t>(s.instr.operands[0])];
        const Reg diff = push_op(Op::Sub, {x, push_injected(s.shape, unflipped->first)}, s.shape);
        map[r] = push_op(Op::Add, {diff, push_injected(s.shape, unflipped->second)}, s.shape);
        continue;
      }
      switch (s.kind) {
      case StmtKind::Leaf:
        q.leaves.push_back(p.leaves[static_cast<std::size_t>(s.leaf)]);
        s.leaf = static_cast<int>(q.leaves.size()) - 1;
        break;
      case StmtKind::Alias: s.source = map[static_cast<std::size_t>(s.source)]; break;
      case StmtKind::Op:
        for (Reg& o : s.instr.operands)
          o = map[static_cast<std::size_t>(o)];
        break;
      }
      q.stmts.push_back(s);
      map[r] = static_cast<Reg>(q.stmts.size()) - 1;
      // -0 + +0 is +0, every other value is unchanged.
      if (faults_.neg_zero_positive && s.kind == StmtKind::Op && s.instr.op == Op::Neg &&
          s.shape.rank() > 0)
        map[r] = push_op(
            Op::Add,
            {map[r], push_injected(s.shape, std::vector<double>(
                                                static_cast<std::size_t>(s.shape.numel()), 0.0))},
            s.shape);
      const std::vector<float> delta = planted_delta(p, static_cast<Reg>(r));
      if (std::all_of(delta.begin(), delta.end(), [](float d) { return d == 0.0f; })) continue;
      map[r] =
          push_op(Op::Add, {map[r], push_injected(s.shape, {delta.begin(), delta.end()})}, s.shape);
    }
    q.root = map[static_cast<std::size_t>(p.root)];
    Outcome out = ref_->run(q, options);
    out.backend = name_;
    for (auto it = injected.rbegin(); it != injected.rend() && !out.grads.empty(); ++it)
      out.grads.erase(out.grads.begin() + static_cast<std::ptrdiff_t>(*it));
    return out;
  }

private:
  // For fault D at a flip: the reference's values of its operand and of its result.
  std::optional<std::pair<std::vector<double>, std::vector<double>>>
  unflipped_flip(const Program& p, Reg r) {
    const Stmt& s = p.stmts[static_cast<std::size_t>(r)];
    if (!faults_.flip_backward_unflipped || s.kind != StmtKind::Op || s.instr.op != Op::Flip ||
        s.shape.rank() == 0)
      return std::nullopt;
    const Outcome in = ref_->run(reroot(p, s.instr.operands[0]), RunOptions{false});
    const Outcome out = ref_->run(reroot(p, r), RunOptions{false});
    if (in.status != Status::Ok || out.status != Status::Ok) return std::nullopt;
    return std::make_pair(in.root.values, out.root.values);
  }

  std::vector<float> planted_delta(const Program& p, Reg r) {
    const Stmt& s = p.stmts[static_cast<std::size_t>(r)];
    const auto n = static_cast<std::size_t>(s.shape.numel());
    std::vector<float> delta(n, 0.0f);
    if (s.kind != StmtKind::Op || s.shape.rank() == 0) return delta;
    if (s.instr.op == Op::Sigmoid) {
      for (std::size_t i = 8; i < n; ++i)
        delta[i] = 0.25f;
    } else if (s.instr.op == Op::Exp) {
      const Outcome in = ref_->run(reroot(p, s.instr.operands[0]), RunOptions{false});
      for (std::size_t i = 0; i < n && i < in.root.values.size(); ++i)
        if (in.root.values[i] == -std::numeric_limits<double>::infinity())
          delta[i] = 1.0f;
        else if (faults_.exp_of_huge_is_nan && std::isfinite(in.root.values[i]) &&
                 in.root.values[i] >= 1e15)
          delta[i] = -std::numeric_limits<float>::infinity();
    }
    return delta;
  }

  std::string name_ = "planted";
  ExtraFaults faults_;
  std::unique_ptr<Backend> ref_ = make_reference_backend();
};

// Backends and a Runner over them, as a fuzz target or the CLI would hold them.
struct Bench {
  std::unique_ptr<Backend> ref = make_reference_backend();
  PlantedBackend planted;
  Runner runner{{ref.get(), &planted}, OracleOptions{}};
};

// Builds programs statement by statement, shapes inferred.
struct Builder {
  Program p;
  Reg leaf(Shape shape, std::vector<float> data = {}) {
    if (data.empty())
      for (std::int64_t i = 0; i < shape.numel(); ++i)
        data.push_back(0.1f * static_cast<float>(i % 7) - 0.2f);
    Stmt s;
    s.kind = StmtKind::Leaf;
    s.leaf = static_cast<int>(p.leaves.size());
    s.shape = shape;
    p.leaves.push_back(Leaf{shape, {data.begin(), data.end()}});
    return push(std::move(s));
  }
  Reg op(Op op, std::vector<Reg> in, Attrs attrs = {}) {
    Stmt s;
    s.kind = StmtKind::Op;
    s.instr = Instr{op, in, attrs};
    std::vector<Shape> shapes;
    for (Reg r : in)
      shapes.push_back(p.shape_of(r));
    const ShapeResult res = infer_shape(op, attrs, shapes);
    EXPECT_TRUE(res.ok()) << res.error();
    s.shape = res.shape();
    return push(std::move(s));
  }
  Program done(Reg root) {
    p.root = root;
    EXPECT_EQ(validate(p), "");
    return p;
  }
  Reg push(Stmt s) {
    p.stmts.push_back(std::move(s));
    return static_cast<Reg>(p.stmts.size()) - 1;
  }
};

} // namespace burnmark::triage_test
