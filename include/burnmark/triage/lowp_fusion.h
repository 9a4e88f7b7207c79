// Inductor's low-precision fusion (issue 32): in a bf16 or f16 program torch.compile keeps the
// intermediates of fused pointwise ops in f32 and rounds once, at the kernel's end, where eager
// PyTorch (and the reference, which models the program's per-op dtype) rounds after every op.
// PyTorch documents this as intended, and asks fuzzer reporters to file a compile numerics
// difference only when the compiled result is further from a float64 baseline than eager's. This
// is that rule, in one place: judge_lowp_fusion().
#pragma once

#include <vector>

#include "burnmark/driver/driver.h"
#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/conventions.h"

namespace burnmark {

// Not in conventions.def: that registry holds the reference's switchable sides, and the
// reference cannot switch to "round once per fused kernel" (which ops Inductor fuses is its own
// decision). The documentation that makes it intended:
// - torch/_inductor/config.py, the comment above `emulate_precision_casts` (torch 2.15.0): "When
//   two low precision operators are fused together, Inductor will elide the downcast-upcast pairs
//   [...] Typically, Inductor's behavior should be closer to fp64 ref numerics."; documented in
//   pytorch/pytorch#145579;
// - pytorch/pytorch#183761: the maintainers call it "intended Inductor behavior";
//   TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1 gives eager's numerics.
inline constexpr BackendConvention kInductorLowpFusion{
    "inductor-lowp-fusion",
    "torch.compile keeps fused pointwise intermediates of a bf16/f16 program in f32 and rounds "
    "once (eager rounds after every op); compiled is nowhere further from the float64 baseline "
    "than eager (docs: pytorch/pytorch#145579; TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1 gives "
    "eager's numerics)",
    "https://github.com/pytorch/pytorch/blob/main/torch/_inductor/config.py",
    "https://github.com/pytorch/pytorch/issues/183761"};

// A bf16 or f16 program where the compiled backend (Verdict::compile, torch-compile beside an
// eager PyTorch) diverges: the only case the rule is for. f32 and f64 programs never are.
bool lowp_fusion_applies(const Program& program, const Verdict& verdict);

// PyTorch's rule for a compile numerics report. `f64` is the reference's outcome on the same
// program in f64 (with_float_dtype: bf16 and f16 leaves are exact in f64). Over every tensor the
// compiled backend diverges on (forward, tangent, gradients, H·v), element by element: compiled is
// further when |compiled - f64| > |eager - f64|, where a NaN or an infinity is at distance 0 from
// itself and infinitely far from anything else (so a non-finite compiled where eager and f64 are
// finite is further). True when compiled is further nowhere: the divergence is explained. False
// otherwise, or when a divergence is not of values (an error, a shape, a crash) or a side has no
// values; then each compiled value divergence's detail in `verdict` says which side is closer to
// the f64 baseline.
bool judge_lowp_fusion(const std::vector<Outcome>& outcomes, Verdict& verdict, const Outcome& f64);

} // namespace burnmark
