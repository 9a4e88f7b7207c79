// The fixed Python text of the reproducer (python_repro.cpp): imports, constants, and the
// helper functions a script defines after its main(), each emitted only when the script uses it.
#pragma once

#include <string>

namespace burnmark::python_snippets {

// Only the modules the script uses: struct for bit-pattern leaves, F for torch.nn.functional
// calls, fwAD for forward mode.
inline std::string imports(bool bits, bool functional, bool forward_ad) {
  std::string out = "\nimport math\n";
  if (bits) out += "import struct\n";
  out += "import sys\n\nimport torch\n";
  if (forward_ad) out += "import torch.autograd.forward_ad as fwAD\n";
  if (functional) out += "import torch.nn.functional as F\n";
  return out;
}

inline constexpr const char* kConstants = R"(
nan = float("nan")
inf = float("inf")
)";

// Only when some leaf value has no exact decimal spelling (a NaN with a payload or a sign).
inline constexpr const char* kBitsHelper = R"(
def leaf(shape, requires_grad, bits):
    """A DTYPE leaf from exact bit patterns (float64 ones in a float64 program, whose values need
    not be floats, float32 ones otherwise), so that NaN payloads, -0 and subnormals survive
    (every value is exact in DTYPE)."""
    wide = DTYPE == torch.float64
    raw = bytearray(struct.pack("=%d%s" % (len(bits), "Q" if wide else "I"), *bits))
    t = torch.frombuffer(raw, dtype=torch.float64 if wide else torch.float32)
    return t.clone().reshape(shape).to(DTYPE).requires_grad_(requires_grad)

)";

// Only when some leaf has a layout (burnmark/ir/layout.h).
inline constexpr const char* kLeafLayoutHelper = R"(
def as_laid_out(values, stride, offset, storage):
    """The values of `values` as a view, at these strides and storage offset, of a fresh buffer
    of `storage` elements (NaN where the view does not reach): a BurnMark leaf layout. A stride-0
    dim is an expanded one: the buffer holds its index 0 (all its values are equal)."""
    buffer = torch.full((storage,), nan, dtype=values.dtype)
    compact = values.detach()
    for d, s in enumerate(stride):
        if s == 0:
            compact = compact.narrow(d, 0, 1)
    buffer.as_strided(compact.shape, stride, offset).copy_(compact)
    return buffer.as_strided(values.shape, stride, offset)

)";

inline constexpr const char* kHelpers = R"(
# ---- Checking: BurnMark's comparison, so that the exit status says whether PyTorch agrees ----


def versions():
    """What a report needs: the PyTorch release and the CPU kernel set it dispatched to."""
    cpu = getattr(torch.backends, "cpu", None)
    capability = cpu.get_cpu_capability() if cpu and hasattr(cpu, "get_cpu_capability") else "?"
    return "torch %s, CPU kernels %s" % (torch.__version__, capability)


def diverges(got, expected, bound):
    """NaN vs non-NaN diverges, two NaNs agree, infinities must match exactly (sign included).
    Finite values: with no bound (None), diverge when |got - expected| > TOLERANCE * max(1,
    |got|, |expected|); with a bound E (the rounding a correct implementation may add), when
    |got - expected| > E + TOLERANCE * max(|got|, |expected|), relative only, unless E reaches
    zero (0 < E >= |expected|: zero up to rounding), where the max takes 1 too. An infinite
    bound means either answer is right."""
    if bound is not None and not bound < math.inf:
        return False
    if math.isnan(got) or math.isnan(expected):
        return not (math.isnan(got) and math.isnan(expected))
    if math.isinf(got) or math.isinf(expected):
        return got != expected
    larger = max(abs(got), abs(expected))
    if bound is None:
        return abs(got - expected) > TOLERANCE * max(1.0, larger)
    if 0 < bound and abs(expected) <= bound:
        larger = max(1.0, larger)
    return abs(got - expected) > bound + TOLERANCE * larger


