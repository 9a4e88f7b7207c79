// Builds the C ABI view (BurnmarkProgram) of a burnmark::Program for one plugin call. The view
// points into the Program (leaf data) and into buffers this object keeps between runs.
#pragma once

#include <vector>

#include "burnmark/ir/program.h"
#include "burnmark/plugin/plugin.h"

namespace burnmark {

BurnmarkShape to_abi_shape(const Shape& shape);

class AbiProgram {
public:
  // Valid until the next build() or until `program` changes or dies.
  const BurnmarkProgram& build(const Program& program);

private:
  std::vector<BurnmarkLeaf> leaves_;
  std::vector<BurnmarkStmt> stmts_;
  BurnmarkProgram view_{};
};

} // namespace burnmark
