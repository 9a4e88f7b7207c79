// What the reference's tape keeps between programs: a fuzzing process runs several references
// (the harness's, the known-bug filter's, the convention judge's) for hours, so the buffers a
// tape keeps for the next program must not grow with the largest programs it has met.
#include <gtest/gtest.h>

#include <vector>

#include "burnmark/driver/driver.h"
#include "libtorch_programs.h"
#include "tape.h"

using namespace burnmark;
using burnmark::testing::ProgramBuilder;

namespace {

// `ops` chained exps over a [32, 16, 16] leaf: 8,192 elements a node, every node with a
// gradient.
Program chain_of_exps(int ops) {
  ProgramBuilder b;
  Reg r = b.leaf({32, 16, 16}, std::vector<float>(32 * 16 * 16, 0.001f));
  for (int i = 0; i < ops; ++i)
    r = b.op(Op::Exp, {r});
  return b.finish(b.op(Op::SumAll, {r}));
}

} // namespace

TEST(ReferenceTape, KeepsAtMostABoundedArenaAfterALargeProgram) {
  ref::ReferenceFramework tape;
  const Outcome big = run_program(tape, chain_of_exps(24), RunOptions{true});
  ASSERT_EQ(big.status, Status::Ok) << big.message;
  // 25 nodes of 8,192 elements, values and gradients: far more than the tape may keep.
  EXPECT_GE(tape.kept_elements(), 2 * 25 * 8192);

  const Outcome small = run_program(tape, chain_of_exps(1), RunOptions{true});
  ASSERT_EQ(small.status, Status::Ok) << small.message;
  // The small program's own buffers (3 nodes, values and gradients) fit in what is kept...
  EXPECT_GE(tape.kept_elements(), 8192);
  // ... and the rest of the large one's are gone: 65,536 elements at most.
  EXPECT_LE(tape.kept_elements(), 65536);
}