def check(name, got, expected, bounds=None):
    """Prints PyTorch's values beside the expected ones (every element of small tensors, only
    the diverging ones of large tensors) and returns how many diverge."""
    values = got.detach().double().flatten().tolist()
    if len(values) != len(expected):
        print("%s: torch has %d elements, expected %d  <-- DIVERGES" % (name, len(values), len(expected)))
        return 1
    bounds = bounds or [None] * len(expected)
    bad = 0
    for i, (v, e) in enumerate(zip(values, expected)):
        d = diverges(v, e, bounds[i])
        bad += d
        if d or len(values) <= 64:
            print("%s[%d]  torch % .9g  expected % .17g%s" % (name, i, v, e, "  <-- DIVERGES" if d else ""))
    print("%s: %d of %d elements diverge" % (name, bad, len(values)))
    return bad


def grad_of(t):
    """A leaf the root does not depend on has no gradient; it is zero."""
    return t.grad if t.grad is not None else torch.zeros_like(t)

)";

// Forward mode: BurnMark's leaf_tangent (driver.h), the same formula.
inline constexpr const char* kTangentHelpers = R"(
TANGENT_STEPS = [1.0, -0.5, 2.0, -1.5, 0.75, -1.0, 0.25, -2.0]


def tangent(shape, leaf_index):
    """The direction leaf number leaf_index is differentiated along: nonzero, exact in DTYPE."""
    n = math.prod(shape)
    steps = [TANGENT_STEPS[(i * 3 + leaf_index * 5) % 8] for i in range(n)]
    return torch.tensor(steps, dtype=torch.float32).reshape(shape).to(DTYPE)


def tangent_of(t):
    """A root no tangent reached has derivative zero along it."""
    found = fwAD.unpack_dual(t).tangent
    return found if found is not None else torch.zeros_like(t)

)";

// Second order: H·v as BurnMark's libtorch backend computes it (libtorch_framework.cpp).
inline constexpr const char* kHessianHelper = R"(
def hessian_vector(root, leaves, directions):
    """Each leaf's H·v by double backward: the gradients with create_graph, then the gradient
    of sum <gradient, v>; zero for a leaf nothing second-order reaches."""
    grads = torch.autograd.grad(root, leaves, torch.ones_like(root), retain_graph=True,
                                create_graph=True, allow_unused=True)
    objective = None
    for g, v in zip(grads, directions):
        if g is not None and g.requires_grad:
            term = (g * v).sum()
            objective = term if objective is None else objective + term
    if objective is None:
        return [torch.zeros_like(leaf) for leaf in leaves]
    hv = torch.autograd.grad(objective, leaves, retain_graph=True, allow_unused=True)
    return [h if h is not None else torch.zeros_like(leaf) for h, leaf in zip(hv, leaves)]


def hessian_by_dual(root, leaves):
    """Each leaf's H·v by forward over reverse: inside the dual level the gradients, taken with
    create_graph, are dual tensors, and their tangents are H·v."""
    grads = torch.autograd.grad(root, leaves, torch.ones_like(root), retain_graph=True,
                                create_graph=True, allow_unused=True)
    out = []
    for g, leaf in zip(grads, leaves):
        found = None if g is None else fwAD.unpack_dual(g).tangent
        out.append(found if found is not None else torch.zeros_like(leaf))
    return out

)";

// libtorch-strided's layouts, the same views and copies as with_register_layout.
inline constexpr const char* kLayoutHelper = R"(
def layout(t, reg):
    """The same values in register reg's layout: reg % 3 == 0 transposed storage, 1 every other
    element (stride 2), 2 storage offset 1; rank < 2 takes stride 2, one element the offset."""
    kind = reg % 3
    if t.numel() <= 1:
        kind = 2
    if kind == 0 and t.dim() < 2:
        kind = 1
    if kind == 0:
        rev = list(range(t.dim()))[::-1]
        return t.permute(rev).contiguous().permute(rev)
    if kind == 1:
        return torch.stack([t, t], -1).select(-1, 0)
    return torch.cat([t.new_zeros(1), t.flatten()]).narrow(0, 1, t.numel()).view(t.shape)

)";

} // namespace burnmark::python_snippets
