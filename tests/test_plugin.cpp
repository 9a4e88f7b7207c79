// The plugin ABI end to end: the loader's error messages, BURNMARK_PLUGIN_PATH lookup, the
// host's validation of what a plugin returns, the example plugin, and the reference built in
// versus the reference as a plugin (bit for bit).
#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>
#include <string_view>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "burnmark/ir/text.h"
#include "burnmark/plugin/loader.h"
#include "burnmark/plugin/plugin.h"

#ifdef BURNMARK_TEST_HAVE_REF
#include "burnmark/backends/builtin.h"
#endif
#ifdef BURNMARK_TEST_HAVE_GEN
#include "burnmark/gen/generator.h"
#endif

#include "scratch_dir.h"

extern "C" BurnmarkPluginEntryFn burnmark_plugin_header_c_entry(void);

using namespace burnmark;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = BURNMARK_TEST_FIXTURE_DIR;

std::string fixture(const char* name) {
  return kFixtures + "/burnmark_" + name + ".so";
}

std::string load_error(const std::string& name_or_path) {
  PluginLoadResult r = load_plugin_backend(name_or_path);
  EXPECT_FALSE(r.ok()) << name_or_path << " loaded but should not have";
  return r.ok() ? std::string() : r.error();
}

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) ADD_FAILURE() << r.error() << "\n" << text;
  return r.ok() ? r.program() : Program{};
}

// A fresh scratch directory of its own (scratch_dir.h removes them all when the test exits).
struct TempDir {
  static inline int made = 0;
  fs::path path = burnmark::testing::scratch_dir("plugin-" + std::to_string(made++));
};

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
    const char* o = std::getenv(name.c_str());
    had = o != nullptr;
    if (had) old = o;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had)
      ::setenv(name.c_str(), old.c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

constexpr const char* kElementwiseProgram = R"(# burnmark program v1
%0 = leaf f32[2,3] [0.5, -1, 2, 0, -0.25, 1.5]
%1 = leaf f32[3] [1, -2, 0.5]
%2 = leaf f32[2,1] [3, -1]
%3 = mul %0, %1 : f32[2,3]
%4 = alias %3 : f32[2,3]
%5 = add %4, %2 : f32[2,3]
%6 = relu %5 : f32[2,3]
%7 = exp %0 : f32[2,3]
%8 = sub %6, %7 : f32[2,3]
%9 = mul %8, %8 : f32[2,3]
%10 = neg %9 : f32[2,3]
root %10
)";

// The same program computed directly in double, with hand-derived gradients, so the example
// plugin is checked against something independent of every backend.
struct Expected {
  std::vector<double> root, g0, g1, g2;
};
Expected expected_elementwise() {
  const double x0[6] = {0.5, -1, 2, 0, -0.25, 1.5}, x1[3] = {1, -2, 0.5}, x2[2] = {3, -1};
  Expected e;
  e.root.assign(6, 0);
  e.g0.assign(6, 0);
  e.g1.assign(3, 0);
  e.g2.assign(2, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      const int k = i * 3 + j;
      const double m = x0[k] * x1[j], a = m + x2[i], r = a > 0 ? a : 0, ex = std::exp(x0[k]),
                   d = r - ex;
      e.root[static_cast<std::size_t>(k)] = -(d * d);
      const double gd = -2 * d;           // d(root)/d(d)
      const double ga = a > 0 ? gd : 0.0; // through relu
      e.g0[static_cast<std::size_t>(k)] = ga * x1[j] - gd * ex;
      e.g1[static_cast<std::size_t>(j)] += ga * x0[k];
      e.g2[static_cast<std::size_t>(i)] += ga;
    }
  return e;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4 * std::max(1.0, std::fabs(want[i])))
        << what << "[" << i << "]";
}

} // namespace

TEST(PluginHeader, CompilesAsC) {
  EXPECT_NE(burnmark_plugin_header_c_entry(), nullptr);
}

