// Shared by the test_eigen sources: a program builder, deterministic inputs and the fixture that
// runs a program through the reference and the Eigen plugin and compares them with the oracle.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/plugin/loader.h"
#include "platform_pins.h"

namespace burnmark::eigen_test {

// Where the pinned values of these tests were measured: the plugin's platform line there.
inline const std::string kEigenMeasuredOn = "Eigen 3.4 SSE2 on GenuineIntel";

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Packet sizes are 4 (SSE) or 8 (AVX) floats and the Tensor executor unrolls by four packets:
// these counts leave 0 to 7 elements for the scalar tail, and 1 runs the tail alone.
constexpr std::int64_t kSizes[] = {1, 7, 8, 9, 17, 33};

// Builds a Program statement by statement, inferring each shape with BurnMark's own rules.
class Builder {
public:
  Reg leaf(Shape shape, std::vector<float> data) {
    Stmt s;
    s.kind = StmtKind::Leaf;
    s.leaf = static_cast<int>(p_.leaves.size());
    s.shape = shape;
    p_.leaves.push_back(Leaf{shape, {data.begin(), data.end()}});
    return push(std::move(s));
  }
  // The very same tensor as `source` (its dtype too: an alias of a mask is a mask).
  Reg alias(Reg source) {
    Stmt s;
    s.kind = StmtKind::Alias;
    s.source = source;
    s.shape = p_.shape_of(source);
    s.dtype = p_.stmts[static_cast<std::size_t>(source)].dtype;
    return push(std::move(s));
  }
  Reg op(Op op, std::vector<Reg> operands, Attrs attrs = {}) {
    std::vector<Shape> shapes;
    for (Reg r : operands)
      shapes.push_back(p_.shape_of(r));
    const ShapeResult shape = infer_shape(op, attrs, shapes);
    if (!shape.ok()) throw std::runtime_error(std::string(op_name(op)) + ": " + shape.error());
    Stmt s;
    s.instr = Instr{op, std::move(operands), attrs};
    s.shape = shape.shape();
    s.dtype = result_dtype(op);
    return push(std::move(s));
  }
  const Shape& shape_of(Reg r) const { return p_.shape_of(r); }
  Program finish(Reg root) {
    p_.root = root;
    const std::string why = validate(p_);
    if (!why.empty()) throw std::runtime_error(why);
    return p_;
  }

private:
  Reg push(Stmt s) {
    p_.stmts.push_back(std::move(s));
    return static_cast<Reg>(p_.stmts.size() - 1);
  }
  Program p_;
};

// Deterministic values in [lo, hi]; with `signed_`, each value's sign is flipped at random.
inline std::vector<float> values(std::int64_t n, double lo, double hi, unsigned seed,
                                 bool signed_ = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) {
    x = static_cast<float>(u(rng));
    if (signed_ && (rng() & 1)) x = -x;
  }
  return v;
}

// Multiplies `y` by a fresh leaf of weights, so that every gradient reaching y is varied rather
// than all ones, then makes that the root.
inline Program weighted(Builder& b, Reg y, unsigned seed) {
  const Shape& s = b.shape_of(y);
  if (s.rank() == 0) return b.finish(b.op(Op::Mul, {y, b.leaf(Shape{1}, {0.75f})}));
  return b.finish(b.op(Op::Mul, {y, b.leaf(s, values(s.numel(), 0.5, 1.5, seed, true))}));
}

inline Attrs pow_attrs(double c) {
  Attrs a;
  a.exponent = c;
  return a;
}
inline Attrs clamp_attrs(double lo, double hi) {
  Attrs a;
  a.lo = lo;
  a.hi = hi;
  return a;
}
inline Attrs dim_attrs(int dim, bool keepdim = false) {
  Attrs a;
  a.dim = dim;
  a.keepdim = keepdim;
  return a;
}
inline Attrs transpose_attrs(int d0, int d1) {
  Attrs a;
  a.dim = d0;
  a.dim1 = d1;
  return a;
}
inline Attrs repeat_attrs(int dim, int times) {
  Attrs a;
  a.dim = dim;
  a.times = times;
  return a;
}

