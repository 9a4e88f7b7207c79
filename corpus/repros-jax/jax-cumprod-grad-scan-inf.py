#!/usr/bin/env python3
# jax-cumprod-grad-scan-inf (bugs.md): the gradient of cumprod past an infinite factor followed by
# zeros is NaN where reverse mode through y_k = y_(k-1) * x_k gives inf (JAX differentiates
# cumprod through a parallel prefix scan, which regroups the products so that inf * 0 is summed).
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's gradient and the right one;
# exit status 1 while JAX gives another value, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
inf = np.inf


def reverse_mode_by_hand(x):
    # d/dx_k sum_j y_j = y_(k-1) * r_k, with r_k = 1 + x_(k+1) * r_(k+1) (r_last = 1) and
    # y_(-1) = 1: the chain rule through y_k = y_(k-1) * x_k, evaluated in IEEE arithmetic.
    n = len(x)
    r = [1.0] * n
    for k in range(n - 2, -1, -1):
        r[k] = 1.0 + x[k + 1] * r[k + 1]
    y_prev, out = 1.0, []
    for k in range(n):
        out.append(y_prev * r[k])
        y_prev = y_prev * x[k]
    return out


f = jax.jit(jax.grad(lambda x: jnp.sum(jnp.cumprod(x, axis=0))))
wrong = 0
for x in ([1.0, inf, 0.0, 0.0], [1.0, -inf, 0.0, 0.0]):
    right = np.array(reverse_mode_by_hand(x), dtype=np.float32)
    grad = np.asarray(f(jnp.array(x, dtype=jnp.float32)))
    ok = np.array_equal(grad, right, equal_nan=True)
    wrong += not ok
    print("grad of sum(cumprod(%s)): %s  right: %s%s" % (x, grad.tolist(), right.tolist(), "" if ok else "  <-- WRONG"))
sys.exit(1 if wrong else 0)
