// The onednn plugin in bf16 and f16: what it declares per op is what oneDNN lets this CPU create
// (derived here by creating the primitives directly, so the test holds on any x86-64, with or
// without avx512_bf16 or avx512_fp16), values checked against hand-derived ones (exact cases
// and f32 accumulation, which an accumulation in the dtype would miss), agreement with the
// reference on generated programs, and undeclared dtypes reported unsupported.
#include <gtest/gtest.h>

#include <cstdint>
#include <dlfcn.h>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/float_dtype.h"
#include "burnmark/ir/op.h"
#include "burnmark/ir/text.h"
#include "burnmark/plugin/plugin.h"
#include "test_onednn_common.h"

using namespace burnmark;
using burnmark::onednn_test::Backends;

namespace {

using dnnl::algorithm;
using dnnl::memory;

// The plugin's op table, read through its entry point as the host reads it.
struct Table {
  void* handle = dlopen(BURNMARK_ONEDNN_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
  const BurnmarkPluginV1* t = nullptr;
  Table() {
    if (handle == nullptr) return;
    auto entry =
        reinterpret_cast<BurnmarkPluginEntryFn>(dlsym(handle, BURNMARK_PLUGIN_ENTRY_SYMBOL));
    if (entry != nullptr) t = entry(BURNMARK_PLUGIN_ABI_VERSION);
  }
  ~Table() {
    if (handle != nullptr) dlclose(handle);
  }
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  // Whether `name` is declared in dtype d (false when not declared at all).
  bool declares(const std::string& name, std::int32_t d) const {
    const auto op = op_from_name(name);
    if (!op || t == nullptr) return false;
    for (std::uint32_t i = 0; i < t->num_ops; ++i)
      if (t->ops[i].op == op_info(*op).stable_id)
        return (t->ops[i].dtypes & BURNMARK_DTYPE_BIT(d)) != 0;
    return false;
  }
};

memory::desc md(const memory::dims& dims, memory::data_type dt) {
  return memory::desc(dims, dt, dims.size() == 1 ? memory::format_tag::a : memory::format_tag::ab);
}

// Whether creating the primitive descriptors `make` creates succeeds on this CPU.
bool creates(const std::function<void(const dnnl::engine&)>& make) {
  try {
    const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    make(eng);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// The primitives behind each family of ops, forward and backward, in data type dt: an
// independent statement of what the plugin's kernels need (onednn_kernels.cpp).
bool eltwise_creates(memory::data_type dt) {
  return creates([&](const dnnl::engine& eng) {
    const auto d = md({6}, dt);
    const dnnl::eltwise_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, algorithm::eltwise_relu_use_dst_for_bwd, d, 0.f, 0.f},
        eng);
    dnnl::eltwise_backward::primitive_desc(
        {algorithm::eltwise_relu_use_dst_for_bwd, d, d, 0.f, 0.f}, eng, fwd);
  });
}
bool binary_creates(memory::data_type dt) {
  return creates([&](const dnnl::engine& eng) {
    // add with a broadcast operand, and the sum that un-broadcasts its gradient
    dnnl::binary::primitive_desc(
        {algorithm::binary_add, md({2, 3}, dt), md({1, 3}, dt), md({2, 3}, dt)}, eng);
    dnnl::reduction::primitive_desc(
        {algorithm::reduction_sum, md({2, 3}, dt), md({1, 3}, dt), 0.f, 0.f}, eng);
  });
}
bool softmax_creates(memory::data_type dt) {
  return creates([&](const dnnl::engine& eng) {
    const auto d = md({2, 3}, dt);
    const dnnl::softmax_v2_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, algorithm::softmax_accurate, d, d, 1}, eng);
    dnnl::softmax_v2_backward::primitive_desc({algorithm::softmax_accurate, d, d, d, 1}, eng, fwd);
  });
}
bool matmul_creates(memory::data_type dt) {
  return creates([&](const dnnl::engine& eng) {
    dnnl::matmul::primitive_desc({md({2, 3}, dt), md({3, 2}, dt), md({2, 2}, dt)}, eng);
  });
}
bool reduction_max_creates(memory::data_type dt) {
  return creates([&](const dnnl::engine& eng) {
    dnnl::reduction::primitive_desc(
        {algorithm::reduction_max, md({2, 3}, dt), md({2, 1}, dt), 0.f, 0.f}, eng);
  });
}
// round is forward only (its gradient is zero, no primitive).
bool round_creates(memory::data_type dt) {
  return creates([&](const dnnl::engine& eng) {
    dnnl::eltwise_forward::primitive_desc(
        {dnnl::prop_kind::forward_training, algorithm::eltwise_round, md({6}, dt), 0.f, 0.f}, eng);
  });
}
bool reorder_creates(memory::data_type dt) {
  return creates([&](const dnnl::engine& eng) {
    dnnl::reorder::primitive_desc(eng, md({2, 3}, dt), eng, md({2, 3}, dt));
    dnnl::concat::primitive_desc(md({4, 3}, dt), 0, {md({2, 3}, dt), md({2, 3}, dt)}, eng);
  });
}

