// The reference backend's Framework: an arena of nodes (the tape) with forward values, error
// bounds and accumulated gradients. Tensor handles are node indices; reset() rewinds the arena
// but keeps every node's buffers, so a new program allocates almost nothing.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "burnmark/driver/driver.h"
#include "kernels.h"

namespace burnmark::ref {

struct Node {
  Shape shape;
  Op op = Op::Add;
  Attrs attrs;
  std::array<int, kMaxArity> in{-1, -1, -1};
  bool is_leaf = false;
  bool requires_grad = false;
  bool has_grad = false;
  // Contributions accumulated into grad so far: from the third on, the sum depends on the
  // order autograd adds them in, which differs between LibTorch's paths (eager, in-place).
  int grad_terms = 0;
  Buf value;
  Buf grad;
  // Forward mode: d value along the leaves' tangents (J·u), when one reached this node.
  bool has_tan = false;
  bool tan_done = false; // tan is final (computed, or set by dual)
  Buf tan;
  // Second order: the tangent of grad along the leaves' tangents (H·v at a leaf).
  bool has_gtan = false;
  int gtan_terms = 0;
  Buf gtan;
};

// The gradient a backward rule produces for one input, at the shape the op saw that input
// (broadcast to the output, or the batch-broadcast matmul operand); the tape sums it down.
struct InputGrad {
  bool wanted = false;
  Shape shape;
  Buf buf;
};

// Forward of one op into out.value (out.shape, op, attrs and in already set); b and c are the
// second and third operands of the ops that have them.
void forward_rule(const Node& a, const Node* b, const Node* c, Node& out, ReduceScratch& s);
// Backward of one op: one gradient per input (those with wanted set), from the output's gradient.
void backward_rule(const Node& out, const Node& a, const Node* b, const Node* c,
                   std::array<InputGrad, kMaxArity>& dx, ReduceScratch& s);

// Scratch of the tangent rules (tangent.cpp), kept across calls.
struct TangentScratch {
  std::array<InputGrad, kMaxArity> dx;
  std::array<Node, kMaxArity> operand; // tangents standing in for operands of a forward rule
  Node result;
  Buf term, wide, product, sum;
};

// Forward mode of one op: out.tan (and has_tan) from its operands' tangents; out.value is set.
// May overwrite out.grad, which the backward pass refills before reading.
void tangent_rule(Node& out, const Node& a, const Node* b, const Node* c, TangentScratch& t,
                  ReduceScratch& s);

// Scratch of the second-order rules (second_order.cpp), kept across calls.
struct SecondOrderScratch {
  std::array<InputGrad, kMaxArity> dx;
  Node stand_in; // a tangent standing in for an operand of a backward rule
  Node seeded;   // an op's node with another gradient, for a rule seeded with it
  std::vector<Approx> terms, more;
  Buf sum;
  std::array<std::vector<Approx>, 11> rows; // the rows of the ops along a dim
  std::array<Buf, 4> wide;                  // operands and tangents at a broadcast shape
  std::array<std::vector<double>, 3> mags;  // magnitudes of the terms a formula adds
};

// What hessian_vector's exception says, first, for an op without a second-order rule: the
// reference backend turns it into Unsupported.
inline constexpr std::string_view kNoSecondOrderRule = "the reference has no second-order rule";

// Second order of one op (out.grad final, tangents of the operands set): per wanted input, the
// derivative of its backward rule along the operands' tangents with the gradient held (the part
// along the gradient's tangent is the backward rule itself); wanted is cleared for inputs that
// get nothing. False when the op has no second-order rule yet.
bool second_order_rule(const Node& out, const Node& a, const Node* b, const Node* c,
                       std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t,
                       ReduceScratch& s);

// Row-major iteration over `over` with each of three operands' offsets (NumPy broadcasting):
// f(i, offsets) for every result index i.
template <class F>
void ternary_walk(const Shape& over, const std::array<const Node*, 3>& in, F&& f) {
  std::array<std::array<std::int64_t, kWalkRank>, 3> steps{};
  for (std::size_t k = 0; k < 3; ++k)
    steps[k] = broadcast_steps(in[k]->shape, over);
  std::array<std::int64_t, kMaxRank> idx{};
  std::array<std::int64_t, 3> at{};
  const std::int64_t n = over.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, at);
    for (int ax = over.rank() - 1; ax >= 0; --ax) {
      const auto k = static_cast<std::size_t>(ax);
      for (std::size_t o = 0; o < 3; ++o)
        at[o] += steps[o][k];
      if (++idx[k] < over[ax]) break;
      for (std::size_t o = 0; o < 3; ++o)
        at[o] -= steps[o][k] * over[ax];
      idx[k] = 0;
    }
  }
}

