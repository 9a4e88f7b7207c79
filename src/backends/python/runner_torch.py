"""The torch runner of the Python backends: torch-eager-py (PyTorch eager, which must agree bit for
bit with the C++ libtorch backend on the same release) and torch-compile (the function through
torch.compile: Inductor, CPU, fullgraph; backward through AOTAutograd). Each step mirrors
LibTorchFramework (src/backends/libtorch/libtorch_framework.cpp) and the driver's walk
(include/burnmark/driver/driver.h): leaves made in float64 then converted, ones-seeded backward,
forward mode at one dual level left before reverse mode, H·v by double backward."""

import collections
import warnings

# torch warns at import when numpy is missing; nothing here uses numpy.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import torch  # noqa: E402
import torch.autograd.forward_ad as fwAD  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from runner_common import Unsupported, first_line, zeros  # noqa: E402

DTYPES = {"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16, "f16": torch.float16}

# Compiled functions kept (least recently used dropped): each holds Inductor's kernels.
COMPILE_CACHE_SIZE = 512


def lacks_forward_mode(message):
    # LibTorch's documented words for an op without a forward-mode derivative (libtorch_backend.cpp)
    return "Trying to use forward AD with" in message and "that does not support it" in message


def lacks_second_order(message):
    return message.startswith("derivative for aten::") and "_backward is not implemented" in message


class Runner:
    def __init__(self, options):
        self.compile = bool(options.get("compile", False))
        self.dynamic = bool(options.get("dynamic", False))
        threads = int(options.get("threads", 1))
        # As the libtorch backend: a fixed thread count, so sums and matmuls split the same way.
        if threads > 0 and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        if self.compile:
            import torch._dynamo as dynamo

            # Past the recompile limit Dynamo would fall back to eager silently: an error instead.
            if hasattr(dynamo.config, "fail_on_recompile_limit_hit"):
                dynamo.config.fail_on_recompile_limit_hit = True
        self.functions = {}  # source -> the exec'd function
        self.compiled = collections.OrderedDict()  # (source, dtype, shapes, grad) -> compiled
        self.hits = 0
        self.compiles = 0
        self.last = ""

    def platform(self):
        version = torch.__version__.split("+")[0]
        capability = torch.backends.cpu.get_cpu_capability()
        mode = "inductor" + (" dynamic" if self.dynamic else "") if self.compile else "eager"
        return "torch %s %s %s" % (version, mode, capability)

    def note(self):
        if not self.compile:
            return ""
        return "%s (compile cache: %d hits, %d compiles)" % (self.last, self.hits, self.compiles)

    def _function(self, source):
        fn = self.functions.get(source)
        if fn is None:
            namespace = {"torch": torch, "F": F, "nan": float("nan"), "inf": float("inf")}
            exec(compile(source, "<burnmark program>", "exec"), namespace)
            fn = namespace["program"]
            self.functions[source] = fn
            if len(self.functions) > 4 * COMPILE_CACHE_SIZE:
                self.functions.clear()
        return fn

    def _compiled(self, source, float_dtype, leaves, gradients):
        # A fresh function object per structure: Dynamo's guards then never see a second shape
        # or dtype for one code object, so its recompile limit is never the reason for a result.
        key = (source, float_dtype, tuple((k, tuple(s)) for k, s, _ in leaves), gradients)
        fn = self.compiled.get(key)
        if fn is not None:
            self.compiled.move_to_end(key)
            self.hits += 1
            self.last = "cache hit"
            return fn
        namespace = {"torch": torch, "F": F, "nan": float("nan"), "inf": float("inf")}
        exec(compile(source, "<burnmark program>", "exec"), namespace)
        fn = torch.compile(namespace["program"], fullgraph=True, dynamic=self.dynamic)
        self.compiled[key] = fn
        if len(self.compiled) > COMPILE_CACHE_SIZE:
            self.compiled.popitem(last=False)
        self.compiles += 1
        self.last = "compiled"
        return fn

    def run(self, source, float_dtype, leaves, gradients, tangents, hessian, directions=None):
        if self.compile and tangents is not None:
            raise Unsupported("forward-mode AD (torch.compile)")
        if self.compile and hessian:
            raise Unsupported("second-order AD (torch.compile: AOTAutograd has no double backward)")
        dtype = DTYPES[float_dtype]
        try:
            with torch.set_grad_enabled(gradients):
                return self._run(
                    source, dtype, float_dtype, leaves, gradients, tangents, hessian, directions
                )
        except Unsupported:
            raise
        except Exception as e:
            message = first_line(e)
            if (tangents is not None or hessian) and lacks_forward_mode(message):
                raise Unsupported(message)
            if hessian and lacks_second_order(message):
                raise Unsupported(message)
            if self.compile and type(e).__name__ == "Unsupported":  # Dynamo cannot capture it
                raise Unsupported("torch.compile: " + message)
            raise

    def _run(self, source, dtype, float_dtype, leaves, gradients, tangents, hessian, directions):
        def read(t):
            # A silent dtype promotion would be a finding, not something to convert away.
            if t.dtype != dtype:
                raise RuntimeError("torch returned dtype %s, not %s" % (t.dtype, dtype))
            c = t.detach()
            # sgn's backward hands autograd an "efficient zero tensor" without storage.
            if c._is_zerotensor():
                c = torch.zeros(c.shape, dtype=torch.float32)
            if c.dtype != torch.float64:
                c = c.to(torch.float32)  # exact for bf16 and f16; then widened as C++ does
            return (list(c.shape), c.reshape(-1).tolist())

        def host(values, shape):
            t = torch.tensor(values, dtype=torch.float64).reshape(shape)
            return t if dtype == torch.float64 else t.to(dtype)  # exact: values are in dtype

        made = []
        for kind, shape, values in leaves:
            if kind == "i64":
                made.append(torch.tensor(values, dtype=torch.int64).reshape(shape))
            else:
                t = host(values, shape)
                if gradients:
                    t.requires_grad_(True)
                made.append(t)
        fn = (
            self._compiled(source, float_dtype, leaves, gradients)
            if self.compile
            else self._function(source)
        )
        level = None
        try:
            args = made
            if tangents is not None:
                level = fwAD.enter_dual_level()
                args = [
                    fwAD.make_dual(t, host(u, leaf[1]), level=level) if leaf[0] == "float" else t
                    for t, leaf, u in zip(made, leaves, tangents)
                ]
            root = fn(*args)
            result = {"root": read(root), "grads": [], "tangent": None, "hvp": []}
            if tangents is not None:
                tangent = fwAD.unpack_dual(root, level=level).tangent
                if tangent is None:  # no tangent reached the root: its derivative is zero
                    tangent = torch.zeros_like(root.detach())
                result["tangent"] = read(tangent)
            # Reverse mode outside the level, as the libtorch backend runs it.
            if level is not None:
                fwAD.exit_dual_level(level=level)
                level = None
            if hessian:
                result["hvp"] = self._hessian_vector(root, made, leaves, directions, host, read)
            if gradients:
                root.backward(torch.ones_like(root))
                result["grads"] = [
                    read(t.grad) if t.grad is not None else zeros(leaf[1])
                    for t, leaf in zip(made, leaves)
                ]
            return result
        finally:
            if level is not None:
                fwAD.exit_dual_level(level=level)

    @staticmethod
    def _hessian_vector(root, made, leaves, directions, host, read):
        # LibTorchFramework::hessian_vector, step for step (the same sums in the same order).
        out = [zeros(leaf[1]) for leaf in leaves]
        picked = [k for k, t in enumerate(made) if t.requires_grad]
        if not picked or not root.requires_grad:
            return out
        inputs = [made[k] for k in picked]
        grads = torch.autograd.grad(
            [root], inputs, [torch.ones_like(root)], retain_graph=True, create_graph=True,
            allow_unused=True,
        )
        objective = None
        for i, g in enumerate(grads):
            # A gradient that does not depend on the leaves (a linear program's): no second order.
            if g is None or not g.requires_grad:
                continue
            k = picked[i]
            term = (g * host(directions[k], leaves[k][1])).sum()
            objective = term if objective is None else objective + term
        if objective is None:
            return out
        hv = torch.autograd.grad(
            [objective], inputs, retain_graph=True, create_graph=False, allow_unused=True
        )
        for i, h in enumerate(hv):
            if h is not None:
                out[picked[i]] = read(h)
        return out
