// Every branch of LibTorch's CPU kernel that docs/attribute-branches.md lists for a parametrised
// op is taken by generated programs: the op's attribute tables and the leaves the generator draws
// reach each side of every condition. The conditions are the kernels' own, evaluated in f32 on
// the operand values the reference computes for the op's statements.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/triage/rewrite.h"

using namespace burnmark;

namespace {

using Values = std::span<const float>;
using Pred = std::function<bool(const Attrs&, Values)>;

struct Branch {
  Op op;
  std::string name; // as in docs/attribute-branches.md
  Pred reached;
};

// Some element of the operand satisfies f(x, attrs).
template <class F> Pred any(F f) {
  return [f](const Attrs& a, Values xs) {
    for (float x : xs)
      if (f(x, a)) return true;
    return false;
  };
}
// The attributes alone decide (the op ran on some operand).
template <class F> Pred attr(F f) {
  return [f](const Attrs& a, Values xs) { return !xs.empty() && f(a); };
}

float f32(double v) {
  return static_cast<float>(v);
}
bool integral(double c) {
  return c == std::floor(c);
}
// The exponents pow_tensor_scalar dispatches to a fast path (Pow.cpp, PowKernel.cpp).
bool pow_fast(double c) {
  return c == 0 || c == 1 || c == 0.5 || c == -0.5 || c == -1 || c == 2 || c == 3 || c == -2;
}

// An aligned chunk of 16 (an AVX-512 vector of f32, two AVX2 ones) with every lane above 0: the
// vector body's all-positive shortcut of elu_kernel.
bool lane_all_positive(Values xs) {
  for (std::size_t b = 0; b + 16 <= xs.size(); b += 16) {
    bool all = true;
    for (std::size_t i = b; i < b + 16; ++i)
      all = all && xs[i] > 0;
    if (all) return true;
  }
  return false;
}

std::vector<Branch> branches() {
  std::vector<Branch> out;
  const auto add = [&](Op op, std::string name, Pred p) {
    out.push_back({op, std::move(name), std::move(p)});
  };
  // pow(x, c): Pow.cpp fills 1 / copies for 0 / 1; PowKernel.cpp: sqrt, rsqrt, reciprocal,
  // x*x, x*x*x, 1/(x*x), else std::pow (Sleef's pow in the vector body).
  for (double c : {0.0, 1.0, 0.5, -0.5, -1.0, 2.0, 3.0, -2.0})
    add(Op::Pow, "fast path c = " + std::to_string(c),
        attr([c](const Attrs& a) { return a.exponent == c; }));
  add(Op::Pow, "generic, non-integral c, x < 0 (NaN)", any([](float x, const Attrs& a) {
        return !pow_fast(a.exponent) && !integral(a.exponent) && x < 0;
      }));
  add(Op::Pow, "generic, non-integral c, x > 0", any([](float x, const Attrs& a) {
        return !pow_fast(a.exponent) && !integral(a.exponent) && x > 0;
      }));
  add(Op::Pow, "generic, even integral c, x < 0", any([](float x, const Attrs& a) {
        return !pow_fast(a.exponent) && integral(a.exponent) && std::fmod(a.exponent, 2.0) == 0 &&
               x < 0;
      }));
  add(Op::Pow, "generic, odd integral c, x < 0", any([](float x, const Attrs& a) {
        return !pow_fast(a.exponent) && integral(a.exponent) && std::fmod(a.exponent, 2.0) != 0 &&
               x < 0;
      }));
  add(Op::Pow, "generic, c < 0, x = -0 (pole)", any([](float x, const Attrs& a) {
        return !pow_fast(a.exponent) && a.exponent < 0 && x == 0 && std::signbit(x);
      }));
  add(Op::Pow, "generic, finite x, overflow", any([](float x, const Attrs& a) {
        return !pow_fast(a.exponent) && std::isfinite(x) && x != 0 &&
               std::isinf(std::pow(x, f32(a.exponent)));
      }));

  // softplus: x * beta > threshold ? x : log1p(exp(x * beta)) / beta (Activation.cpp).
  const auto t = [](float x, const Attrs& a) { return x * f32(a.beta); };
  add(Op::Softplus, "linear, beta > 0",
      any([t](float x, const Attrs& a) { return a.beta > 0 && t(x, a) > f32(a.threshold); }));
  add(Op::Softplus, "linear, beta < 0",
      any([t](float x, const Attrs& a) { return a.beta < 0 && t(x, a) > f32(a.threshold); }));
  add(Op::Softplus, "soft, exp finite", any([t](float x, const Attrs& a) {
        return !(t(x, a) > f32(a.threshold)) && std::isfinite(std::exp(t(x, a)));
      }));
  add(Op::Softplus, "soft, exp overflows", any([t](float x, const Attrs& a) {
        return std::isfinite(x) && !(t(x, a) > f32(a.threshold)) && std::isinf(std::exp(t(x, a)));
      }));
  add(Op::Softplus, "NaN", any([](float x, const Attrs&) { return std::isnan(x); }));

  // elu: x <= 0 ? (exp(x) - 1) * alpha : x; the vector body's shortcut when every lane is > 0.
  add(Op::Elu, "x > 0", any([](float x, const Attrs&) { return x > 0; }));
  add(Op::Elu, "x <= 0, alpha > 0",
      any([](float x, const Attrs& a) { return x <= 0 && a.alpha > 0; }));
  add(Op::Elu, "x <= 0, alpha = 0",
      any([](float x, const Attrs& a) { return x <= 0 && a.alpha == 0; }));
  add(Op::Elu, "x <= 0, alpha < 0",
      any([](float x, const Attrs& a) { return x <= 0 && a.alpha < 0; }));
  add(Op::Elu, "NaN", any([](float x, const Attrs&) { return std::isnan(x); }));
  add(Op::Elu, "vector all positive",
      [](const Attrs&, Values xs) { return lane_all_positive(xs); });

  // celu = elu(x, alpha, scale 1, input_scale 1 / alpha).
  const auto celu_arg = [](float x, const Attrs& a) { return x * f32(1.0 / a.alpha); };
  add(Op::Celu, "x > 0", any([](float x, const Attrs&) { return x > 0; }));
  add(Op::Celu, "x <= 0, alpha > 0",
      any([](float x, const Attrs& a) { return x <= 0 && a.alpha > 0; }));
  add(Op::Celu, "x <= 0, alpha < 0, exp finite", any([celu_arg](float x, const Attrs& a) {
        return x <= 0 && a.alpha < 0 && std::isfinite(std::exp(celu_arg(x, a)));
      }));
  add(Op::Celu, "x <= 0, alpha < 0, exp overflows", any([celu_arg](float x, const Attrs& a) {
        return x <= 0 && std::isfinite(x) && a.alpha < 0 && std::isinf(std::exp(celu_arg(x, a)));
      }));

  // leaky_relu: x > 0 ? x : x * slope.
  add(Op::LeakyRelu, "x > 0", any([](float x, const Attrs&) { return x > 0; }));
  add(Op::LeakyRelu, "x <= 0, slope = 0",
      any([](float x, const Attrs& a) { return x <= 0 && a.slope == 0; }));
  add(Op::LeakyRelu, "x <= 0, 0 < slope < 1",
      any([](float x, const Attrs& a) { return x <= 0 && a.slope > 0 && a.slope < 1; }));
  add(Op::LeakyRelu, "x <= 0, slope >= 1",
      any([](float x, const Attrs& a) { return x <= 0 && a.slope >= 1; }));
  add(Op::LeakyRelu, "x <= 0, slope < 0",
      any([](float x, const Attrs& a) { return x <= 0 && a.slope < 0; }));
  add(Op::LeakyRelu, "x = -inf, slope = 0",
      any([](float x, const Attrs& a) { return x == -INFINITY && a.slope == 0; }));

  // clamp and hardtanh: min(max(x, lo), hi); clamp_out fills NaN for a NaN bound; the
  // backward blocks at x <= lo or x >= hi.
  for (Op op : {Op::Clamp, Op::Hardtanh}) {
    add(op, "x < lo", any([](float x, const Attrs& a) { return x < f32(a.lo); }));
    add(op, "x > hi", any([](float x, const Attrs& a) { return x > f32(a.hi); }));
    add(op, "lo < x < hi",
        any([](float x, const Attrs& a) { return x > f32(a.lo) && x < f32(a.hi); }));
    add(op, "x at a bound",
        any([](float x, const Attrs& a) { return x == f32(a.lo) || x == f32(a.hi); }));
    add(op, "NaN", any([](float x, const Attrs&) { return std::isnan(x); }));
  }
  add(Op::Clamp, "lo > hi", attr([](const Attrs& a) { return a.lo > a.hi; }));
  add(Op::Clamp, "NaN bound",
      attr([](const Attrs& a) { return std::isnan(a.lo) || std::isnan(a.hi); }));
  add(Op::ClampMin, "x < lo", any([](float x, const Attrs& a) { return x < f32(a.lo); }));
  add(Op::ClampMin, "x > lo", any([](float x, const Attrs& a) { return x > f32(a.lo); }));
  add(Op::ClampMin, "x = lo", any([](float x, const Attrs& a) { return x == f32(a.lo); }));
  add(Op::ClampMin, "NaN bound", attr([](const Attrs& a) { return std::isnan(a.lo); }));
  add(Op::ClampMax, "x > hi", any([](float x, const Attrs& a) { return x > f32(a.hi); }));
  add(Op::ClampMax, "x < hi", any([](float x, const Attrs& a) { return x < f32(a.hi); }));
  add(Op::ClampMax, "x = hi", any([](float x, const Attrs& a) { return x == f32(a.hi); }));
  add(Op::ClampMax, "NaN bound", attr([](const Attrs& a) { return std::isnan(a.hi); }));

  // hardshrink: -lambd <= x <= lambd ? 0 : x (vector: (x < -lambd) | (x > lambd) masks x).
  add(Op::Hardshrink, "band",
      any([](float x, const Attrs& a) { return x >= -f32(a.lambd) && x <= f32(a.lambd); }));
  add(Op::Hardshrink, "x > lambd",
      any([](float x, const Attrs& a) { return x > f32(a.lambd) && a.lambd >= 0; }));
  add(Op::Hardshrink, "x < -lambd",
      any([](float x, const Attrs& a) { return x < -f32(a.lambd) && a.lambd >= 0; }));
  add(Op::Hardshrink, "x = ±lambd, lambd > 0", any([](float x, const Attrs& a) {
        return a.lambd > 0 && (x == f32(a.lambd) || x == -f32(a.lambd));
      }));
  add(Op::Hardshrink, "lambd < 0, both masks", any([](float x, const Attrs& a) {
        return a.lambd < 0 && x > f32(a.lambd) && x < -f32(a.lambd);
      }));
  add(Op::Hardshrink, "NaN", any([](float x, const Attrs&) { return std::isnan(x); }));
  // softshrink: x > lambd ? x - lambd : (x < -lambd ? x + lambd : 0).
  add(Op::Softshrink, "x > lambd", any([](float x, const Attrs& a) { return x > f32(a.lambd); }));
  add(Op::Softshrink, "x < -lambd", any([](float x, const Attrs& a) { return x < -f32(a.lambd); }));
  add(Op::Softshrink, "band, lambd > 0", any([](float x, const Attrs& a) {
        return a.lambd > 0 && x >= -f32(a.lambd) && x <= f32(a.lambd);
      }));
  add(Op::Softshrink, "lambd = 0, x = ±0",
      any([](float x, const Attrs& a) { return a.lambd == 0 && x == 0; }));
  add(Op::Softshrink, "NaN", any([](float x, const Attrs&) { return std::isnan(x); }));

  // logit: without eps (-1) log(x / (1 - x)), x == 1 ? inf; with eps x clamped to
  // [eps, 1 - eps] first (UnaryOpsKernel.cpp, LogitMKLKernel).
  const auto no_eps = [](const Attrs& a) { return a.variant == 0; };
  add(Op::Logit, "no eps, 0 < x < 1",
      any([no_eps](float x, const Attrs& a) { return no_eps(a) && x > 0 && x < 1; }));
  add(Op::Logit, "no eps, x outside [0, 1]",
      any([no_eps](float x, const Attrs& a) { return no_eps(a) && (x < 0 || x > 1); }));
  add(Op::Logit, "no eps, x = 1",
      any([no_eps](float x, const Attrs& a) { return no_eps(a) && x == 1; }));
  add(Op::Logit, "no eps, x = ±0",
      any([no_eps](float x, const Attrs& a) { return no_eps(a) && x == 0; }));
  add(Op::Logit, "eps, x < eps",
      any([no_eps](float x, const Attrs& a) { return !no_eps(a) && x < f32(a.eps); }));
  add(Op::Logit, "eps, x > 1 - eps", any([no_eps](float x, const Attrs& a) {
        return !no_eps(a) && !(x < f32(a.eps)) && x > 1 - f32(a.eps);
      }));
  add(Op::Logit, "eps, eps <= x <= 1 - eps", any([no_eps](float x, const Attrs& a) {
        return !no_eps(a) && a.eps < 0.5 && x >= f32(a.eps) && x <= 1 - f32(a.eps);
      }));
  add(Op::Logit, "eps = 0, x >= 1 (inf)",
      any([](float x, const Attrs& a) { return a.variant == 1 && a.eps == 0 && x >= 1; }));
  add(Op::Logit, "eps = 0.5 (lo = hi)",
      attr([](const Attrs& a) { return a.variant == 1 && a.eps == 0.5; }));
  add(Op::Logit, "NaN", any([](float x, const Attrs&) { return std::isnan(x); }));

  // gelu: erf form (approximate none) or tanh form, whose x^3 overflows beyond 6.98e12.
  add(Op::Gelu, "erf form", attr([](const Attrs& a) { return a.variant == 0; }));
  add(Op::Gelu, "tanh form", attr([](const Attrs& a) { return a.variant == 1; }));
  add(Op::Gelu, "tanh form, x^3 overflows", any([](float x, const Attrs& a) {
        return a.variant == 1 && std::isfinite(x) && std::isinf(x * x * x);
      }));

  // lerp: |weight| < 0.5 ? start + w (end - start) : end - (end - start) (1 - w).
  add(Op::Lerp, "|w| < 0.5", attr([](const Attrs& a) { return std::fabs(a.weight) < 0.5; }));
  add(Op::Lerp, "|w| >= 0.5, in [0, 1]",
      attr([](const Attrs& a) { return std::fabs(a.weight) >= 0.5 && a.weight <= 1; }));
  add(Op::Lerp, "w outside [0, 1]",
      attr([](const Attrs& a) { return a.weight < 0 || a.weight > 1; }));
  return out;
}

std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t len) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> out(len);
  for (auto& b : out)
    b = static_cast<std::uint8_t>(byte(rng));
  return out;
}

