// The reference backend's Framework: an arena of nodes (the tape) with forward values, error
// bounds and accumulated gradients. Tensor handles are node indices; reset() rewinds the arena
// but keeps every node's buffers, so a new program allocates almost nothing.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "burnmark/driver/driver.h"
#include "kernels.h"

namespace burnmark::ref {

struct Node {
  Shape shape;
  Op op = Op::Add;
  Attrs attrs;
  std::array<int, 2> in{-1, -1};
  bool is_leaf = false;
  bool requires_grad = false;
  bool has_grad = false;
  Buf value;
  Buf grad;
};

// The gradient a backward rule produces for one input, at the shape the op saw that input
// (broadcast to the output, or the batch-broadcast matmul operand); the tape sums it down.
struct InputGrad {
  bool wanted = false;
  Shape shape;
  Buf buf;
};

// Forward of one op into out.value (out.shape, op, attrs and in already set).
void forward_rule(const Node& a, const Node* b, Node& out, ReduceScratch& s);
// Backward of one op: one gradient per input (those with wanted set), from the output's gradient.
void backward_rule(const Node& out, const Node& a, const Node* b, std::array<InputGrad, 2>& dx,
                   ReduceScratch& s);

class ReferenceFramework {
public:
  struct Tensor {
    int node = -1;
  };

  void reset() { used_ = 0; }
  Tensor leaf(const Leaf& leaf, bool requires_grad);
  Tensor alias(const Tensor& t) { return t; } // the very same node, so the leaf keeps its gradient
  Tensor apply(const Instr& instr, std::span<const Tensor* const> operands, const Shape& shape);
  void backward(const Tensor& root);
  std::optional<HostTensor> grad(const Tensor& t);
  HostTensor read(const Tensor& t);

private:
  Node& fresh();
  void accumulate(Node& target, InputGrad& g);
  Node& node(int i) { return nodes_[static_cast<std::size_t>(i)]; }

  std::vector<Node> nodes_;
  std::size_t used_ = 0;
  std::array<InputGrad, 2> dx_;
  Buf summed_;
  ReduceScratch scratch_;
};

static_assert(Framework<ReferenceFramework>);

} // namespace burnmark::ref
