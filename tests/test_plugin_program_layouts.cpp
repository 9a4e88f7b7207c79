// Plugins get the program's own leaf layouts (ABI v4, issue 33): a plugin whose ops all accept
// strided inputs sees each leaf as the program declares it (layout.h's strided_view: strides,
// storage offset, a fresh buffer whose unreached elements are NaN); one that does not sees
// contiguous row-major copies. The layout probe fixture shows what a plugin received; the
// reference and example plugins must stay bit-identical to the built-in reference in every
// layout kind and float dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/layout.h"
#include "burnmark/ir/text.h"
#include "burnmark/plugin/loader.h"
#include "burnmark/plugin/plugin.h"
#include "parsed_program.h"

using namespace burnmark;
using burnmark::test_support::parsed;

namespace {

std::string fixture(const char* name) {
  return std::string(BURNMARK_TEST_FIXTURE_DIR) + "/burnmark_" + name + ".so";
}

std::unique_ptr<Backend> load(const std::string& name,
                              PluginLeafLayout layout = PluginLeafLayout::Declared) {
  PluginLoadResult r = load_plugin_backend(name, PluginLoadOptions{layout});
  if (!r.ok()) ADD_FAILURE() << r.error();
  return r.ok() ? r.take() : nullptr;
}

std::int32_t abi_dtype_of(FloatDType d) {
  switch (d) {
  case FloatDType::F32: return BURNMARK_DTYPE_F32;
  case FloatDType::F64: return BURNMARK_DTYPE_F64;
  case FloatDType::BF16: return BURNMARK_DTYPE_BF16;
  case FloatDType::F16: return BURNMARK_DTYPE_F16;
  }
  return -1;
}

// Bit for bit, except that any NaN equals any NaN (C99 Annex F leaves payloads and signs free).
bool same(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_identical(const HostTensor& a, const HostTensor& b, const std::string& what,
                      bool bounds) {
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

void expect_identical(const Outcome& want, const Outcome& got, const std::string& what,
                      bool bounds) {
  ASSERT_EQ(want.status, got.status) << what << ": " << want.message << " / " << got.message;
  if (want.status == Status::Error) EXPECT_EQ(want.message, got.message) << what;
  if (want.status != Status::Ok) return;
  expect_identical(want.root, got.root, what + " root", bounds);
  ASSERT_EQ(want.grads.size(), got.grads.size()) << what;
  for (std::size_t i = 0; i < want.grads.size(); ++i)
    expect_identical(want.grads[i], got.grads[i], what + " grad " + std::to_string(i), bounds);
}

constexpr LayoutKind kKinds[] = {LayoutKind::Contiguous, LayoutKind::Permuted, LayoutKind::Slice,
                                 LayoutKind::Expanded, LayoutKind::Offset};

// A legal layout of kind `kind` for a leaf of shape s (parameters varied by `salt`), or
// contiguous when s admits none of that kind (permuted needs rank 2, the others rank 1).
LeafLayout layout_of_kind(LayoutKind kind, const Shape& s, unsigned salt) {
  LeafLayout l;
  const int rank = s.rank();
  switch (kind) {
  case LayoutKind::Contiguous: return l;
  case LayoutKind::Permuted:
    if (rank < 2) return l;
    for (int d = rank - 1; d >= 0; --d) // reversed: never the identity at rank >= 2
      l.dims.push_back(d);
    break;
  case LayoutKind::Slice:
    if (rank < 1) return l;
    l.dim = static_cast<int>(salt % static_cast<unsigned>(rank));
    l.step = 2 + static_cast<int>(salt % (kMaxLayoutStep - 1));
    break;
  case LayoutKind::Expanded:
    if (rank < 1) return l;
    l.dims = {static_cast<int>(salt % static_cast<unsigned>(rank))};
    break;
  case LayoutKind::Offset: l.offset = 1 + static_cast<int>(salt % kMaxLayoutOffset); break;
  }
  l.kind = kind;
  return check_layout(l, s).empty() ? l : LeafLayout{};
}

// `p` with every float leaf laid out as `kind` where its shape allows (an expanded leaf's values
// made equal along its expanded dim, as the layout requires); counts the leaves so laid out.
Program with_layouts(Program p, LayoutKind kind, unsigned salt, int& laid_out) {
  for (std::size_t k = 0; k < p.leaves.size(); ++k) {
    Leaf& leaf = p.leaves[k];
    if (leaf.dtype != DType::F32) continue;
    leaf.layout = layout_of_kind(kind, leaf.shape, salt + static_cast<unsigned>(k));
    if (leaf.layout.kind == LayoutKind::Expanded)
      leaf.data =
          expand_data(leaf.layout, leaf.shape, compact_data(leaf.layout, leaf.shape, leaf.data));
    laid_out += !leaf.layout.contiguous();
  }
  EXPECT_EQ(validate(p), "") << to_text(p);
  return p;
}

struct ProbeCase {
  const char* layout; // the text form's " layout=..." ("" for contiguous)
  const char* values; // leaf 0 (f32[2,3]): equal along dim 0 for expanded(0)
  double s0, s1, offset, nans;
};

// The layout the probe saw for leaf 0 (f32[2,3]). Expected by hand from layout.h: permuted(1,0)
// stores dim 1 outermost (strides 1, 2); slice(dim=1, step=2) views every 2nd column of a
// [2,6] buffer (6, 2), whose 11 elements up to the last one reached hold 5 gaps; slice(dim=0,
// step=2) every 2nd row of a [4,3] buffer (6, 1), 3 gaps in 9; expanded(0) stride 0 along dim 0
// over a 3-element buffer; offset(5) row-major from element 5, the 5 before it gaps.
const ProbeCase kProbeCases[] = {
    {"", "0, 1, 2, 3, 4, 5", 3, 1, 0, 0},
    {" layout=permuted(1,0)", "0, 1, 2, 3, 4, 5", 1, 2, 0, 0},
    {" layout=slice(dim=1, step=2)", "0, 1, 2, 3, 4, 5", 6, 2, 0, 5},
    {" layout=slice(dim=0, step=2)", "0, 1, 2, 3, 4, 5", 6, 1, 0, 3},
    {" layout=expanded(0)", "0, 1, 2, 0, 1, 2", 0, 1, 0, 0},
    {" layout=offset(5)", "0, 1, 2, 3, 4, 5", 3, 1, 5, 5},
};

Program probe_program(const ProbeCase& c, const char* op, FloatDType dtype) {
  return with_float_dtype(parsed(fmt::format("%0 = leaf f32[2,3]{} [{}]\n%1 = {} : f32[2,3]\n"
                                             "%2 = leaf f32[3,3] [0, 0, 0, 0, 0, 0, 0, 0, 0]\n"
                                             "%3 = add %2, %2 : f32[3,3]\nroot %3\n",
                                             c.layout, c.values, op)),
                          dtype);
}

} // namespace

// A plugin whose ops all accept strided inputs (the probe's add) gets leaf 0 in its declared
// layout, with the unreached elements NaN; one with an op that does not (the probe's neg) gets a
// contiguous row-major copy, NaN-free. The probe reads elements (0,0), (0,1), (1,0), (1,2)
// through the strides it was given: the leaf's values, whatever the layout.
TEST(PluginProgramLayouts, PluginReceivesTheDeclaredStridesAndOffset) {
  std::unique_ptr<Backend> probe = load(fixture("layout_probe"));
  ASSERT_TRUE(probe);
  for (FloatDType dtype : kFloatDTypes) {
    for (const ProbeCase& c : kProbeCases) {
      for (const char* op : {"add %0, %0", "neg %0"}) {
        const std::string what =
            fmt::format("{} layout '{}' {}", float_dtype_name(dtype), c.layout, op);
        const Outcome out = probe->run(probe_program(c, op, dtype), RunOptions{.gradients = false});
        ASSERT_EQ(out.status, Status::Ok) << what << ": " << out.message;
        const std::vector<double>& v = out.root.values;
        ASSERT_EQ(v.size(), 9u) << what;
        const bool strided = op[0] == 'a';
        EXPECT_EQ(v[0], strided ? c.s0 : 3) << what;
        EXPECT_EQ(v[1], strided ? c.s1 : 1) << what;
        EXPECT_EQ(v[2], strided ? c.offset : 0) << what;
        EXPECT_EQ(v[3], abi_dtype_of(dtype)) << what;
        const bool expanded = std::string_view(c.layout).find("expanded") != std::string::npos;
        EXPECT_EQ(v[4], 0) << what;
        EXPECT_EQ(v[5], 1) << what;
        EXPECT_EQ(v[6], expanded ? 0 : 3) << what;
        EXPECT_EQ(v[7], expanded ? 2 : 5) << what;
        EXPECT_EQ(v[8], strided ? c.nans : 0) << what;
      }
    }
  }
}

// The test-only override (PluginLoadOptions::leaf_layout) wins over the declared layout: a
// Contiguous override presents a slice leaf row-major, a Stepped one every element 2 apart from
// offset 3 (strides 6, 2: up to element 13, 8 NaN), whatever the program declares.
TEST(PluginProgramLayouts, TestOverrideWinsOverTheDeclaredLayout) {
  const Program p = probe_program(kProbeCases[2], "add %0, %0", FloatDType::F32);
  std::unique_ptr<Backend> contiguous = load(fixture("layout_probe"), PluginLeafLayout::Contiguous);
  std::unique_ptr<Backend> stepped = load(fixture("layout_probe"), PluginLeafLayout::Stepped);
  ASSERT_TRUE(contiguous && stepped);
  const Outcome c = contiguous->run(p, RunOptions{.gradients = false});
  const Outcome s = stepped->run(p, RunOptions{.gradients = false});
  ASSERT_EQ(c.status, Status::Ok) << c.message;
  ASSERT_EQ(s.status, Status::Ok) << s.message;
  EXPECT_EQ(std::vector<double>(c.root.values.begin(), c.root.values.begin() + 3),
            (std::vector<double>{3, 1, 0}));
  EXPECT_EQ(std::vector<double>(s.root.values.begin(), s.root.values.begin() + 3),
            (std::vector<double>{6, 2, 3}));
  EXPECT_EQ(c.root.values[8], 0); // no gaps
  EXPECT_EQ(s.root.values[8], 8); // the 3 before offset 3, then a gap after each of 5 elements
}

// Every layout kind, in every float dtype: generated programs (every op, gradients on and off)
// whose float leaves are all laid out as that kind run through the reference plugin, which
// gathers them through the strides it is given, bit-identical to the built-in reference.
TEST(PluginProgramLayouts, ReferencePluginIsBitIdenticalInEveryDeclaredLayout) {
  std::unique_ptr<Backend> builtin = make_reference_backend();
  std::unique_ptr<Backend> plugin = load("ref");
  ASSERT_TRUE(plugin);
  for (LayoutKind kind : kKinds) {
    int laid_out = 0, ok_with_gradients = 0;
    for (FloatDType dtype : kFloatDTypes) {
      std::mt19937 rng(33);
      for (int i = 0; i < 60; ++i) {
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(16 + rng() % 200));
        for (auto& b : bytes)
          b = static_cast<std::uint8_t>(rng());
        const Program p = with_float_dtype(
            with_layouts(generate(bytes, GeneratorOptions{}), kind, rng(), laid_out), dtype);
        const std::string what = fmt::format("{} {} #{}\n{}", layout_kind_name(kind),
                                             float_dtype_name(dtype), i, to_text(p));
        for (bool gradients : {true, false}) {
          const RunOptions o{.gradients = gradients};
          const Outcome want = builtin->run(p, o);
          expect_identical(want, plugin->run(p, o), what, true);
          if (HasFatalFailure()) return;
          ok_with_gradients += gradients && want.status == Status::Ok && !want.grads.empty();
        }
      }
    }
    // Guards against a vacuous pass: most leaves take the kind, most programs run.
    if (kind != LayoutKind::Contiguous) EXPECT_GT(laid_out, 4 * 60) << layout_kind_name(kind);
    EXPECT_GT(ok_with_gradients, 4 * 40) << layout_kind_name(kind);
  }
}

// The example plugin (plugin_walk.h gathers strided leaves) on its elementwise ops, leaves of
// rank 1 to 3 that broadcast, every layout kind and float dtype, with gradients.
TEST(PluginProgramLayouts, ExamplePluginIsBitIdenticalInEveryDeclaredLayout) {
  std::unique_ptr<Backend> builtin = make_reference_backend();
  std::unique_ptr<Backend> example = load("example");
  ASSERT_TRUE(example);
  const Shape shapes[] = {Shape{2, 3}, Shape{3}, Shape{2, 1}, Shape{4, 3}, Shape{2, 2, 3}};
  const char* binary[] = {"add", "sub", "mul"};
  const char* unary[] = {"neg", "relu", "exp"};
  for (LayoutKind kind : kKinds) {
    int laid_out = 0;
    for (FloatDType dtype : kFloatDTypes) {
      std::mt19937 rng(7);
      std::uniform_real_distribution<double> value(-2.0, 2.0);
      for (int i = 0; i < 80; ++i) {
        std::string text;
        std::vector<Shape> regs;
        const int leaves = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < leaves; ++k) {
          const Shape& shape = shapes[rng() % 5];
          text += fmt::format("%{} = leaf f32{} [", k, shape.to_string());
          for (std::int64_t e = 0; e < shape.numel(); ++e)
            text += fmt::format("{}{}", e ? ", " : "", static_cast<float>(value(rng)));
          text += "]\n";
          regs.push_back(shape);
        }
        const int ops = 1 + static_cast<int>(rng() % 6);
        for (int k = 0; k < ops; ++k) {
          const auto r = regs.size();
          const auto a = rng() % regs.size(), b = rng() % regs.size();
          const std::optional<Shape> out = broadcast(regs[a], regs[b]);
          if (rng() % 2 && out) {
            text += fmt::format("%{} = {} %{}, %{} : f32{}\n", r, binary[rng() % 3], a, b,
                                out->to_string());
            regs.push_back(*out);
          } else {
            text +=
                fmt::format("%{} = {} %{} : f32{}\n", r, unary[rng() % 3], a, regs[a].to_string());
            regs.push_back(regs[a]);
          }
        }
        text += fmt::format("root %{}\n", regs.size() - 1);
        const Program p =
            with_float_dtype(with_layouts(parsed(text), kind, rng(), laid_out), dtype);
        const std::string what =
            fmt::format("{} {}\n{}", layout_kind_name(kind), float_dtype_name(dtype), to_text(p));
        const RunOptions o{.gradients = true};
        const Outcome want = builtin->run(p, o);
        ASSERT_EQ(want.status, Status::Ok) << what << want.message;
        expect_identical(want, example->run(p, o), what, false);
        if (HasFatalFailure()) return;
      }
    }
    if (kind != LayoutKind::Contiguous) EXPECT_GT(laid_out, 4 * 80) << layout_kind_name(kind);
  }
}
