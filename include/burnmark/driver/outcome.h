// What one backend made of one program: the root's values, each leaf's gradient, or an error.
// Plain data shared by the driver, the oracle, the CLI and the plugin loader.
#pragma once

#include <string>
#include <vector>

#include "burnmark/ir/shape.h"

namespace burnmark {

// A tensor read out of a backend: contiguous row-major values widened to double (exact for
// f32 backends; the reference keeps its extra precision).
struct HostTensor {
  Shape shape;
  std::vector<double> values;
  // Optional per-element bound on how far a correct f32 implementation may land from `values`
  // (rounding error propagated through the program). Empty when the backend gives none.
  std::vector<double> error_bound;
};

enum class Status {
  Ok,
  Error,       // the backend raised: a divergence when the reference did not
  Unsupported, // the backend lacks an op of this program: skipped and counted, never a divergence
  Crash,       // a backend in a child process died (signal, exit) on this program
  Hang,        // a backend in a child process gave no answer in time and was killed
  Oom,         // a backend in a child process grew past BURNMARK_CHILD_MEMORY and was killed
};

struct Outcome {
  std::string backend;
  Status status = Status::Ok;
  std::string message; // the error text, or the missing op for Unsupported
  HostTensor root;
  // One per leaf, in leaf order; only filled when gradients were requested and status is Ok.
  std::vector<HostTensor> grads;
  // Forward mode: the root's derivative J·u along each float leaf's tangent (leaf_tangent in
  // driver.h); only filled when tangents were requested and status is Ok.
  HostTensor tangent;
  // Second order: per leaf, in leaf order, the Hessian-vector product H·v of the objective
  // sum(root) with v = every float leaf's leaf_tangent (zeros for index leaves); only filled
  // when requested and status is Ok.
  std::vector<HostTensor> hvp;
  // Set by a backend that knows rounding decides whether a correct implementation raises here
  // (the reference, for inv of a matrix whose determinant is 0 within its bound): another
  // backend's error is then indeterminate, not a divergence.
  bool error_possible = false;
  // The reference's convention points (include/burnmark/backends/conventions.def) this run
  // reached, one bit per Convention. A convention whose point a run never reached cannot change
  // that run when switched (the switch is never read), so the convention judge re-runs only the
  // switched references that could differ. Every bit set when the backend does not say (any
  // backend but the in-process reference).
  std::uint32_t conventions_reached = ~std::uint32_t{0};
};

struct RunOptions {
  bool gradients = true;
  // Forward-mode AD as well: every float leaf carries leaf_tangent's direction, the root's
  // tangent is read out. A backend without forward mode returns Unsupported.
  bool tangents = false;
  // Second-order AD as well: Outcome::hvp. A backend without it returns Unsupported.
  bool hessian = false;
};

} // namespace burnmark
