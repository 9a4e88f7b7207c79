#!/usr/bin/env python3
# jax-logsumexp-grad-inf (bugs.md): the gradient of logsumexp at a row with one +inf is NaN for
# that element, where the softmax weight's limit is 1 (and at [-inf] alone, the identity, 1).
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's gradient and the right one;
# exit status 1 while JAX gives another value, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
inf = np.inf
f = jax.jit(jax.grad(lambda x: jax.nn.logsumexp(x, axis=0)))
# d/dx_j logsumexp(x) = exp(x_j) / sum_i exp(x_i): 0 for a finite x_j beside a +inf, 1 for the
# only +inf (the limit), and 1 for a one-element row (logsumexp is the identity there).
cases = [([inf, 1.0], [1.0, 0.0]), ([-inf], [1.0])]
wrong = 0
for x, right in cases:
    grad = np.asarray(f(jnp.array(x, dtype=jnp.float32)))
    ok = np.array_equal(grad, np.array(right, dtype=np.float32))
    wrong += not ok
    print("grad of logsumexp(%s): %s  right: %s%s" % (x, grad.tolist(), right, "" if ok else "  <-- WRONG"))
sys.exit(1 if wrong else 0)