// The f32 values of register `r`: a leaf's data, else the reference's forward values of the
// program re-rooted there (empty when the reference errors).
std::vector<float> register_values(Backend& ref, const Program& p, Reg r) {
  std::vector<float> out;
  const Stmt& s = p.stmts[static_cast<std::size_t>(r)];
  if (s.kind == StmtKind::Leaf) {
    for (double v : p.leaves[static_cast<std::size_t>(s.leaf)].data)
      out.push_back(static_cast<float>(v));
    return out;
  }
  const Outcome o = run_backend(ref, reroot(p, r), RunOptions{false});
  if (o.status != Status::Ok) return out;
  for (double v : o.root.values)
    out.push_back(static_cast<float>(v));
  return out;
}

TEST(AttributeBranches, GeneratedProgramsReachEveryListedKernelBranch) {
  const std::vector<Branch> all = branches();
  std::set<Op> ops;
  for (const Branch& b : all)
    ops.insert(b.op);
  std::vector<bool> reached(all.size(), false);
  std::size_t left = all.size();

  const std::unique_ptr<Backend> ref = make_reference_backend();
  std::mt19937 rng(20250129);
  GeneratorOptions options; // f32, the fuzz targets' default rates
  constexpr int kPrograms = 4000;
  int n = 0;
  for (; n < kPrograms && left > 0; ++n) {
    const Program p = generate(random_bytes(rng, 512), options);
    std::map<Reg, std::vector<float>> cache;
    for (const Stmt& s : p.stmts) {
      if (s.kind != StmtKind::Op || !ops.contains(s.instr.op)) continue;
      const Reg x = s.instr.operands[0];
      if (!cache.contains(x)) cache[x] = register_values(*ref, p, x);
      const Values xs = cache[x];
      for (std::size_t i = 0; i < all.size(); ++i)
        if (!reached[i] && all[i].op == s.instr.op && all[i].reached(s.instr.attrs, xs)) {
          reached[i] = true;
          --left;
        }
    }
  }
  std::printf("%zu branches, all reached after %d programs\n", all.size(), n);
  for (std::size_t i = 0; i < all.size(); ++i)
    EXPECT_TRUE(reached[i]) << op_name(all[i].op) << ": " << all[i].name << " never reached in "
                            << kPrograms << " programs";
}

} // namespace
