// The planted-bug backend and the program builder the triage tests share (test_triage.cpp,
// test_root_cause.cpp): a backend with known faults, wrapping the real reference, so that triage
// can be checked against what was planted.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/triage/rewrite.h"
#include "burnmark/triage/runner.h"

namespace burnmark::triage_test {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// The reference with two bugs planted, both in the forward pass of one op:
//   A: sigmoid adds 0.25 to every element at flat index >= 8 (a vector-tail bug);
//   B: exp(-inf) gives 1 instead of 0.
// Each is planted by rewriting the program before the real reference runs it: the op's result
// gets a constant leaf added, whose gradient is then dropped, so gradients stay correct and
// downstream ops carry the damage exactly as a wrong kernel would. Rank-0 results are left
// alone (a leaf cannot be rank 0).
class PlantedBackend final : public Backend {
public:
  PlantedBackend() = default;
  // C, for root-cause tests: exp of a huge value (>= 1e15) gives NaN instead of +inf (a second
  // fault of exp, with another trigger than B's).
  explicit PlantedBackend(bool exp_of_huge_is_nan) : exp_of_huge_is_nan_(exp_of_huge_is_nan) {}

  const std::string& name() const override { return name_; }

  Outcome run(const Program& p, const RunOptions& options) override {
    Program q;
    q.float_dtype = p.float_dtype;
    std::vector<Reg> map(p.stmts.size(), -1);
    std::vector<std::size_t> injected;
    for (std::size_t r = 0; r < p.stmts.size(); ++r) {
      Stmt s = p.stmts[r];
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
      const std::vector<float> delta = planted_delta(p, static_cast<Reg>(r));
      if (std::all_of(delta.begin(), delta.end(), [](float d) { return d == 0.0f; })) continue;
      Stmt leaf;
      leaf.kind = StmtKind::Leaf;
      leaf.shape = s.shape;
      leaf.leaf = static_cast<int>(q.leaves.size());
      injected.push_back(q.leaves.size());
      q.leaves.push_back(Leaf{s.shape, {delta.begin(), delta.end()}});
      q.stmts.push_back(leaf);
      Stmt add;
      add.kind = StmtKind::Op;
      add.instr.op = Op::Add;
      add.instr.operands = {map[r], static_cast<Reg>(q.stmts.size()) - 1};
      add.shape = s.shape;
      q.stmts.push_back(add);
      map[r] = static_cast<Reg>(q.stmts.size()) - 1;
    }
    q.root = map[static_cast<std::size_t>(p.root)];
    Outcome out = ref_->run(q, options);
    out.backend = name_;
    for (auto it = injected.rbegin(); it != injected.rend() && !out.grads.empty(); ++it)
      out.grads.erase(out.grads.begin() + static_cast<std::ptrdiff_t>(*it));
    return out;
  }

private:
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
        else if (exp_of_huge_is_nan_ && std::isfinite(in.root.values[i]) &&
                 in.root.values[i] >= 1e15)
          delta[i] = -std::numeric_limits<float>::infinity();
    }
    return delta;
  }

  std::string name_ = "planted";
  bool exp_of_huge_is_nan_ = false;
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
