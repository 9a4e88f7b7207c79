// Builds the C ABI view (BurnmarkProgram) of a burnmark::Program for one plugin call. The view
// points into the Program (index data) and into buffers this object keeps between runs (the
// leaves' f32 values: the ABI carries f32, and plugins only run f32 programs).
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
  std::vector<float> values_; // every float leaf's data, back to back
  std::vector<BurnmarkStmt> stmts_;
  BurnmarkProgram view_{};
};

} // namespace burnmark