struct DtypeCase {
  std::int32_t abi;
  memory::data_type dt;
  const char* name;
};
const DtypeCase kCases[] = {{BURNMARK_DTYPE_BF16, memory::data_type::bf16, "bf16"},
                            {BURNMARK_DTYPE_F16, memory::data_type::f16, "f16"}};

} // namespace

// An op is declared in bf16 (f16) exactly when the primitives it runs on, forward and backward,
// can be created here in that data type.
TEST(OnednnDtypes, DeclarationsMatchWhatPrimitiveCreationAllows) {
  const Table table;
  ASSERT_NE(table.t, nullptr) << dlerror();
  for (const DtypeCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const bool eltwise = eltwise_creates(c.dt), binary = binary_creates(c.dt),
               softmax = softmax_creates(c.dt), matmul = matmul_creates(c.dt),
               rmax = reduction_max_creates(c.dt), reorder = reorder_creates(c.dt);
    EXPECT_EQ(table.declares("relu", c.abi), eltwise);
    EXPECT_EQ(table.declares("add", c.abi), binary);
    EXPECT_EQ(table.declares("softmax", c.abi), softmax);
    EXPECT_EQ(table.declares("mm", c.abi), matmul);
    EXPECT_EQ(table.declares("amax", c.abi), rmax);
    EXPECT_EQ(table.declares("round", c.abi), round_creates(c.dt));
    EXPECT_EQ(table.declares("transpose", c.abi), reorder);
    EXPECT_EQ(table.declares("concat", c.abi), reorder);
    std::printf("[ info     ] %s on this CPU: eltwise %d binary %d softmax %d matmul %d "
                "reduction %d reorder %d\n",
                c.name, eltwise, binary, softmax, matmul, rmax, reorder);
  }
}

namespace {

// `text` run on the plugin with gradients: the root's and leaf 0's gradient's values.
struct Values {
  std::vector<double> root, grad;
};
Values run_dnn(Backends& b, const std::string& text) {
  const Outcome o = b.dnn->run(onednn_test::parse(text), RunOptions{.gradients = true});
  EXPECT_EQ(o.status, Status::Ok) << o.message << "\n" << text;
  if (o.status != Status::Ok || o.grads.empty()) return {};
  return {o.root.values, o.grads.at(0).values};
}

std::string ones(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += i == 0 ? "1" : ", 1";
  return s;
}

} // namespace

