"""The JAX runner of BurnMark's Python child backend `jax` (burnmark_child.py, issue 32).

Runs the function jax_source.cpp emits (`def program(r0, r2, ...)`) on the leaves it is sent,
and differentiates it: gradients by jax.vjp with a ones cotangent, J·u by jax.jvp, H·v forward
over reverse (jax.jvp of jax.grad of sum(root)). Index (i64) leaves are ordinary arguments that
are never differentiated: the differentiated function closes over them inside the jitted
computation, so new index values reuse the compiled code.

By default each (source, modes) pair is one jax.jit computation, cached by the source text (jit's
own cache then keys on the leaves' shapes and dtypes): that is what JAX users run, and it is the
only way a fuzzer gets through programs at a useful rate (op-by-op dispatch compiles and
launches every primitive on its own). `{"jit": False}` runs op by op instead, for telling an XLA
fusion's rounding from the op's own.
"""

import numpy as np

import jax

# f64 programs need x64; it is harmless for the others since every leaf is cast to the
# program's dtype and the emitted literals are weakly typed Python floats.
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402  (after the x64 switch, as JAX asks)
import jax.scipy.special as jss  # noqa: E402
from jax import lax  # noqa: E402

from runner_common import Unsupported, zeros  # noqa: E402


_DTYPES = {"f32": jnp.float32, "f64": jnp.float64, "bf16": jnp.bfloat16, "f16": jnp.float16}
# What the emitted source may name.
_GLOBALS = {"jax": jax, "jnp": jnp, "lax": lax, "jss": jss}


def _host(x):
    """(shape, values) of an array, values widened to Python floats."""
    a = np.asarray(x).astype(np.float64)
    return (list(a.shape), a.ravel().tolist())


class Runner:
    def __init__(self, options=None):
        options = dict(options or {})
        self.jit = bool(options.get("jit", True))
        self._programs = {}  # source text -> the exec'd `program`
        self._computations = {}  # (source, float mask, modes) -> the (jitted) computation

    def platform(self):
        device = jax.devices()[0].platform
        mode = "jit" if self.jit else "op-by-op"
        return "jax %s %s x64 %s" % (jax.__version__, device, mode)

    def _program(self, source):
        fn = self._programs.get(source)
        if fn is None:
            scope = dict(_GLOBALS)
            exec(compile(source, "<burnmark program>", "exec"), scope)
            fn = scope["program"]
            self._programs[source] = fn
        return fn

    def _computation(self, source, is_float, gradients, tangents, hessian):
        key = (source, is_float, gradients, tangents, hessian)
        comp = self._computations.get(key)
        if comp is not None:
            return comp
        program = self._program(source)

        def compute(floats, indices, directions):
            # The program as a function of its float leaves alone, the index leaves closed over.
            def of_floats(*fl):
                args, fi, ii = [], iter(fl), iter(indices)
                for f in is_float:
                    args.append(next(fi) if f else next(ii))
                return program(*args)

            out = {}
            if gradients:
                root, pullback = jax.vjp(of_floats, *floats)
                out["grads"] = pullback(jnp.ones_like(root))
            else:
                root = of_floats(*floats)
            out["root"] = root
            if tangents:
                out["tangent"] = jax.jvp(of_floats, tuple(floats), tuple(directions))[1]
            if hessian:
                def grad_of_sum(*fl):
                    return jax.grad(lambda *g: jnp.sum(of_floats(*g)),
                                    argnums=tuple(range(len(fl))))(*fl)

                out["hvp"] = jax.jvp(grad_of_sum, tuple(floats), tuple(directions))[1]
            return out

        comp = jax.jit(compute) if self.jit else compute
        self._computations[key] = comp
        return comp

    def run(self, source, float_dtype, leaves, gradients, tangents, hessian, directions=None):
        """tangents: J·u's directions or None; directions: H·v's v (burnmark_child.py sends the
        same leaf_tangent() directions for both), defaulting to tangents."""
        if directions is None:
            directions = tangents
        dtype = _DTYPES.get(float_dtype)
        if dtype is None:
            raise Unsupported("float dtype " + float_dtype)
        is_float = tuple(kind == "float" for kind, _, _ in leaves)
        floats, indices, dirs = [], [], []
        for k, (kind, shape, values) in enumerate(leaves):
            if kind == "float":
                host = np.asarray(values, dtype=np.float64).reshape(shape)
                floats.append(jnp.asarray(host, dtype=dtype))
                if tangents is not None or hessian:
                    if directions is None:
                        raise Unsupported("H·v needs the leaves' directions")
                    d = np.asarray(directions[k], dtype=np.float64).reshape(shape)
                    dirs.append(jnp.asarray(d, dtype=dtype))
            else:
                indices.append(jnp.asarray(np.asarray(values, dtype=np.int64).reshape(shape)))
        want_tangent = tangents is not None
        comp = self._computation(source, is_float, bool(gradients), want_tangent, bool(hessian))
        out = comp(floats, indices, dirs)
        result = {"root": _host(out["root"]), "grads": [], "tangent": None, "hvp": []}
        if want_tangent:
            result["tangent"] = _host(out["tangent"])

        # Per leaf in leaf order: the float leaves' derivatives, zeros for index leaves.
        def per_leaf(derivs):
            it = iter(derivs)
            return [_host(next(it)) if f else zeros(shape)
                    for f, (_, shape, _) in zip(is_float, leaves)]

        if gradients:
            result["grads"] = per_leaf(out["grads"])
        if hessian:
            result["hvp"] = per_leaf(out["hvp"])
        return result
