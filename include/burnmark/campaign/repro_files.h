// From a (minimised) diverging program to reproducer files on disk: the expected values come
// from the reference backend (BACKENDS' first entry) run on that very program, and the sources
// from the burnmark_repro emitters. Shared by `burnmark repro` and the campaign.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "burnmark/driver/driver.h"
#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/repro/repro.h"

namespace burnmark {

// nullopt, with `error` set, when the reference fails on the program (then there are no
// expected values to check against).
// run says what to check: gradients, and the forward-mode tangent (Python only).
std::optional<ReproCase> reference_repro_case(Backend& reference, const Program& program,
                                              std::string title, double tolerance,
                                              const RunOptions& run, std::string& error);

// The path of PyTorch a finding's reproducer takes: eager when eager LibTorch diverges (the
// simplest reproducer), else the variant that does (torch-compile: ReproPath::Compile); nullopt
// when no diverging backend has a path of its own (a general child: form, a plugin).
std::optional<ReproPath> repro_path_for(const Verdict& verdict);

struct ReproFiles {
  std::filesystem::path cpp;   // empty unless written
  std::filesystem::path cmake; // CMakeLists.txt next to the .cpp
  std::filesystem::path python;
};

enum class ReproLang { Cpp, Python };

// Writes <dir>/<name>.cpp and <dir>/CMakeLists.txt (Cpp) or <dir>/<name>.py (Python), each
// atomically. "" on success, else the reason (an emitter refusing the case included).
std::string write_repro(const std::filesystem::path& dir, const std::string& name,
                        const ReproCase& repro, ReproLang lang, ReproFiles& written);

} // namespace burnmark
