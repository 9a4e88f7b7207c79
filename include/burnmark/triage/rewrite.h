// Structural edits on a Program that keep it in SSA form: replacing a register by another,
// cutting a register into a fresh leaf, re-rooting, dropping dead code, resizing leaves, and
// re-inferring every shape afterwards. Shared by the minimiser and the parameter sweep, which
// both need "change one thing, then find out whether the result is still a legal program".
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "burnmark/ir/program.h"

namespace burnmark {

// Recomputes every register's shape from the leaves forward. nullopt when an op's operands or
// the result stop being legal, or when the program fails validate().
std::optional<Program> reinfer(Program program);

// Keeps only the statements the root depends on, drops leaves nothing reads, and renumbers
// registers and leaves (order preserved).
Program compact(const Program& program);

// Every use of `reg` (operands, alias sources, the root) reads `with` instead and `reg`'s
// statement disappears. `with` must be an earlier register. Shapes are NOT re-inferred: pass
// the result through reinfer() when `with` may have a different shape.
Program replace_register(const Program& program, Reg reg, Reg with);

// `reg` becomes a new leaf holding `data` (its shape stays `reg`'s shape). The operands that
// only fed `reg` become dead; compact() removes them.
Program cut_to_leaf(const Program& program, Reg reg, std::vector<double> data);

// Sets the root (then compacts, so the program only holds what the new root needs).
Program reroot(const Program& program, Reg root);

// `program` with its root multiplied by a new leaf holding `upstream` (rounded to the program's
// float dtype), which becomes the last leaf: the gradient reaching the old root is then `upstream`
// exactly (mul's gradient is the other factor times ones), where a plain program seeds ones. A
// fault in a backward that only permutes or scales its upstream gradient (flip, permute, repeat)
// maps ones to ones; weighted by the real upstream gradient it shows.
Program weighted(Program program, std::vector<double> upstream);

// A copy of `leaf` whose axis has `size` elements. Existing rows are kept (shrinking keeps the
// first `size`), new ones repeat the old ones cyclically, so every value stays one the
// original leaf held.
Leaf resize_axis(const Leaf& leaf, int axis, std::int64_t size);
// The same elements (f32 or index) in another shape of the same element count.
Leaf reshape_leaf(const Leaf& leaf, const Shape& shape);

// A copy of `leaf` keeping only rows start..start+size-1 of `axis`.
Leaf slice_axis(const Leaf& leaf, int axis, std::int64_t start, std::int64_t size);

} // namespace burnmark
