// Plugin ABI v4: dtypes, strided leaves, per-op declarations, forward mode and H·v across the
// boundary. The example and reference plugins must match the built-in reference bit for bit in
// f32, bf16, f16 and f64, with leaves contiguous and strided; a v3 plugin is refused; an op a
// plugin declares for f32 only is unsupported (never a divergence) in the other dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "burnmark/plugin/loader.h"
#include "burnmark/plugin/plugin.h"
#include "burnmark/plugin/plugin_walk.h"

using namespace burnmark;

namespace {

const std::string kFixtures = BURNMARK_TEST_FIXTURE_DIR;
std::string fixture(const char* name) {
  return kFixtures + "/burnmark_" + name + ".so";
}

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) ADD_FAILURE() << r.error() << "\n" << text;
  return r.ok() ? r.program() : Program{};
}

std::unique_ptr<Backend> load(const std::string& name, PluginLeafLayout layout) {
  PluginLoadResult r = load_plugin_backend(name, PluginLoadOptions{layout});
  if (!r.ok()) ADD_FAILURE() << r.error();
  return r.ok() ? r.take() : nullptr;
}

constexpr PluginLeafLayout kLayouts[] = {PluginLeafLayout::Contiguous, PluginLeafLayout::Permuted,
                                         PluginLeafLayout::Stepped,
                                         PluginLeafLayout::PermutedStepped};
const char* layout_name(PluginLeafLayout l) {
  switch (l) {
  case PluginLeafLayout::Declared: return "declared";
  case PluginLeafLayout::Contiguous: return "contiguous";
  case PluginLeafLayout::Permuted: return "permuted";
  case PluginLeafLayout::Stepped: return "stepped";
  case PluginLeafLayout::PermutedStepped: return "permuted+stepped";
  }
  return "?";
}

// Bit for bit, except that any NaN equals any NaN (payloads and signs of NaN are not part of a
// result: C99 Annex F leaves them free).
bool same(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_identical(const HostTensor& a, const HostTensor& b, const std::string& what,
                      bool bounds = true) {
  ASSERT_EQ(a.shape.to_string(), b.shape.to_string()) << what;
  ASSERT_EQ(a.values.size(), b.values.size()) << what;
  for (std::size_t i = 0; i < a.values.size(); ++i)
    ASSERT_TRUE(same(a.values[i], b.values[i]))
        << what << "[" << i << "]: " << a.values[i] << " vs " << b.values[i];
  if (!bounds) return;
  ASSERT_EQ(a.error_bound.size(), b.error_bound.size()) << what;
  for (std::size_t i = 0; i < a.error_bound.size(); ++i)
    ASSERT_TRUE(same(a.error_bound[i], b.error_bound[i])) << what << " bound[" << i << "]";
}

// `bounds`: compare error bounds too (the reference plugin passes them on; the example has none).
void expect_identical(const Outcome& want, const Outcome& got, const std::string& what,
                      bool bounds) {
  ASSERT_EQ(want.status, got.status) << what << ": " << want.message << " / " << got.message;
  if (want.status == Status::Error) EXPECT_EQ(want.message, got.message) << what;
  if (want.status != Status::Ok) return;
  expect_identical(want.root, got.root, what + " root", bounds);
  ASSERT_EQ(want.grads.size(), got.grads.size()) << what;
  for (std::size_t i = 0; i < want.grads.size(); ++i)
    expect_identical(want.grads[i], got.grads[i], what + " grad " + std::to_string(i), bounds);
  expect_identical(want.tangent, got.tangent, what + " tangent", false);
  ASSERT_EQ(want.hvp.size(), got.hvp.size()) << what;
  for (std::size_t i = 0; i < want.hvp.size(); ++i)
    expect_identical(want.hvp[i], got.hvp[i], what + " hvp " + std::to_string(i), false);
}

// Random programs over the example plugin's ops (add, sub, mul, neg, relu, exp) with leaves of
// rank 2 and 3 (so permuted layouts differ from row-major), shapes that broadcast, values in
// [-2, 2] that with_float_dtype rounds to each dtype.
Program random_elementwise_program(std::mt19937& rng) {
  const Shape shapes[] = {Shape{2, 3}, Shape{3}, Shape{2, 1}, Shape{1, 3}, Shape{2, 2, 3}};
  std::uniform_real_distribution<double> value(-2.0, 2.0);
  std::string text;
  std::vector<Shape> regs;
  const int leaves = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < leaves; ++i) {
    const Shape& shape = shapes[rng() % 5];
    text += fmt::format("%{} = leaf f32{} [", i, shape.to_string());
    for (std::int64_t e = 0; e < shape.numel(); ++e)
      text += fmt::format("{}{}", e ? ", " : "", static_cast<float>(value(rng)));
    text += "]\n";
    regs.push_back(shape);
  }
  const char* binary[] = {"add", "sub", "mul"};
  const char* unary[] = {"neg", "relu", "exp"};
  const int ops = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < ops; ++i) {
    const auto r = regs.size();
    const auto a = rng() % regs.size(), b = rng() % regs.size();
    if (rng() % 2) {
      const Shape out = *broadcast(regs[a], regs[b]);
      text +=
          fmt::format("%{} = {} %{}, %{} : f32{}\n", r, binary[rng() % 3], a, b, out.to_string());
      regs.push_back(out);
    } else {
      text += fmt::format("%{} = {} %{} : f32{}\n", r, unary[rng() % 3], a, regs[a].to_string());
      regs.push_back(regs[a]);
    }
  }
  text += fmt::format("root %{}\n", regs.size() - 1);
  return parse(text);
}

} // namespace

