// `burnmark repro --lang cpp|python [--out DIR] [--no-minimize] [--forward-only] FILE`: from a
// diverging program to a reproducer a library maintainer can run without BurnMark. The program
// is minimised first (triage's minimiser) and the expected values are the reference backend's
// (BACKENDS' first entry) on the program actually written out.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "app.h"
#include "burnmark/backends/builtin.h"
#include "burnmark/campaign/repro_files.h"
#include "burnmark/triage/signature.h"
#include "burnmark/triage/triage.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

namespace {

// A corpus/bugs program's "# finding:" header (why its expected value is right), or "".
std::string finding_line(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# finding:")) return line.substr(10);
    if (!line.starts_with("#")) break;
  }
  return "";
}

std::optional<ReproLang> lang_from_name(std::string_view l) {
  if (l == "cpp" || l == "c++") return ReproLang::Cpp;
  if (l == "python" || l == "py") return ReproLang::Python;
  return std::nullopt;
}

std::optional<ReproPath> path_from_name(std::string_view p) {
  if (p == "eager") return ReproPath::Eager;
  if (p == "scalar") return ReproPath::Scalar;
  if (p == "strided") return ReproPath::Strided;
  if (p == "inplace") return ReproPath::Inplace;
  if (p == "jit") return ReproPath::Jit;
  if (p == "nnc") return ReproPath::Nnc;
  if (p == "compile") return ReproPath::Compile;
  return std::nullopt;
}

bool diverging(const Verdict& verdict, std::string_view backend) {
  return std::any_of(verdict.divergences.begin(), verdict.divergences.end(),
                     [&](const Divergence& d) { return d.backend == backend; });
}

struct ReproArgs {
  std::string lang, path, file;
  std::optional<std::string> out;
  bool minimize_first = true;
  bool gradients = true;
};

int write_reproducer(const ReproArgs& a) {
  const std::optional<ReproLang> lang = lang_from_name(a.lang); // checked while parsing
  const std::optional<ReproPath> path = a.path.empty() ? std::nullopt : path_from_name(a.path);
  const std::optional<std::string>& out = a.out;
  const bool minimize_first = a.minimize_first, gradients = a.gradients;
  const Config config = config_or_exit();
  auto backends = make_backends_or_report(config);
  if (!backends) return kExitUsage;
  const std::optional<Program> program = load_program(a.file, generator_options(config, *backends));
  if (!program) return kExitUsage;
  std::vector<Backend*> raw;
  for (const auto& b : *backends)
    raw.push_back(b.get());
  const std::unique_ptr<ConventionJudge> conventions = convention_judge_for(config);
  Runner runner(raw, oracle_options_for(config, gradients, *backends), conventions.get());

  const std::optional<Finding> finding = analyse(runner, *program);
  if (!finding) {
    fmt::print(stderr, "burnmark: repro: {}: the backends agree, nothing to reproduce\n", a.file);
    return kExitDivergence;
  }
  Program chosen = *program;
  Signature signature;
  if (minimize_first) {
    Characterization c = characterize(runner, *program, *finding);
    chosen = std::move(c.minimized);
    signature = std::move(c.signature);
  } else {
    signature = make_signature(chosen, finding->verdict);
  }
  const std::string title = fmt::format("burnmark {}: {} ({})", signature.id,
                                        op_sequence(signature), fmt::join(signature.kinds, ", "));
  std::string error;
  std::optional<ReproCase> repro = reference_repro_case(
      *raw.front(), chosen, title, config.tolerance, run_options(config, gradients), error);
  if (!repro) return usage_error(fmt::format("repro: {}: {}", a.file, error));
  repro->why = finding_line(a.file);
  const std::optional<ReproPath> needed = repro_path_for(finding->verdict);
  // Say so rather than hand over, silently, a reproducer that may agree.
  if (!path && !needed)
    fmt::print(stderr,
               "burnmark: repro: note: no reproducer path for {} (the diverging backend); this one "
               "runs LibTorch eager and may agree\n",
               finding->verdict.divergences.front().backend);
  repro->path = path.value_or(needed.value_or(ReproPath::Eager));
  // libtorch-threads is eager libtorch on more threads: same path, its thread count.
  // libtorch-fwd-over-rev: eager too, H·v by forward over reverse.
  if (repro->check_hvp && !diverging(finding->verdict, "libtorch") &&
      diverging(finding->verdict, "libtorch-fwd-over-rev"))
    repro->hvp_forward_over_reverse = true;
  if (repro->path == ReproPath::Eager && !diverging(finding->verdict, "libtorch") &&
      diverging(finding->verdict, "libtorch-threads"))
    repro->intra_op_threads = kThreadsVariantThreads;
  repro->compile_dynamic = config.compile_dynamic != 0;

  const std::string name = "repro_" + signature.id;
  if (!out) {
    // Stdout is the reproducer itself, so `burnmark repro --lang python F > r.py` just works.
    try {
      fmt::print("{}",
                 *lang == ReproLang::Cpp ? emit_cpp_repro(*repro) : emit_python_repro(*repro));
    } catch (const std::invalid_argument& e) {
      return usage_error(fmt::format("repro: the emitter refused the case: {}", e.what()));
    }
    return kExitAgree;
  }
  ReproFiles files;
  error = write_repro(*out, name, *repro, *lang, files);
  if (!error.empty()) return usage_error(fmt::format("repro: {}", error));
  for (const std::filesystem::path& p : {files.cpp, files.cmake, files.python})
    if (!p.empty()) fmt::print("{}\n", p.string());
  fmt::print(stderr, "burnmark: repro: signature {} ({} statements) written to {}\n", signature.id,
             chosen.stmts.size(), *out);
  return kExitAgree;
}

} // namespace

Action define_repro(CLI::App& app) {
  auto a = std::make_shared<ReproArgs>();
  app.add_option("--lang", a->lang, "a LibTorch C++ program (+ CMakeLists.txt) or a PyTorch script")
      ->type_name("cpp|python")
      ->required()
      ->check(check_with([](const std::string& l) {
        return lang_from_name(l) ? std::string()
                                 : fmt::format("unknown language '{}' (cpp or python)", l);
      }));
  app.add_option("--path", a->path,
                 "the path of LibTorch the reproducer takes (default: the one that diverges)")
      ->type_name("eager|scalar|strided|inplace|jit|nnc|compile")
      ->check(check_with([](const std::string& p) {
        return path_from_name(p)
                   ? std::string()
                   : fmt::format(
                         "unknown path '{}' (eager, scalar, strided, inplace, jit, nnc or compile)",
                         p);
      }));
  app.add_option_function<std::string>(
         "--out", [a](const std::string& dir) { a->out = dir; },
         "write the reproducer's files into DIR (default: print it on stdout)")
      ->type_name("DIR");
  app.add_flag_callback(
      "--no-minimize", [a] { a->minimize_first = false; }, "keep the program as it is");
  app.add_flag_callback(
      "--forward-only", [a] { a->gradients = false; },
      "values only, no gradients (as fuzz_tensor_ops)");
  app.add_option("FILE", a->file, "a diverging program: text or a raw fuzzer input (crash-*)")
      ->required();
  return [a](std::span<const std::string>) { return write_reproducer(*a); };
}

} // namespace burnmark::cli
