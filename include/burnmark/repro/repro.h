// Turns a finding into a self-contained reproducer a LibTorch maintainer can build and run
// without BurnMark: a C++ program (with its CMakeLists.txt) or a PyTorch script that runs the
// program op by op with plain library calls and exits non-zero when the library's values
// diverge from the expected ones. This library only emits source text; it never links LibTorch.
#pragma once

#include <string>
#include <vector>

#include "burnmark/ir/program.h"

namespace burnmark {

// Which of LibTorch's paths the reproducer takes: eager op by op; eager on LibTorch's scalar
// kernels (ATEN_CPU_CAPABILITY=default set before LibTorch dispatches anything, as
// libtorch-scalar); eager with every leaf and result re-laid out as libtorch-strided does
// (Strided); eager with each op that has an in-place form run as that form on a strided, offset
// view holding its first operand's values, as libtorch-inplace does (Inplace); or the program as
// one function scripted with torch.jit.script (libtorch-jit), optionally with the NNC fuser
// forced on for CPU (libtorch-nnc), run until the executor has specialised. Compile: the
// torch-compile backend's path, a script comparing eager, torch.compile(fullgraph=True) and a
// float64 baseline (emit_compile_repro; Python only).
enum class ReproPath { Eager, Scalar, Strided, Inplace, Jit, Nnc, Compile };

struct ReproCase {
  Program program;
  std::string title; // first line of the reproducer, e.g. "pow(x, 0.5) gradient at -0"
  // Why the expected values are right for this program, in words (a corpus/bugs file's
  // "# finding:" line); printed in the reproducer's header when set.
  std::string why;
  // Expected values, normally from the reference backend: the root, then one tensor per leaf
  // in leaf order (row-major, numel values each). expected_grads may be empty when
  // check_gradients is false.
  std::vector<double> expected_root;
  std::vector<std::vector<double>> expected_grads;
  // Per element, how far a correct implementation may land from the expected value (the
  // reference's error bound; +inf: either answer is right). Empty: 0 everywhere. They matter in
  // reduced-precision programs, where a correct result may be ulps of bf16 away.
  std::vector<double> root_bound;
  std::vector<std::vector<double>> grad_bounds;
  double tolerance = 1e-4; // values_diverge's tolerance (oracle.h): relative where bounded
  bool check_gradients = true;
  // Forward mode (Python, eager only): every float leaf made a dual tensor with leaf_tangent's
  // direction, and the root's tangent J·u checked against expected_tangent (bounds as above).
  bool check_tangent = false;
  std::vector<double> expected_tangent;
  std::vector<double> tangent_bound;
  // Second order (Python, not scripted, not with forward mode; needs check_gradients): each
  // float leaf's H·v by double backward, v = leaf_tangent, checked against expected_hvps (one
  // per leaf, index leaves included and skipped; bounds as above).
  bool check_hvp = false;
  // H·v the way libtorch-fwd-over-rev computes it: leaves dual from the start, the gradients'
  // tangents inside the dual level (instead of double backward).
  bool hvp_forward_over_reverse = false;
  std::vector<std::vector<double>> expected_hvps;
  std::vector<std::vector<double>> hvp_bounds;
  ReproPath path = ReproPath::Eager; // Strided, Inplace, Jit and Nnc: Python only
  int intra_op_threads = 1;          // libtorch-threads' findings: kThreadsVariantThreads
  bool compile_dynamic = false;      // Compile: torch.compile(dynamic=True), as the backend's knob
};

// Both emitters throw std::invalid_argument when the case is inconsistent (invalid program,
// expected values of the wrong length, gradients requested without one tensor per leaf).

// A single C++ translation unit against LibTorch (CPU, float32, one intra-op thread); eager, on
// the default or the scalar kernels.
std::string emit_cpp_repro(const ReproCase& repro);
// A CMakeLists.txt building `source_file_name` (placed next to it) against an installed LibTorch
// found with find_package(Torch); the executable is named after the file's stem.
std::string emit_cpp_cmake(const std::string& source_file_name);
// A Python 3 script against PyTorch, same program, same checks, same exit status (the Compile
// path: emit_compile_repro's script).
std::string emit_python_repro(const ReproCase& repro);
// The torch.compile reproducer (compile_repro.cpp), in the shape PyTorch's issue template asks
// fuzzer reporters for: fn run eagerly in the program's dtype, through torch.compile(fn,
// fullgraph=True) on CPU, and eagerly in float64 (the baseline), every input's shape, stride and
// dtype on its line, all three results printed (root, and each input's gradient when
// check_gradients); exit status 1 while the compiled result is further from the baseline than
// eager's at some element (by more than `tolerance` relative to the baseline), 0 otherwise. The
// expected values are not used: the baseline is PyTorch's own float64.
std::string emit_compile_repro(const ReproCase& repro);

} // namespace burnmark