// The 16-bit encodings plugins and host share (plugin_walk.h), at values derived by hand from
// the formats: binary16 has 11 significand bits, exponents -14..15; bfloat16 has 8 bits and
// float32's exponents.
TEST(PluginAbiV4, HalfAndBfloat16EncodingsRoundToNearestEven) {
  using namespace burnmark::plugin;
  EXPECT_EQ(double_to_half(1.0), 0x3c00);
  EXPECT_EQ(double_to_half(-2.0), 0xc000);
  EXPECT_EQ(double_to_half(65504.0), 0x7bff);
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);       // the tie above the largest finite: inf
  EXPECT_EQ(double_to_half(0x1p-24), 0x0001);       // smallest subnormal
  EXPECT_EQ(double_to_half(0x1p-25), 0x0000);       // half of it: tie to even, 0
  EXPECT_EQ(double_to_half(1.0 + 0x1p-11), 0x3c00); // tie between 1 and 1 + 2^-10: even
  EXPECT_EQ(double_to_half(1.0 + 0x3p-11), 0x3c02); // tie between odd and even: even
  EXPECT_EQ(double_to_half(-0.0), 0x8000);
  EXPECT_EQ(half_to_double(0x7c00), INFINITY);
  EXPECT_TRUE(std::isnan(half_to_double(double_to_half(NAN))));
  EXPECT_EQ(half_to_double(0x03ff), 1023 * 0x1p-24); // largest subnormal
  EXPECT_EQ(double_to_bf16(1.0), 0x3f80);
  EXPECT_EQ(double_to_bf16(1.0 + 0x1p-8), 0x3f80);           // tie: even
  EXPECT_EQ(double_to_bf16(1.0 + 0x1p-8 + 0x1p-30), 0x3f81); // just past the tie: rounded
                                                             // once, not through f32
  EXPECT_EQ(bf16_to_double(0xc040), -3.0);
  // Every encoding decodes to itself: the 65536 binary16 and bfloat16 bit patterns (NaNs aside).
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double h = half_to_double(bits), f = bf16_to_double(bits);
    if (!std::isnan(h)) ASSERT_EQ(double_to_half(h), bits) << b;
    if (!std::isnan(f)) ASSERT_EQ(double_to_bf16(f), bits) << b;
  }
}