// op(x) * w over [n], x drawn from [lo, hi] (random signs when signed_).
inline Program unary_program(Op op, Attrs attrs, std::int64_t n, double lo, double hi, bool signed_,
                             unsigned seed) {
  Builder b;
  const Reg x = b.leaf(Shape{n}, values(n, lo, hi, seed, signed_));
  return weighted(b, b.op(op, {x}, attrs), seed + 1);
}

// A one-leaf program over explicit values: op(x), seeded with ones.
inline Program special_program(Op op, Attrs attrs, std::vector<float> x) {
  Builder b;
  const auto n = static_cast<std::int64_t>(x.size());
  const Reg r = b.leaf(Shape{n}, std::move(x));
  return b.finish(b.op(op, {r}, attrs));
}

// [v, 1.5 x 7, v]: element 0 is computed by Eigen's packet body, element 8 by its scalar tail.
inline Program body_and_tail(Op op, Attrs attrs, float v) {
  std::vector<float> x(9, 1.5f);
  x.front() = v;
  x.back() = v;
  return special_program(op, attrs, std::move(x));
}

struct Pinned {
  double body_value, tail_value, body_grad, tail_grad;
};

// The same double, NaN matching NaN and the zero's sign included.
inline bool identical(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

inline bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  // Zeros and infinities exactly, the sign included; other values to 1e-5 relative.
  if (a == 0 || b == 0 || std::isinf(a) || std::isinf(b))
    return a == b && std::signbit(a) == std::signbit(b);
  return std::fabs(a - b) <= 1e-5 * std::fabs(b);
}

class EigenVsReference : public ::testing::Test {
protected:
  void SetUp() override {
    PluginLoadResult r = load_plugin_backend("eigen");
    ASSERT_TRUE(r.ok()) << r.error();
    eigen_ = r.take();
    ASSERT_EQ(eigen_->name(), "eigen");
  }

  std::vector<Outcome> run(const Program& p) {
    std::vector<Outcome> o;
    o.push_back(ref_->run(p, RunOptions{}));
    o.push_back(eigen_->run(p, RunOptions{}));
    return o;
  }

  // Both backends ran, produced a gradient per leaf, and agree everywhere within the bounds.
  void expect_agree(const Program& p) {
    const std::vector<Outcome> o = run(p);
    ASSERT_EQ(o[0].status, Status::Ok) << o[0].message << "\n" << to_text(p);
    ASSERT_EQ(o[1].status, Status::Ok) << o[1].message << "\n" << to_text(p);
    ASSERT_EQ(o[1].grads.size(), p.leaves.size()) << to_text(p);
    const Verdict v = compare(o, OracleOptions{});
    EXPECT_EQ(v.compared, 1u);
    EXPECT_TRUE(v.agree()) << format_verdict(v) << "\n" << to_text(p);
    ++programs_;
  }

  // Eigen's value of the root at `i` and d root / d leaf 0 at `i`.
  std::pair<double, double> eigen_at(const Program& p, std::size_t i) {
    const Outcome o = eigen_->run(p, RunOptions{});
    EXPECT_EQ(o.status, Status::Ok) << o.message;
    if (o.status != Status::Ok) return {0, 0};
    return {o.root.values.at(i), o.grads.at(0).values.at(i)};
  }

