// The torch emitter of the Python backends (python_source.h): the program as one Python function
// of its leaves, each instruction spelled by torch_python_call, the Python reproducer's own op
// table, so that torch-eager-py runs exactly what a Python repro of its finding runs.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/repro/python_call.h"
#include "python_source.h"

namespace burnmark {

PythonFunction torch_function(const Program& program) {
  std::vector<std::string> params;
  std::string body;
  for (std::size_t i = 0; i < program.stmts.size(); ++i) {
    const Stmt& s = program.stmts[i];
    switch (s.kind) {
    case StmtKind::Leaf: params.push_back(fmt::format("r{}", i)); break;
    // The same tensor object: autograd sees one node, as the libtorch backend's alias.
    case StmtKind::Alias: body += fmt::format("    r{} = r{}\n", i, s.source); break;
    case StmtKind::Op:
      body += fmt::format("    r{} = {}\n", i, torch_python_call(program, s.instr, false));
      break;
    }
  }
  // torch_python_call has a spelling for every op (its switch has no default), so torch lacks
  // nothing.
  return {fmt::format("def program({}):\n{}    return r{}\n", fmt::join(params, ", "), body,
                      program.root),
          {}};
}

} // namespace burnmark
