// Builds the C ABI view (BurnmarkProgram) of a burnmark::Program for one plugin call. The view
// points into the Program's shapes and into buffers this object keeps between runs: each leaf's
// values encoded in the program's float dtype (ABI v4), laid out contiguously or, when the
// plugin accepts strided inputs, in the leaf's declared layout (a view of a larger buffer).
#pragma once

#include <cstdint>
#include <vector>

#include "burnmark/driver/outcome.h"
#include "burnmark/ir/program.h"
#include "burnmark/plugin/loader.h"
#include "burnmark/plugin/plugin.h"

namespace burnmark {

BurnmarkShape to_abi_shape(const Shape& shape);
// The ABI's number for a float dtype (BURNMARK_DTYPE_*).
std::int32_t abi_dtype(FloatDType dtype);

class AbiProgram {
public:
  // Valid until the next build() or until `program` changes or dies. `layout` is how leaves are
  // laid out: Declared (each leaf's Leaf::layout) or a test's override (loader.h); Contiguous
  // unless the plugin accepts strided inputs for every op of the program.
  const BurnmarkProgram& build(const Program& program, PluginLeafLayout layout);
  // Per leaf, in leaf order: `values[k]` (contiguous, in the program's float dtype), or NULL data
  // for an index leaf. For run_jvp's tangents and run_hvp's directions; valid until the next call.
  const BurnmarkLeaf* directions(const Program& program, const std::vector<HostTensor>& values);

private:
  // Storage for one leaf: 8-byte aligned, sized in bytes.
  void* buffer(std::size_t bytes);
  BurnmarkLeaf encode(const Leaf& leaf, const std::vector<double>* values, FloatDType dtype,
                      PluginLeafLayout layout);

  std::vector<BurnmarkLeaf> leaves_;
  std::vector<BurnmarkLeaf> directions_;
  std::vector<std::vector<std::uint64_t>> buffers_;
  std::vector<BurnmarkStmt> stmts_;
  BurnmarkProgram view_{};
};

} // namespace burnmark
