#pragma once
#include <string>
#include "burnmark/ir/program.h"
namespace burnmark {
// One Python function computing the program's root from its leaves:
//   def program(r0, r2, ...):   # one parameter per leaf register, in leaf order
//       r1 = ...                # one statement per instruction / alias, named like registers
//       return r<root>
// `unsupported` names the first op (or attribute form) the framework lacks; source is then empty.
struct PythonFunction {
  std::string source;
  std::string unsupported;
};
PythonFunction torch_function(const Program& program);  // A: torch_source.cpp
PythonFunction jax_function(const Program& program);    // B: jax_source.cpp
} // namespace burnmark
