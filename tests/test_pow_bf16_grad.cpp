// The reference's bound on pow's gradient in bf16: LibTorch evaluates grad * (c * x.pow(c - 1))
// as three kernels, each rounded to bf16, while a fused kernel (oneDNN's eltwise_pow backward)
// computes in f32 and rounds once, and an ideal one rounds the exact derivative once. All are
// correct, so the bound accepts each, and rejects a value no such kernel gives. Expected values
// are derived by hand (bf16 has 8 significant bits); the sweep rounds c x^(c-1), computed in long
// double, to bf16 with its own rounding below.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/registry.h"
#include "burnmark/ir/op_tables.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"

namespace burnmark {
namespace {

std::string program(double x, double c) {
  char text[256];
  std::snprintf(text, sizeof text,
                "dtype bf16\n%%0 = leaf bf16[1] [%.17g]\n%%1 = pow %%0, exponent=%.17g : "
                "bf16[1]\nroot %%1\n",
                x, c);
  return text;
}

Outcome run(Backend& b, const std::string& text) {
  const ParseResult parsed = parse_program(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error() << "\n" << text;
  return parsed.ok() ? b.run(parsed.program(), RunOptions{}) : Outcome{};
}

// The reference's gradient of leaf 0 and its bound.
struct Grad {
  double v, e;
};
Grad reference_gradient(double x, double c) {
  const Outcome out = run(*make_reference_backend(), program(x, c));
  EXPECT_EQ(out.status, Status::Ok) << out.message;
  if (out.grads.empty() || out.grads[0].error_bound.empty()) return {NAN, NAN};
  return {out.grads[0].values.at(0), out.grads[0].error_bound.at(0)};
}

bool accepted(Grad ref, double value) {
  return !values_diverge(ref.v, value, kDefaultTolerance, ref.e);
}

// Round to nearest, ties to even, at 8 significant bits (bf16's normal range).
double to_bf16(long double v) {
  int e = 0;
  const long double m = std::frexp(v, &e); // v = m 2^e, 0.5 <= |m| < 1
  const long double scaled = std::ldexp(m, 8);
  const long double r = std::nearbyint(scaled); // FE_TONEAREST: ties to even
  return static_cast<double>(std::ldexp(r, e - 8));
}

// pow(1.5, 1.5)'. Exact: 1.5 sqrt(1.5) = 1.837117307..., 235.15 steps of 2^-7: rounded once,
// 235/128 = 1.8359375. LibTorch's kernels: sqrt(1.5) = 1.22474487 -> 157/128 = 1.2265625; times
// 1.5 = 1.83984375 = 235.5/128, a tie -> 236/128 = 1.84375. The next values out, 234/128 and
// 237/128... are what neither gives; 234/128 is two steps below LibTorch's.
TEST(PowBf16Gradient, OnceRoundedAndPerKernelBothAccepted) {
  const Grad g = reference_gradient(1.5, 1.5);
  EXPECT_EQ(g.v, 1.84375); // LibTorch's sequence, the reference's own value
  EXPECT_TRUE(accepted(g, 1.8359375)) << g.e;
  EXPECT_TRUE(accepted(g, 1.84375));
  EXPECT_FALSE(accepted(g, 234.0 / 128)) << g.e;
  EXPECT_FALSE(accepted(g, 238.0 / 128)) << g.e;
}

// pow(x, 3)' at x = -0.32617188 = -167/512. Exact: 3 x^2 = 3 * 27889 / 262144 = 0.319164276,
// 163.41 steps of 2^-9: rounded once, 163/512 = 0.318359375. LibTorch's kernels: x * x =
// 0.106388092 -> 218 steps of 2^-11 = 0.1064453125; times 3 = 0.3193359375 = 163.5/512, a tie ->
// 164/512 = 0.3203125.
TEST(PowBf16Gradient, CubeOnceRoundedAccepted) {
  const Grad g = reference_gradient(-0.32617188, 3);
  EXPECT_EQ(g.v, 0.3203125);
  EXPECT_TRUE(accepted(g, 0.318359375)) << g.e;
  EXPECT_FALSE(accepted(g, 162.0 / 512)) << g.e;
  EXPECT_FALSE(accepted(g, 166.0 / 512)) << g.e;
}

// Every third bf16 base in [0.25, 4) (and its negative, for the integral exponents): the
// correctly rounded derivative is accepted, and where x^(c - 1) is one correctly rounded step
// the bound stays within one bf16 step of the farther of the two roundings (per kernel, once).
TEST(PowBf16Gradient, CorrectlyRoundedDerivativeAlwaysAccepted) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  int checked = 0;
  for (double c : kPowExponents) {
    if (c == 0) continue;
    const bool integral = c == std::floor(c);
    for (int e = -2; e < 2; ++e) {
      for (int m = 128; m < 256; m += 3) {
        for (double sign : {1.0, -1.0}) {
          if (sign < 0 && !integral) continue;
          const double x = sign * std::ldexp(m, e - 7);
          const long double exact =
              static_cast<long double>(c) * std::pow(static_cast<long double>(x), c - 1);
          const double want = to_bf16(exact);
          const Grad g = reference_gradient(x, c);
          SCOPED_TRACE("x = " + std::to_string(x) + ", c = " + std::to_string(c));
          ASSERT_TRUE(std::isfinite(g.e));
          EXPECT_TRUE(accepted(g, want)) << "reference " << g.v << " +- " << g.e;
          // c - 1 through a single correctly rounded step (copy, sqrt, x * x): the bound is the
          // three roundings only. Elsewhere it is wider for reasons of its own: a generic pow
          // (c - 1 in -4, -3, -2.5, -1.5) keeps kTranscendentalUlps, and a fast path that is
          // itself a one_kernel (x * x * x, 1 / (x * x), 1 / sqrt(x)) is already a hull whose
          // inexactness the next steps round with kExactUlps each.
          const double step = std::ldexp(1.0, std::ilogb(want) - 7);
          if (c == 1.5 || c == 2 || c == 3)
            EXPECT_LE(g.e, std::fabs(g.v - want) + step) << "reference " << g.v;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// The two programs of the oneDNN bf16 campaign: the oneDNN plugin (one rounding) and LibTorch
// (three) both agree with the reference.
TEST(PowBf16Gradient, OnednnAndLibTorchAgree) {
  BackendsResult made = make_backends("ref,libtorch,onednn", RegistryOptions{});
  if (!made.ok()) GTEST_SKIP() << made.error();
  std::vector<std::unique_ptr<Backend>> backends = made.take();
  for (const auto& [x, c] : {std::pair{1.5, 1.5}, std::pair{-0.32617188, 3.0}}) {
    const std::string text = program(x, c);
    std::vector<Outcome> outcomes;
    for (auto& b : backends)
      outcomes.push_back(run(*b, text));
    for (const Outcome& o : outcomes)
      ASSERT_EQ(o.status, Status::Ok) << o.message;
    // The plugin's value is the once-rounded one: it fuses the formula.
    EXPECT_EQ(outcomes[2].grads.at(0).values.at(0), c == 3 ? 0.318359375 : 1.8359375);
    const Verdict v = compare(outcomes, OracleOptions{});
    EXPECT_EQ(v.compared, 2u);
    EXPECT_TRUE(v.agree()) << format_verdict(v) << "\n" << text;
  }
}

} // namespace
} // namespace burnmark