TEST(PluginAbiV4, V3PluginIsRefusedNamingBothVersions) {
  PluginLoadResult r = load_plugin_backend(fixture("v3_plugin"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("speaks plugin ABI version 3, this BurnMark speaks version 4"),
            std::string::npos)
      << r.error();
}

// The host lays leaf 0 (f32[2,3], values 0..5) out as asked, but only for a program whose ops
// all accept strided inputs (add does, neg does not). Expected strides by hand: row-major
// (3, 1); dims reversed (1, 2); every element 2 apart from offset 3 (6, 2) and (2, 4). The probe
// returns its root strided (every other element from offset 1, -1 in the gaps), so these values
// also show the host reads a strided result through its strides and offset.
TEST(PluginAbiV4, LeavesArePresentedStridedOnlyToOpsThatAcceptIt) {
  struct Case {
    PluginLeafLayout layout;
    double s0, s1, offset;
  };
  const Case cases[] = {{PluginLeafLayout::Contiguous, 3, 1, 0},
                        {PluginLeafLayout::Permuted, 1, 2, 0},
                        {PluginLeafLayout::Stepped, 6, 2, 3},
                        {PluginLeafLayout::PermutedStepped, 2, 4, 3}};
  for (FloatDType dtype : {FloatDType::F32, FloatDType::BF16, FloatDType::F64}) {
    for (const Case& c : cases) {
      std::unique_ptr<Backend> probe = load(fixture("layout_probe"), c.layout);
      ASSERT_TRUE(probe);
      const std::string what = fmt::format("{} {}", float_dtype_name(dtype), layout_name(c.layout));
      for (const char* op : {"add %0, %0", "neg %0"}) {
        const Program p = with_float_dtype(
            parse(fmt::format("%0 = leaf f32[2,3] [0, 1, 2, 3, 4, 5]\n%1 = {} : f32[2,3]\n"
                              "%2 = leaf f32[2,2,2] [0, 0, 0, 0, 0, 0, 0, 0]\n"
                              "%3 = add %2, %2 : f32[2,2,2]\nroot %3\n",
                              op)),
            dtype);
        const Outcome out = probe->run(p, RunOptions{.gradients = false});
        ASSERT_EQ(out.status, Status::Ok) << what << ": " << out.message;
        const std::vector<double>& v = out.root.values;
        const bool strided = std::string_view(op).starts_with("add");
        EXPECT_EQ(v[0], strided ? c.s0 : 3) << what << " " << op;
        EXPECT_EQ(v[1], strided ? c.s1 : 1) << what << " " << op;
        EXPECT_EQ(v[2], strided ? c.offset : 0) << what << " " << op;
        EXPECT_EQ(v[3], dtype == FloatDType::F32    ? BURNMARK_DTYPE_F32
                        : dtype == FloatDType::BF16 ? BURNMARK_DTYPE_BF16
                                                    : BURNMARK_DTYPE_F64)
            << what;
        EXPECT_EQ(std::count(v.begin(), v.end(), -1.0), 0) << what << ": a gap was read";
        // Elements (0,0), (0,1), (1,0), (1,2) of the row-major values 0..5.
        EXPECT_EQ(v[4], 0) << what << " " << op;
        EXPECT_EQ(v[5], 1) << what << " " << op;
        EXPECT_EQ(v[6], 3) << what << " " << op;
        EXPECT_EQ(v[7], 5) << what << " " << op;
      }
    }
  }
}

// bad_result declares its ops for f32 only: in the other dtypes the host never calls it and
// reports the program unsupported, naming the op, the dtype and what the plugin declared.
TEST(PluginAbiV4, F32OnlyOpIsUnsupportedInOtherDtypes) {
  std::unique_ptr<Backend> backend = load(fixture("bad_result"), PluginLeafLayout::Contiguous);
  ASSERT_TRUE(backend);
  void* self = dlopen(fixture("bad_result").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(self, nullptr);
  const int* runs = static_cast<const int*>(dlsym(self, "burnmark_fixture_runs"));
  ASSERT_NE(runs, nullptr);
  const int before = *runs;
  const Program p = parse("%0 = leaf f32[2] [1, 2]\n%1 = mul %0, %0 : f32[2]\nroot %1\n");
  for (FloatDType dtype : {FloatDType::BF16, FloatDType::F16, FloatDType::F64}) {
    const Outcome out = backend->run(with_float_dtype(p, dtype), RunOptions{});
    EXPECT_EQ(out.status, Status::Unsupported) << out.message;
    EXPECT_EQ(out.message, fmt::format("mul (op id 2) in {}: the plugin declares it for f32",
                                       float_dtype_name(dtype)));
  }
  EXPECT_EQ(*runs, before);
  dlclose(self);
}

TEST(PluginAbiV4, ForwardModeAndHvpAreUnsupportedWithoutEntryPoints) {
  std::unique_ptr<Backend> example = load("example", PluginLeafLayout::Contiguous);
  ASSERT_TRUE(example);
  const Program p = parse("%0 = leaf f32[2] [1, 2]\n%1 = exp %0 : f32[2]\nroot %1\n");
  Outcome out = example->run(p, RunOptions{.tangents = true});
  EXPECT_EQ(out.status, Status::Unsupported);
  EXPECT_EQ(out.message, "forward-mode AD (the plugin has no run_jvp)");
  out = example->run(p, RunOptions{.hessian = true});
  EXPECT_EQ(out.status, Status::Unsupported);
  EXPECT_EQ(out.message, "second-order AD (the plugin has no run_hvp)");
}

TEST(PluginAbiV4, ExamplePluginIsBitIdenticalToTheReferenceInEveryDtypeAndLayout) {
  std::unique_ptr<Backend> ref = make_reference_backend();
  int compared = 0;
  for (PluginLeafLayout layout : kLayouts) {
    std::unique_ptr<Backend> example = load("example", layout);
    ASSERT_TRUE(example);
    for (FloatDType dtype : kFloatDTypes) {
      std::mt19937 rng(11);
      for (int i = 0; i < 150; ++i) {
        const Program p = with_float_dtype(random_elementwise_program(rng), dtype);
        const std::string what =
            fmt::format("{} {}\n{}", float_dtype_name(dtype), layout_name(layout), to_text(p));
        const Outcome want = ref->run(p, RunOptions{});
        ASSERT_EQ(want.status, Status::Ok) << want.message;
        expect_identical(want, example->run(p, RunOptions{}), what, false);
        if (HasFatalFailure()) return;
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 4 * 4 * 150);
}

TEST(PluginAbiV4, ReferencePluginIsBitIdenticalInEveryDtypeAndLayout) {
  std::unique_ptr<Backend> builtin = make_reference_backend();
  int ok_with_gradients = 0;
  for (PluginLeafLayout layout : kLayouts) {
    std::unique_ptr<Backend> plugin = load("ref", layout);
    ASSERT_TRUE(plugin);
    for (FloatDType dtype : kFloatDTypes) {
      std::mt19937 rng(20261206);
      GeneratorOptions options;
      for (int i = 0; i < 150; ++i) {
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(16 + rng() % 240));
        for (auto& b : bytes)
          b = static_cast<std::uint8_t>(rng());
        const Program p = with_float_dtype(generate(bytes, options), dtype);
        const std::string what = fmt::format("{} {} #{}\n{}", float_dtype_name(dtype),
                                             layout_name(layout), i, to_text(p));
        for (bool gradients : {true, false}) {
          const RunOptions o{.gradients = gradients};
          const Outcome a = builtin->run(p, o);
          expect_identical(a, plugin->run(p, o), what, true);
          if (HasFatalFailure()) return;
          ok_with_gradients += gradients && a.status == Status::Ok && !a.grads.empty();
        }
      }
    }
  }
  // Guards against a vacuous pass (every program erroring identically in both forms).
  EXPECT_GT(ok_with_gradients, 4 * 4 * 100);
}

// Forward mode and H·v through run_jvp / run_hvp: the reference plugin against the built-in
// reference, both differentiating along BurnMark's leaf_tangent.
TEST(PluginAbiV4, ReferencePluginForwardModeAndHvpAreBitIdentical) {
  std::unique_ptr<Backend> builtin = make_reference_backend();
  int ok = 0;
  for (PluginLeafLayout layout : {PluginLeafLayout::Contiguous, PluginLeafLayout::Stepped}) {
    std::unique_ptr<Backend> plugin = load("ref", layout);
    ASSERT_TRUE(plugin);
    for (FloatDType dtype : kFloatDTypes) {
      std::mt19937 rng(5);
      for (int i = 0; i < 60; ++i) {
        const Program p = with_float_dtype(random_elementwise_program(rng), dtype);
        const std::string what =
            fmt::format("{} {}\n{}", float_dtype_name(dtype), layout_name(layout), to_text(p));
        for (const RunOptions o : {RunOptions{.tangents = true}, RunOptions{.hessian = true},
                                   RunOptions{.tangents = true, .hessian = true}}) {
          const Outcome a = builtin->run(p, o);
          expect_identical(a, plugin->run(p, o), what, true);
          if (HasFatalFailure()) return;
          // The reference's second-order rules are for f32 and f64 only (their bounds model
          // those): there both sides say unsupported; everything else must run.
          const bool half = dtype == FloatDType::BF16 || dtype == FloatDType::F16;
          EXPECT_EQ(a.status, o.hessian && half ? Status::Unsupported : Status::Ok)
              << what << a.message;
          ok += a.status == Status::Ok;
        }
      }
    }
  }
  // Per layout: three option sets in f32 and f64, forward mode alone in bf16 and f16.
  EXPECT_EQ(ok, 2 * 60 * (3 + 3 + 1 + 1));
}