// Exact cases, derived by hand. In bf16 (8 significant bits) 256 + 1 = 257 is a tie between 256
// and 258 and rounds to even, 256; in f16 (11 bits) the same happens at 2048 + 1. A sum or a
// product accumulated in f32 and rounded once gives big + 1 + 1 = big + 2, which the dtype
// holds; accumulated in the dtype it stalls at big (PyTorch's contract is the former,
// docs/conventions_reductions.md).
TEST(OnednnDtypes, ExactValuesInEachDeclaredDtype) {
  Backends b;
  ASSERT_TRUE(b.dnn);
  const Table table;
  int checked = 0;
  for (const DtypeCase& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string d = c.name, head = "dtype " + d + "\n";
    const bool bf16 = c.abi == BURNMARK_DTYPE_BF16;
    const double big = bf16 ? 256 : 2048;
    const std::string bigs = bf16 ? "256" : "2048";
    if (table.declares("relu", c.abi)) {
      const Values v =
          run_dnn(b, head + "%0 = leaf " + d + "[4] [-1.5, 0, 2.25, -0]\n%1 = relu %0 : " + d +
                         "[4]\nroot %1\n");
      EXPECT_EQ(v.root, (std::vector<double>{0, 0, 2.25, 0}));
      EXPECT_EQ(v.grad, (std::vector<double>{0, 0, 1, 0})); // relu'(0) = 0, as LibTorch
      ++checked;
    }
    if (table.declares("abs", c.abi)) {
      const Values v = run_dnn(b, head + "%0 = leaf " + d + "[3] [-1.5, 0.375, -" + bigs +
                                      "]\n%1 = abs %0 : " + d + "[3]\nroot %1\n");
      EXPECT_EQ(v.root, (std::vector<double>{1.5, 0.375, big}));
      EXPECT_EQ(v.grad, (std::vector<double>{-1, 1, -1}));
      ++checked;
    }
    if (table.declares("add", c.abi)) {
      const Values v =
          run_dnn(b, head + "%0 = leaf " + d + "[2] [" + bigs + ", 1.5]\n%1 = leaf " + d +
                         "[2] [1, 0.25]\n%2 = add %0, %1 : " + d + "[2]\nroot %2\n");
      EXPECT_EQ(v.root, (std::vector<double>{big, 1.75})); // big + 1 ties to even
      EXPECT_EQ(v.grad, (std::vector<double>{1, 1}));
      ++checked;
    }
    if (table.declares("softmax", c.abi)) {
      const Values v =
          run_dnn(b, head + "%0 = leaf " + d + "[4] [3, 3, 3, 3]\n%1 = softmax %0, dim=0 : " + d +
                         "[4]\nroot %1\n");
      EXPECT_EQ(v.root, (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
      // 0.25 * (1 - 4 * 0.25) = 0: the seed of ones is orthogonal to softmax's output change.
      EXPECT_EQ(v.grad, (std::vector<double>{0, 0, 0, 0}));
      ++checked;
    }
    if (table.declares("sum", c.abi)) {
      const Values v = run_dnn(b, head + "%0 = leaf " + d + "[3] [" + bigs +
                                      ", 1, 1]\n%1 = sum %0 : " + d + "[]\nroot %1\n");
      EXPECT_EQ(v.root, (std::vector<double>{big + 2})); // f32 accumulation
      EXPECT_EQ(v.grad, (std::vector<double>{1, 1, 1}));
      const Values w = run_dnn(b, head + "%0 = leaf " + d + "[32,32] [" + ones(1024) +
                                      "]\n%1 = sum %0 : " + d + "[]\nroot %1\n");
      EXPECT_EQ(w.root, (std::vector<double>{1024})); // 256 in a bf16 accumulation
      ++checked;
    }
    if (table.declares("mm", c.abi)) {
      const Values v =
          run_dnn(b, head + "%0 = leaf " + d + "[1,3] [" + bigs + ", 1, 1]\n%1 = leaf " + d +
                         "[3,1] [1, 1, 1]\n%2 = mm %0, %1 : " + d + "[1,1]\nroot %2\n");
      EXPECT_EQ(v.root, (std::vector<double>{big + 2})); // f32 accumulation
      EXPECT_EQ(v.grad, (std::vector<double>{1, 1, 1})); // grad @ other^T
      ++checked;
    }
    if (checked == 0)
      std::printf("[ skipped  ] %s: no eltwise, binary, softmax, reduction or matmul primitive in "
                  "%s on this CPU, so no value to check\n",
                  c.name, c.name);
    checked = 0;
  }
}

// A dtype an op is not declared in is skipped by the host, never run and never a divergence:
// f64 everywhere (oneDNN has no f64 primitives on the CPU), f16 where this CPU lacks them.
TEST(OnednnDtypes, UndeclaredDtypeIsUnsupported) {
  Backends b;
  ASSERT_TRUE(b.dnn);
  const Outcome f64 =
      b.run("dtype f64\n%0 = leaf f64[2] [1, -1]\n%1 = relu %0 : f64[2]\nroot %1\n");
  EXPECT_EQ(f64.status, Status::Unsupported) << f64.message;
  const Table table;
  for (const char* op : {"relu", "exp", "tanh", "neg"}) {
    if (table.declares(op, BURNMARK_DTYPE_F16)) continue;
    const std::string text =
        std::string("dtype f16\n%0 = leaf f16[2] [1, -1]\n%1 = ") + op + " %0 : f16[2]\nroot %1\n";
    const Outcome o = b.run(text);
    EXPECT_EQ(o.status, Status::Unsupported) << o.message << "\n" << text;
    const Verdict v = compare({b.ref->run(onednn_test::parse(text), RunOptions{}), o},
                              OracleOptions{.gradients = false});
    EXPECT_TRUE(v.agree()) << format_verdict(v);
    EXPECT_EQ(v.compared, 0u);
    return;
  }
  std::printf("[ skipped  ] this CPU has f16 eltwise primitives: relu, exp, tanh and neg are all "
              "declared in f16\n");
}

// Generated programs over smooth ops (no special values, no edge leaves: subnormals, NaN and
// infinities are where oneDNN's known differences live) agree with the reference within its
// bound, values and gradients, in every dtype the ops are declared in here.
TEST(OnednnDtypes, GeneratedProgramsAgreeWithTheReference) {
  Backends b;
  ASSERT_TRUE(b.dnn);
  const Table table;
  const char* smooth[] = {"add",    "sub",     "mul",       "neg",     "abs",
                          "exp",    "tanh",    "sigmoid",   "square",  "sum",
                          "mean",   "sum_dim", "mean_dim",  "softmax", "log_softmax",
                          "matmul", "mm",      "transpose", "concat",  "repeat"};
  for (const auto& [abi, fd] : {std::pair{BURNMARK_DTYPE_BF16, FloatDType::BF16},
                                std::pair{BURNMARK_DTYPE_F16, FloatDType::F16}}) {
    GeneratorOptions g;
    g.dtypes = {fd};
    g.special_rate = 0;
    g.edge_rate = 0;
    g.max_steps = 8;
    g.max_dim = 6;
    for (const char* name : smooth)
      if (table.declares(name, abi)) g.ops.push_back(*op_from_name(name));
    const std::string dname(float_dtype_name(fd));
    if (g.ops.size() < 4) {
      std::printf("[ skipped  ] %s: only %zu of the smooth ops are declared on this CPU\n",
                  dname.c_str(), g.ops.size());
      continue;
    }
    std::mt19937 rng(33);
    int ran = 0;
    for (int i = 0; i < 150; ++i) {
      std::vector<std::uint8_t> bytes(96);
      for (auto& x : bytes)
        x = static_cast<std::uint8_t>(rng());
      const std::string text = to_text(generate(bytes, g));
      if (b.run(text).status == Status::Unsupported) continue;
      b.expect_agree(text);
      ++ran;
    }
    EXPECT_GT(ran, 100) << dname;
  }
}