  // Eigen's value at element `i` of `p`'s root is `eigen` (same()), as measured on
  // kEigenMeasuredOn; on another platform a different one is reported and the verdict must fit
  // it (platform_pins.h). Returns both outcomes, the reference's first, for the checks of the
  // reference's side.
  std::vector<Outcome> expect_pinned_value(const Program& p, std::size_t i, double eigen) {
    std::vector<Outcome> o = run(p);
    EXPECT_EQ(o[0].status, Status::Ok) << o[0].message;
    EXPECT_EQ(o[1].status, Status::Ok) << o[1].message;
    if (o[0].status != Status::Ok || o[1].status != Status::Ok) return o;
    const double got = o[1].root.values.at(i);
    if (same(got, eigen)) return o;
    std::string text = to_text(p);
    if (text.ends_with('\n')) text.pop_back();
    const std::string what = fmt::format("root [{}] of {} is {} (pinned {})", i, text, got, eigen);
    if (eigen_->platform() == kEigenMeasuredOn) {
      ADD_FAILURE() << what;
    } else {
      burnmark::testing::report_unpinned(eigen_->platform(), what);
      EXPECT_TRUE(burnmark::testing::verdict_fits_values(o[0], o[1])) << to_text(p);
    }
    return o;
  }

  // A special value placed at element 0 (packet body) and 8 (scalar tail) of `p` (body_and_tail
  // or a binary program laid out the same way): Eigen computes `eigen` there, the reference
  // computes something else, and the filler elements in between agree. `oracle_sees` says whether
  // compare() reports the difference (a zero's sign or a value below the tolerance it does not);
  // the gradient checked is leaf `leaf`'s.
  // The values were measured on kEigenMeasuredOn; on another platform (another vendor's
  // rsqrtps, a native build's packets) Eigen may give others, and then the verdict must fit
  // them (platform_pins.h) and the test says what it saw.
  void expect_pinned(const Program& p, const Pinned& eigen, bool oracle_sees = true,
                     std::size_t leaf = 0) {
    const std::vector<Outcome> o = run(p);
    ASSERT_EQ(o[0].status, Status::Ok) << o[0].message;
    ASSERT_EQ(o[1].status, Status::Ok) << o[1].message;
    const auto& root = o[1].root.values;
    const auto& grad = o[1].grads.at(leaf).values;
    const auto& want = o[0].root.values;
    const auto& want_grad = o[0].grads.at(leaf).values;
    // same() allows 1e-5: an ulp's difference from the reference (sqrt(4) = 1.9999999 through
    // Intel's rsqrt14) passes it when another vendor's approximation lands exactly.
    const bool differs = !(identical(want[0], root[0]) && identical(want[8], root[8]) &&
                           identical(want_grad[0], grad[0]) && identical(want_grad[8], grad[8]));
    const bool as_measured = same(root[0], eigen.body_value) && same(root[8], eigen.tail_value) &&
                             same(grad[0], eigen.body_grad) && same(grad[8], eigen.tail_grad) &&
                             differs;
    if (!as_measured && eigen_->platform() != kEigenMeasuredOn) {
      burnmark::testing::report_unpinned(
          eigen_->platform(),
          fmt::format("{}: body {} tail {}, gradient body {} tail {} (pinned {} {} {} {})",
                      to_text(p), root[0], root[8], grad[0], grad[8], eigen.body_value,
                      eigen.tail_value, eigen.body_grad, eigen.tail_grad));
      EXPECT_TRUE(burnmark::testing::verdict_fits_values(o[0], o[1])) << to_text(p);
      return;
    }
    EXPECT_EQ(compare(o, OracleOptions{}).agree(), !oracle_sees) << to_text(p);
    EXPECT_PRED2(same, root[0], eigen.body_value);
    EXPECT_PRED2(same, root[8], eigen.tail_value);
    EXPECT_PRED2(same, grad[0], eigen.body_grad);
    EXPECT_PRED2(same, grad[8], eigen.tail_grad);
    // The reference's answer differs from Eigen's in the body or in the tail, if only by an ulp.
    EXPECT_TRUE(differs) << "no longer differs: " << to_text(p);
    for (std::size_t i = 1; i < 8; ++i) {
      EXPECT_FALSE(values_diverge(want[i], root[i], kDefaultTolerance)) << i;
      EXPECT_FALSE(values_diverge(want_grad[i], grad[i], kDefaultTolerance)) << i;
    }
  }

  std::unique_ptr<Backend> ref_ = make_reference_backend();
  std::unique_ptr<Backend> eigen_;
  int programs_ = 0;
};

} // namespace burnmark::eigen_test
