#!/usr/bin/env python3
# jax-logcumsumexp-grad-replace-inf (bugs.md): the gradient of logcumsumexp under a +inf prefix
# gives a finite element the weight exp(x) instead of 0 (logaddexp's JVP replaces +inf by 0)
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's gradient and the right one;
# exit status 1 while JAX gives another value, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
inf = np.inf
f = jax.jit(jax.grad(lambda x: jnp.sum(jax.lax.cumlogsumexp(x, axis=0))))
# d/dx_j sum_k y_k = sum_{k >= j} exp(x_j - y_k): 0 where x_j is finite and y_k = +inf; for the
# only +inf of a prefix, the limit 1.
cases = [([0.0, inf], [1.0, 1.0]), ([1.0, inf, 2.0, 3.0], [1.0, 3.0, 0.0, 0.0])]
wrong = 0
for x, right in cases:
    grad = np.asarray(f(jnp.array(x, dtype=jnp.float32)))
    ok = np.allclose(grad, right, rtol=1e-6, atol=0)
    wrong += not ok
    print("grad of sum(cumlogsumexp(%s)): %s  right: %s%s" % (x, grad.tolist(), right, "" if ok else "  <-- WRONG"))
sys.exit(1 if wrong else 0)
