// Reproducer files from the reference's values (see repro_files.h).
#include "burnmark/campaign/repro_files.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "burnmark/campaign/atomic_file.h"

namespace burnmark {

std::optional<ReproCase> reference_repro_case(Backend& reference, const Program& program,
                                              std::string title, double tolerance,
                                              const RunOptions& run, std::string& error) {
  const bool gradients = run.gradients;
  const Outcome o = reference.run(program, run);
  if (o.status != Status::Ok) {
    error = fmt::format("the reference ({}) cannot run the program: {}", o.backend, o.message);
    return std::nullopt;
  }
  ReproCase c;
  c.program = program;
  c.title = std::move(title);
  c.expected_root = o.root.values;
  c.root_bound = o.root.error_bound;
  c.tolerance = tolerance;
  c.check_gradients = gradients;
  c.check_tangent = run.tangents;
  c.expected_tangent = o.tangent.values;
  c.tangent_bound = o.tangent.error_bound;
  if (gradients) {
    if (o.grads.size() != program.leaves.size()) {
      error = fmt::format("the reference returned {} gradients for {} leaves", o.grads.size(),
                          program.leaves.size());
      return std::nullopt;
    }
    for (const HostTensor& g : o.grads) {
      c.expected_grads.push_back(g.values);
      c.grad_bounds.push_back(g.error_bound);
    }
  }
  c.check_hvp = run.hessian && gradients;
  if (c.check_hvp)
    for (const HostTensor& h : o.hvp) {
      c.expected_hvps.push_back(h.values);
      c.hvp_bounds.push_back(h.error_bound);
    }
  return c;
}

std::optional<ReproPath> repro_path_for(const Verdict& verdict) {
  const auto diverges = [&](std::string_view backend) {
    return std::any_of(verdict.divergences.begin(), verdict.divergences.end(),
                       [&](const Divergence& d) { return d.backend == backend; });
  };
  if (diverges("libtorch")) return ReproPath::Eager;
  if (diverges("libtorch-scalar")) return ReproPath::Scalar;
  if (diverges("libtorch-strided")) return ReproPath::Strided;
  if (diverges("libtorch-inplace")) return ReproPath::Inplace;
  if (diverges("libtorch-jit")) return ReproPath::Jit;
  if (diverges("libtorch-nnc")) return ReproPath::Nnc;
  if (diverges("libtorch-threads")) return ReproPath::Eager;
  if (diverges("libtorch-fwd-over-rev")) return ReproPath::Eager;
  if (diverges("torch-eager-py")) return ReproPath::Eager;
  if (diverges("torch-compile")) return ReproPath::Compile;
  return std::nullopt;
}

std::string write_repro(const std::filesystem::path& dir, const std::string& name,
                        const ReproCase& repro, ReproLang lang, ReproFiles& written) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create {}: {}", dir.string(), ec.message());
  try {
    switch (lang) {
    case ReproLang::Cpp: {
      const std::string file = name + ".cpp";
      std::string error = write_file_atomically(dir / file, emit_cpp_repro(repro));
      if (error.empty())
        error = write_file_atomically(dir / "CMakeLists.txt", emit_cpp_cmake(file));
      if (!error.empty()) return error;
      written.cpp = dir / file;
      written.cmake = dir / "CMakeLists.txt";
      return "";
    }
    case ReproLang::Python: {
      const std::string error =
          write_file_atomically(dir / (name + ".py"), emit_python_repro(repro));
      if (!error.empty()) return error;
      written.python = dir / (name + ".py");
      return "";
    }
    }
  } catch (const std::invalid_argument& e) {
    return fmt::format("the repro emitter refused the case: {}", e.what());
  }
  return "unknown language";
}

} // namespace burnmark