class ReferenceFramework {
public:
  struct Tensor {
    int node = -1;
  };

  void reset(const Program&) {
    used_ = 0;
    scratch_.error_possible = false;
    grads_of_ = -1;
    release_large_buffers();
  }
  // Elements the node buffers hold now, values and bounds counted once: what the tape keeps
  // between programs after reset() (bounded: see release_large_buffers in tape.cpp).
  std::int64_t kept_elements() const;
  // A correct f32 implementation may raise on this program (see Outcome::error_possible).
  bool error_possible() const { return scratch_.error_possible; }
  Tensor leaf(const Leaf& leaf, bool requires_grad);
  Tensor alias(const Tensor& t) { return t; } // the very same node, so the leaf keeps its gradient
  Tensor apply(const Instr& instr, std::span<const Tensor* const> operands, const Shape& shape);
  void backward(const Tensor& root);
  std::optional<HostTensor> grad(const Tensor& t);
  // Any node's gradient after backward(), an op's as well as a leaf's; nullopt where none
  // reached it.
  std::optional<std::vector<double>> node_gradient(const Tensor& t) const;
  HostTensor read(const Tensor& t);
  Tensor dual(const Tensor& t, const HostTensor& tangent);
  // Computes the tangents t depends on, then reads t's (LibTorch computes them op by op; the
  // values are the same).
  HostTensor tangent(const Tensor& t);
  // Forward over reverse: the leaves given the directions as tangents, the gradients'
  // tangents by a second reverse pass. Throws when an op has no second-order rule.
  std::vector<std::optional<HostTensor>> hessian_vector(const Tensor& root,
                                                        std::span<const Tensor> leaves,
                                                        std::span<const HostTensor> directions);

private:
  Node& fresh();
  // Frees node buffers larger than most programs need (see tape.cpp): without this a fuzzing
  // process's memory grows in steps, each the largest program any reference instance has met.
  void release_large_buffers();
  void accumulate(Node& target, InputGrad& g);
  // Adds g into `sum` (started by the first term; `terms` counts them); from the
  // `reordered_from`-th term on, LibTorch may add in another order, which the bound covers.
  void accumulate_into(Buf& sum, bool& has, int& terms, const Shape& shape, InputGrad& g,
                       int reordered_from);
  // Second reverse pass: every gtan from the root down; false when some value, gradient or
  // tangent on the way is not finite (then H·v is not judged: see hessian_vector).
  bool propagate_gradient_tangents(int root);
  void propagate_tangents(int root);
  Node& node(int i) { return nodes_[static_cast<std::size_t>(i)]; }

  std::vector<Node> nodes_;
  std::size_t used_ = 0;
  // The root whose gradients every node holds, or -1: hessian_vector runs backward itself, and
  // the driver's backward() after it then has nothing left to do. A tangent rule may overwrite
  // a node's grad, which clears it.
  int grads_of_ = -1;
  std::array<InputGrad, kMaxArity> dx_;
  Buf summed_;
  ReduceScratch scratch_;
  TangentScratch tangent_scratch_;
  SecondOrderScratch second_order_scratch_;
  std::vector<unsigned char> needed_;
};

static_assert(ForwardModeFramework<ReferenceFramework>);
static_assert(SecondOrderFramework<ReferenceFramework>);

} // namespace burnmark::ref
