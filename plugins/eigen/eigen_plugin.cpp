// The Eigen plugin's entry point: a register file and tape (plugin_walk.h's, see walk below)
// over the Eigen Tensor kernels of eigen_forward.cpp, eigen_backward.cpp and the family files,
// exporting the ops listed in kOps.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "eigen_tensor.h"

namespace {

using burnmark::plugin::ResultStorage;

struct EigenKernels {
  using Scalar = float;
  void forward(const BurnmarkStmt& s, burnmark::eigen::In in, burnmark::eigen::Dense& out) {
    burnmark::eigen::forward(s, in, out);
  }
  void backward(const BurnmarkStmt& s, burnmark::eigen::In in, const burnmark::eigen::Dense& out,
                const burnmark::eigen::Dense& grad_out, burnmark::eigen::GradIn grad_in) {
    burnmark::eigen::backward(s, in, out, grad_out, grad_in);
  }
};

// The ops this plugin maps onto Eigen expressions, by stable id: the first vocabulary (0..21),
// then the later ops Eigen 3.4 has a functor or Tensor method for (eigen_unary.cpp,
// eigen_binary.cpp say which it lacks). Listed explicitly, so a new op in ops.def is skipped
// until it is mapped here.
constexpr std::uint32_t kOps[] = {
    0,  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, // sin
    23, // cos
    24, // tan
    25, // asin
    26, // acos
    27, // atan
    28, // sinh
    29, // cosh
    30, // asinh
    31, // acosh
    32, // atanh
    33, // erf
    34, // erfc
    36, // log1p
    37, // expm1
    38, // log2
    39, // log10
    41, // rsqrt
    42, // reciprocal
    43, // square
    44, // sign
    45, // sgn
    46, // floor
    47, // ceil
    48, // round
    51, // lgamma
    52, // digamma
    53, // clamp_min
    54, // clamp_max
    64, // hardtanh
    65, // relu6
    73, // maximum
    74, // minimum
    75, // fmax
    76, // fmin
    78, // pow_tensor
    80, // fmod
    86, // lt
    87, // le
    88, // gt
    89, // ge
    90, // eq
    91, // ne
    92, // where
};

// plugin_walk.h's walk(), with one difference: no gradient enters a mask. plugin_walk.h gives
// every operand of an op on the tape its share, so where would hand its mask a zero gradient,
// the comparison would pass zeros on to its operands, and their rules would then run with
// grad = 0 (asin's at x = -1 is 0 * inf = NaN), where LibTorch's bool masks have no grad_fn and
// the reference stops at them. Here nothing flows into a register of dtype bool, so a
// comparison never runs backward. Everything else (aliases, accumulation of an operand used
// twice, no gradient for unreached leaves) is plugin_walk.h's, line for line; the same change
// there would let this copy go.
void walk(EigenKernels& kernels, const BurnmarkProgram& program, const BurnmarkRunOptions& options,
          ResultStorage& storage) {
  using burnmark::eigen::Dense;
  const auto n = static_cast<std::size_t>(program.num_stmts);
  std::vector<std::size_t> node(n);
  std::vector<Dense> regs(n);
  std::array<const Dense*, BURNMARK_MAX_OPERANDS> in{};
  for (std::size_t r = 0; r < n; ++r) {
    const BurnmarkStmt& s = program.stmts[r];
    node[r] = r;
    switch (s.kind) {
    case BURNMARK_STMT_LEAF: {
      const BurnmarkLeaf& leaf = program.leaves[s.leaf];
      regs[r].shape = leaf.shape;
      regs[r].data.assign(leaf.data, leaf.data + leaf.numel);
      break;
    }
    case BURNMARK_STMT_ALIAS: node[r] = node[static_cast<std::size_t>(s.source)]; break;
    case BURNMARK_STMT_OP: {
      for (int i = 0; i < s.num_operands; ++i)
        in[static_cast<std::size_t>(i)] = &regs[node[static_cast<std::size_t>(s.operands[i])]];
      regs[r] = Dense::zeros(s.shape);
      kernels.forward(s, burnmark::eigen::In(in.data(), static_cast<std::size_t>(s.num_operands)),
                      regs[r]);
      break;
    }
    default: throw std::runtime_error("unknown statement kind " + std::to_string(s.kind));
    }
  }
  const auto root = node[static_cast<std::size_t>(program.root)];
  storage.set_root<float>(regs[root].shape, regs[root].data);
  if (!options.gradients) return;
  std::vector<std::optional<Dense>> grads(n);
  grads[root] = Dense{regs[root].shape, std::vector<float>(regs[root].data.size(), 1.0f)};
  std::array<Dense, BURNMARK_MAX_OPERANDS> gin;
  std::array<Dense*, BURNMARK_MAX_OPERANDS> gin_ptr{};
  for (std::size_t r = n; r-- > 0;) {
    const BurnmarkStmt& s = program.stmts[r];
    if (s.kind != BURNMARK_STMT_OP || !grads[r]) continue;
    const auto arity = static_cast<std::size_t>(s.num_operands);
    for (std::size_t i = 0; i < arity; ++i) {
      const auto src = node[static_cast<std::size_t>(s.operands[i])];
      in[i] = &regs[src];
      gin[i] = Dense::zeros(regs[src].shape);
      gin_ptr[i] = &gin[i];
    }
    kernels.backward(s, burnmark::eigen::In(in.data(), arity), regs[r], *grads[r],
                     burnmark::eigen::GradIn(gin_ptr.data(), arity));
    for (std::size_t i = 0; i < arity; ++i) {
      const auto operand = static_cast<std::size_t>(s.operands[i]);
      if (program.stmts[operand].dtype == BURNMARK_DTYPE_BOOL) continue; // the difference
      auto& acc = grads[node[operand]];
      if (!acc) {
        acc = std::move(gin[i]);
      } else {
        for (std::size_t k = 0; k < acc->data.size(); ++k)
          acc->data[k] += gin[i].data[k];
      }
    }
    grads[r].reset();
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (program.stmts[r].kind != BURNMARK_STMT_LEAF) continue;
    auto& g = grads[r];
    storage.add_grad<float>(regs[r].shape, g ? std::optional<std::vector<float>>(std::move(g->data))
                                             : std::nullopt);
  }
}

std::int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                 BurnmarkResult* result) {
  return burnmark::plugin::guarded_run(result, [&](ResultStorage& storage) {
    walk(*static_cast<EigenKernels*>(context), *program, *options, storage);
  });
}

#define BURNMARK_EIGEN_STR2(x) #x
#define BURNMARK_EIGEN_STR(x) BURNMARK_EIGEN_STR2(x)

} // namespace

extern "C" BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1*
burnmark_plugin_entry(uint32_t /*host_abi_version*/) {
  static constexpr BurnmarkPluginV1 table = [] {
    BurnmarkPluginV1 t = burnmark::plugin::make_plugin_table<EigenKernels>(
        "eigen",
        "Eigen " BURNMARK_EIGEN_STR(EIGEN_WORLD_VERSION) "." BURNMARK_EIGEN_STR(
            EIGEN_MAJOR_VERSION) "." BURNMARK_EIGEN_STR(EIGEN_MINOR_VERSION) " Tensor module, "
                                                                             "float32, CPU, single "
                                                                             "thread, own "
                                                                             "reverse-mode tape",
        kOps);
    t.run = &run; // create, destroy and release_result stay plugin_walk.h's
    return t;
  }();
  return &table;
}
