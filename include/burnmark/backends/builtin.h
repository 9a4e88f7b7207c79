// Factories of the backends compiled into BurnMark. Only the LibTorch backend's .cpp includes
// LibTorch; this header does not.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "burnmark/backends/conventions.h"
#include "burnmark/driver/driver.h"

namespace burnmark {

// The independent CPU reference: double precision, its own reverse-mode tape, IEEE 754 and the
// documented or free choices of docs/conventions.md. `other_side` switches registered
// conventions to the side the reference does not take (the backend is then named
// "ref[<convention>]").
std::unique_ptr<Backend> make_reference_backend(ConventionSet other_side = {});
// The reference once per registered convention, each with that one switched.
std::vector<std::pair<Convention, std::unique_ptr<Backend>>> make_convention_references();
// The reference with every convention a library's divergence may take switched at once
// (ConventionSet::for_library), for divergences that compose two (fmin's tie split after clamp's
// blocked bound; JAX's flush to zero inside clamp's minimum-norm gradient): one entry per library
// that has conventions of its own, and first the entry "" with the "any" ones only, for every
// other library.
std::vector<std::pair<std::string, std::unique_ptr<Backend>>> make_all_conventions_references();

// The LibTorch release this build links, "major.minor" ("1.13", "2.15"): tests that pin a
// behaviour one release has say for which.
std::string libtorch_release();

// Silences LibTorch's start-up and API log noise on this process's stderr: c10 and glog below
// ERROR (unless TORCH_CPP_LOG_LEVEL is set) and TORCH_WARN dropped on the calling thread. Called
// first by every entry point (the fuzz targets, `burnmark`); idempotent.
void quiet_libtorch_logs();

// LibTorch eager on CPU, float32, autograd. intra_op_threads <= 0 keeps LibTorch's default.
std::unique_ptr<Backend> make_libtorch_backend(int intra_op_threads);
// The intra-op threads of "libtorch-threads" (libtorch in a child process), and of its
// reproducers.
inline constexpr int kThreadsVariantThreads = 4;

// LibTorch eager on the same values with every leaf and op result in a non-contiguous or
// misaligned layout (transposed storage, stride 2, storage offset 1): "libtorch-strided".
std::unique_ptr<Backend> make_libtorch_strided_backend();

// LibTorch eager with every float leaf a dual tensor, so that H·v (BURNMARK_HVP) is the
// tangent of gradients computed with create_graph: forward over reverse, through the
// forward-mode formulas of LibTorch's backward functions. "libtorch-fwd-over-rev".
std::unique_ptr<Backend> make_libtorch_fwd_over_rev_backend();

// LibTorch eager with every op that has an in-place form run as that form on a clone of its
// first operand (libtorch_inplace.h): "libtorch-inplace".
std::unique_ptr<Backend> make_libtorch_inplace_backend();

// The program as one TorchScript function, run by LibTorch's profiling executor until it has
// specialised, gradients from the JIT's autodiff: "libtorch-jit". With `fuse`, "libtorch-nnc":
// the TensorExpr fuser forced on for CPU as well.
std::unique_ptr<Backend> make_libtorch_jit_backend(bool fuse);

// What the executor made of the last program a JIT backend ran (all zero for other backends):
// evidence that a variant really took its path, since one that never fuses tests nothing.
struct JitGraphCounts {
  int fusion_groups = 0;         // prim::TensorExprGroup nodes: NNC kernels
  int differentiable_graphs = 0; // prim::DifferentiableGraph: the JIT's own autodiff
  int type_guards = 0;           // TypeCheck / RequiresGradCheck: shape-specialised code
};
JitGraphCounts jit_graph_counts(const Backend& backend);

} // namespace burnmark
