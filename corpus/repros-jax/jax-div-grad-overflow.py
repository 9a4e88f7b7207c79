#!/usr/bin/env python3
# jax-div-grad-overflow (bugs.md): d(a/b)/db = -a * b^-2 with b^-2 rounded first: overflows
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
a = jnp.array([1e-30], jnp.float32)
b = jnp.array([1e-20], jnp.float32)
grad = jax.jit(jax.grad(lambda a, b: (a / b).sum(), argnums=1))(a, b)
right = -((np.float64(a[0]) / np.float64(b[0])) / np.float64(b[0]))
print("a / b:", (a / b)[0], " d/db:", grad[0], " right:", np.float32(right), "(-(a / b) / b)")
sys.exit(0 if np.isfinite(grad[0]) and abs(float(grad[0]) - right) <= 1e-4 * abs(right) else 1)