TEST(PluginLoader, NonexistentPath) {
  const std::string err = load_error("/nonexistent/dir/burnmark_nothing.so");
  EXPECT_NE(err.find("/nonexistent/dir/burnmark_nothing.so"), std::string::npos) << err;
  EXPECT_NE(err.find("no such file"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

TEST(PluginLoader, UnknownNameListsWhereItLooked) {
  TempDir dir;
  ScopedEnv env("BURNMARK_PLUGIN_PATH", dir.path.string() + ":/also/here");
  const std::string err = load_error("no_such_plugin");
  EXPECT_NE(err.find("'no_such_plugin' not found"), std::string::npos) << err;
  EXPECT_NE(err.find((dir.path / "burnmark_no_such_plugin.so").string()), std::string::npos) << err;
  EXPECT_NE(err.find("/also/here/libburnmark_no_such_plugin.so"), std::string::npos) << err;
  EXPECT_NE(err.find(std::string(BURNMARK_TEST_PLUGIN_DIR) + "/burnmark_no_such_plugin.so"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("BURNMARK_PLUGIN_PATH"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

TEST(PluginLoader, NotASharedObject) {
  TempDir dir;
  const fs::path fake = dir.path / "burnmark_fake.so";
  std::ofstream(fake) << "this is a text file, not an ELF object\n";
  const std::string err = load_error(fake.string());
  EXPECT_NE(err.find("cannot be loaded"), std::string::npos) << err;
  // glibc's dlerror text for a non-ELF file.
  EXPECT_TRUE(err.find("invalid ELF header") != std::string::npos ||
              err.find("file too short") != std::string::npos)
      << err;
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
}

TEST(PluginLoader, MissingEntrySymbol) {
  const std::string err = load_error(fixture("no_entry"));
  EXPECT_NE(err.find("not a BurnMark plugin"), std::string::npos) << err;
  EXPECT_NE(err.find("burnmark_plugin_entry"), std::string::npos) << err;
  EXPECT_NE(err.find(fixture("no_entry")), std::string::npos) << err;
}

TEST(PluginLoader, AbiVersionMismatchNamesBothVersions) {
  const std::string err = load_error(fixture("wrong_version"));
  // The fixture claims the version after the host's.
  const std::string expected =
      "speaks plugin ABI version " + std::to_string(BURNMARK_PLUGIN_ABI_VERSION + 1) +
      ", this BurnMark speaks version " + std::to_string(BURNMARK_PLUGIN_ABI_VERSION);
  EXPECT_NE(err.find(expected), std::string::npos) << err;
}

TEST(PluginLoader, EntryReturningNull) {
  const std::string err = load_error(fixture("null_entry"));
  EXPECT_NE(err.find("refused to load"), std::string::npos) << err;
  EXPECT_NE(err.find("returned null"), std::string::npos) << err;
}

TEST(PluginLoader, FindsPluginByNameInPluginPath) {
  TempDir dir;
  fs::copy_file(fixture("bad_result"), dir.path / "burnmark_renamed.so");
  ScopedEnv env("BURNMARK_PLUGIN_PATH", "/nonexistent:" + dir.path.string());
  PluginLoadResult r = load_plugin_backend("renamed");
  ASSERT_TRUE(r.ok()) << r.error();
  // The backend is named by the plugin's table, not by its file.
  EXPECT_EQ(r.take()->name(), "bad_result");
}

// The host never trusts a plugin's result: each malformed result becomes an Error outcome with
// a message, and every result is released exactly once.
TEST(PluginBackend, ValidatesWhatThePluginReturns) {
  PluginLoadResult r = load_plugin_backend(fixture("bad_result"));
  ASSERT_TRUE(r.ok()) << r.error();
  std::unique_ptr<Backend> backend = r.take();
  void* self = dlopen(fixture("bad_result").c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(self, nullptr);
  const int* runs = static_cast<const int*>(dlsym(self, "burnmark_fixture_runs"));
  const int* releases = static_cast<const int*>(dlsym(self, "burnmark_fixture_releases"));
  ASSERT_TRUE(runs && releases);
  const int runs_before = *runs;

  auto run = [&](const char* op) {
    return backend->run(
        parse(std::string("%0 = leaf f32[2,2] [1, 2, 3, 4]\n%1 = ") + op +
              (std::string(op) == "neg" || std::string(op) == "exp" ? " %0" : " %0, %0") +
              " : f32[2,2]\nroot %1\n"),
        RunOptions{});
  };
  Outcome wrong_shape = run("add");
  EXPECT_EQ(wrong_shape.status, Status::Error);
  EXPECT_EQ(wrong_shape.message, "plugin returned the root of shape [1], expected [2,2]");
  Outcome short_data = run("sub");
  EXPECT_EQ(short_data.status, Status::Error);
  EXPECT_EQ(short_data.message, "plugin returned the root with 3 values, expected 4");
  Outcome no_grads = run("mul");
  EXPECT_EQ(no_grads.status, Status::Error);
  EXPECT_EQ(no_grads.message, "plugin returned 0 gradients for 1 leaves");
  EXPECT_TRUE(no_grads.grads.empty());
  Outcome failed = run("neg");
  EXPECT_EQ(failed.status, Status::Error);
  EXPECT_EQ(failed.message, "deliberate failure");
  Outcome declined = run("exp");
  EXPECT_EQ(declined.status, Status::Unsupported);
  EXPECT_EQ(declined.message, "exp (op id 6): no exp kernel for this shape");
  // Forward only, the correct-root case is fine.
  Outcome forward =
      backend->run(parse("%0 = leaf f32[2] [1, 2]\n%1 = mul %0, %0 : f32[2]\nroot %1\n"),
                   RunOptions{.gradients = false});
  EXPECT_EQ(forward.status, Status::Ok) << forward.message;
  EXPECT_EQ(forward.root.values, (std::vector<double>{0, 0}));

  EXPECT_EQ(*runs - runs_before, 6);
  EXPECT_EQ(*releases - runs_before, 6);
  // An op outside the plugin's list is refused by the host without calling the plugin.
  Outcome skipped = backend->run(parse("%0 = leaf f32[2] [1, 2]\n%1 = tanh %0 : f32[2]\nroot %1\n"),
                                 RunOptions{});
  EXPECT_EQ(skipped.status, Status::Unsupported);
  EXPECT_EQ(skipped.message, "tanh (op id 12)");
  // A tensor past the ABI's element promise is refused the same way (BURNMARK_MAX_ELEMENTS
  // raised for LibTorch's parallel kernels).
  std::string large = "%0 = leaf f32[48,48,4] [1";
  for (int i = 1; i < 48 * 48 * 4; ++i)
    large += ", 1";
  Outcome too_large =
      backend->run(parse(large + "]\n%1 = mul %0, %0 : f32[48,48,4]\nroot %1\n"), RunOptions{});
  EXPECT_EQ(too_large.status, Status::Unsupported);
  EXPECT_EQ(too_large.message, "a tensor of 9216 elements (the plugin ABI promises at most 8192)");
  EXPECT_EQ(*runs - runs_before, 6);
  dlclose(self);
}

#ifdef BURNMARK_TEST_HAVE_EXAMPLE

TEST(ExamplePlugin, LoadsByNameFromTheBuildTree) {
  PluginLoadResult r = load_plugin_backend("example");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.take()->name(), "example");
}

TEST(ExamplePlugin, ValuesAndGradientsMatchHandDerivation) {
  PluginLoadResult r = load_plugin_backend("example");
  ASSERT_TRUE(r.ok()) << r.error();
  std::unique_ptr<Backend> backend = r.take();
  const Expected want = expected_elementwise();
  // Twice through the same backend: buffers reused between runs must not leak state.
  for (int pass = 0; pass < 2; ++pass) {
    Outcome out = backend->run(parse(kElementwiseProgram), RunOptions{});
    ASSERT_EQ(out.status, Status::Ok) << out.message;
    EXPECT_EQ(out.backend, "example");
    EXPECT_EQ(out.root.shape.to_string(), "[2,3]");
    expect_close(out.root.values, want.root, "root");
    ASSERT_EQ(out.grads.size(), 3u);
    EXPECT_EQ(out.grads[1].shape.to_string(), "[3]");
    EXPECT_EQ(out.grads[2].shape.to_string(), "[2,1]");
    expect_close(out.grads[0].values, want.g0, "grad 0");
    expect_close(out.grads[1].values, want.g1, "grad 1");
    expect_close(out.grads[2].values, want.g2, "grad 2");
  }
}

TEST(ExamplePlugin, UnreachedLeafGetsZeroGradient) {
  PluginLoadResult r = load_plugin_backend("example");
  ASSERT_TRUE(r.ok()) << r.error();
  Outcome out = r.take()->run(parse("%0 = leaf f32[2] [1, 2]\n%1 = leaf f32[3] [1, 2, 3]\n"
                                    "%2 = exp %0 : f32[2]\nroot %2\n"),
                              RunOptions{});
  ASSERT_EQ(out.status, Status::Ok) << out.message;
  ASSERT_EQ(out.grads.size(), 2u);
  EXPECT_EQ(out.grads[1].values, (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(out.grads[1].shape.to_string(), "[3]");
}

TEST(ExamplePlugin, MatmulIsSkippedNotDivergent) {
  PluginLoadResult r = load_plugin_backend("example");
  ASSERT_TRUE(r.ok()) << r.error();
  Outcome out = r.take()->run(
      parse("%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n%1 = leaf f32[3,2] [1, 0, 0, 1, 1, 1]\n"
            "%2 = matmul %0, %1 : f32[2,2]\n%3 = relu %2 : f32[2,2]\nroot %3\n"),
      RunOptions{});
  EXPECT_EQ(out.status, Status::Unsupported);
  EXPECT_EQ(out.message, "matmul (op id 20)");
  EXPECT_TRUE(out.grads.empty());
}

#endif // BURNMARK_TEST_HAVE_EXAMPLE

#ifdef BURNMARK_TEST_HAVE_REF

namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_identical(const HostTensor& a, const HostTensor& b, const std::string& what) {
  ASSERT_EQ(a.shape.to_string(), b.shape.to_string()) << what;
  ASSERT_EQ(a.values.size(), b.values.size()) << what;
  for (std::size_t i = 0; i < a.values.size(); ++i)
    ASSERT_TRUE(same_bits(a.values[i], b.values[i]))
        << what << "[" << i << "]: " << a.values[i] << " vs " << b.values[i];
  ASSERT_EQ(a.error_bound.size(), b.error_bound.size()) << what;
  for (std::size_t i = 0; i < a.error_bound.size(); ++i)
    ASSERT_TRUE(same_bits(a.error_bound[i], b.error_bound[i])) << what << " bound[" << i << "]";
}

void expect_identical(const Outcome& builtin, const Outcome& plugin, const std::string& what) {
  ASSERT_EQ(builtin.status, plugin.status)
      << what << ": " << builtin.message << " / " << plugin.message;
  if (builtin.status == Status::Error) EXPECT_EQ(builtin.message, plugin.message) << what;
  if (builtin.status != Status::Ok) return;
  expect_identical(builtin.root, plugin.root, what + " root");
  ASSERT_EQ(builtin.grads.size(), plugin.grads.size()) << what;
  for (std::size_t i = 0; i < builtin.grads.size(); ++i)
    expect_identical(builtin.grads[i], plugin.grads[i], what + " grad " + std::to_string(i));
}

struct RefPair {
  std::unique_ptr<Backend> builtin = make_reference_backend();
  std::unique_ptr<Backend> plugin;
  int ok_with_gradients = 0; // comparisons that had values and gradients to compare
  RefPair() {
    PluginLoadResult r = load_plugin_backend("ref");
    if (r.ok())
      plugin = r.take();
    else
      ADD_FAILURE() << r.error();
  }
  void check(const Program& p, const std::string& what) {
    ASSERT_TRUE(plugin);
    for (bool gradients : {true, false}) {
      RunOptions o{.gradients = gradients};
      const Outcome a = builtin->run(p, o);
      expect_identical(a, plugin->run(p, o), what + (gradients ? "" : " (forward)"));
      ok_with_gradients += gradients && a.status == Status::Ok && !a.grads.empty();
    }
  }
};

} // namespace

TEST(ReferencePlugin, AgreesBitForBitOnHandWrittenPrograms) {
  RefPair ref;
  ref.check(parse(kElementwiseProgram), "elementwise");
  ref.check(
      parse("%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n%1 = leaf f32[3,2] [1, 0, 0, 1, 1, 1]\n"
            "%2 = matmul %0, %1 : f32[2,2]\n%3 = transpose %2, dim0=0, dim1=1 : f32[2,2]\n"
            "%4 = pow %3, exponent=0.5 : f32[2,2]\n%5 = clamp %4, min=0.5, max=-0.5 : f32[2,2]\n"
            "%6 = sum_dim %5, dim=1, keepdim=true : f32[2,1]\n%7 = repeat %6, dim=1, times=3 : "
            "f32[2,3]\n"
            "%8 = concat %7, %0, dim=0 : f32[4,3]\n%9 = mean %8 : f32[]\nroot %9\n"),
      "layout and attributes");
}

TEST(ReferencePlugin, AgreesBitForBitOnTheCorpus) {
  const char* src = std::getenv("BURNMARK_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "ctest sets BURNMARK_SOURCE_DIR";
  const fs::path dir = fs::path(src) / "corpus" / "programs";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no corpus at " << dir;
  RefPair ref;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ParseResult r = parse_program(text);
    ASSERT_TRUE(r.ok()) << entry.path() << ": " << r.error();
    ref.check(r.program(), entry.path().filename().string());
    ++count;
  }
  EXPECT_GT(count, 0);
  EXPECT_GT(ref.ok_with_gradients, 0);
}

#ifdef BURNMARK_TEST_HAVE_EXAMPLE
namespace {

// Random programs over the example plugin's ops only: leaves whose shapes all broadcast with
// each other, each statement an add/sub/mul/neg/relu/exp of random earlier registers. At most
// two exps, and leaf values in [-1, 1], so that float32 stays far from overflow.
Program random_elementwise_program(std::mt19937& rng) {
  const char* shapes[] = {"[2,3]", "[3]", "[2,1]", "[1,3]"};
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::string text;
  std::vector<Shape> regs;
  const int leaves = 1 + static_cast<int>(rng() % 3);
  for (int i = 0; i < leaves; ++i) {
    const int k = static_cast<int>(rng() % 4);
    const Shape shape = k == 0   ? Shape{2, 3}
                        : k == 1 ? Shape{3}
                        : k == 2 ? Shape{2, 1}
                                 : Shape{1, 3};
    text += fmt::format("%{} = leaf f32{} [", i, shapes[k]);
    for (std::int64_t e = 0; e < shape.numel(); ++e)
      text += fmt::format("{}{}", e ? ", " : "", value(rng));
    text += "]\n";
    regs.push_back(shape);
  }
  const char* binary[] = {"add", "sub", "mul"};
  const char* unary[] = {"neg", "relu", "exp"};
  int exps = 0;
  const int ops = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < ops; ++i) {
    const int r = static_cast<int>(regs.size());
    const int a = static_cast<int>(rng() % regs.size()), b = static_cast<int>(rng() % regs.size());
    if (rng() % 2) {
      const Shape out =
          *broadcast(regs[static_cast<std::size_t>(a)], regs[static_cast<std::size_t>(b)]);
      text +=
          fmt::format("%{} = {} %{}, %{} : f32{}\n", r, binary[rng() % 3], a, b, out.to_string());
      regs.push_back(out);
    } else {
      const char* op = unary[rng() % (exps < 2 ? 3 : 2)];
      exps += std::string_view(op) == "exp";
      text += fmt::format("%{} = {} %{} : f32{}\n", r, op, a,
                          regs[static_cast<std::size_t>(a)].to_string());
      regs.push_back(regs[static_cast<std::size_t>(a)]);
    }
  }
  text += fmt::format("root %{}\n", regs.size() - 1);
  return parse(text);
}

// The oracle's closeness rule, with elements the reference marks indeterminate (+inf bound:
// a kink within float32 reach) left out.
void expect_agree(const HostTensor& ref, const HostTensor& got, const std::string& what) {
  ASSERT_EQ(ref.shape.to_string(), got.shape.to_string()) << what;
  ASSERT_EQ(ref.values.size(), got.values.size()) << what;
  for (std::size_t i = 0; i < ref.values.size(); ++i) {
    const double bound = ref.error_bound.empty() ? 0.0 : ref.error_bound[i];
    if (std::isinf(bound)) continue;
    const double a = ref.values[i], b = got.values[i];
    if (std::isnan(a) || std::isnan(b)) {
      EXPECT_EQ(std::isnan(a), std::isnan(b)) << what << "[" << i << "]";
      continue;
    }
    EXPECT_LE(std::fabs(a - b), 1e-4 * std::max({1.0, std::fabs(a), std::fabs(b)}) + bound)
        << what << "[" << i << "]";
  }
}

} // namespace

TEST(ExamplePlugin, AgreesWithTheReference) {
  std::unique_ptr<Backend> ref = make_reference_backend();
  PluginLoadResult r = load_plugin_backend("example");
  ASSERT_TRUE(r.ok()) << r.error();
  std::unique_ptr<Backend> example = r.take();
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    const Program p = i == 0 ? parse(kElementwiseProgram) : random_elementwise_program(rng);
    const Outcome want = ref->run(p, RunOptions{});
    const Outcome got = example->run(p, RunOptions{});
    ASSERT_EQ(want.status, Status::Ok) << want.message;
    ASSERT_EQ(got.status, Status::Ok) << got.message << "\n" << to_text(p);
    expect_agree(want.root, got.root, "root\n" + to_text(p));
    ASSERT_EQ(got.grads.size(), want.grads.size());
    for (std::size_t g = 0; g < want.grads.size(); ++g)
      expect_agree(want.grads[g], got.grads[g], "grad " + std::to_string(g) + "\n" + to_text(p));
    if (HasFailure()) return;
  }
}
#endif // BURNMARK_TEST_HAVE_EXAMPLE

#ifdef BURNMARK_TEST_HAVE_GEN
TEST(ReferencePlugin, AgreesBitForBitOnGeneratedPrograms) {
  RefPair ref;
  std::mt19937 rng(20240611);
  GeneratorOptions options;
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(16 + rng() % 240));
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    const Program p = generate(bytes, options);
    ref.check(p, "generated #" + std::to_string(i));
    if (HasFatalFailure()) return;
  }
  // Guards against a vacuous pass (every program erroring identically in both forms).
  EXPECT_GT(ref.ok_with_gradients, 2000);
}
#endif // BURNMARK_TEST_HAVE_GEN

#endif // BURNMARK_TEST_HAVE_REF
