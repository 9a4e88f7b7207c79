#!/usr/bin/env python3
# jax-var-grad-overflow (bugs.md): x * var(x) at [1e20, 0]: the gradient of x_0 is NaN, not inf
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(lambda x: jnp.sum(x * jnp.var(x, ddof=1))))(jnp.array([1e20, 0.0], jnp.float32))
print("gradient of sum(x * var(x)) at [1e20, 0]:", grad, " right: [inf, nan] (var = 5e39 overflows; x_1: inf - inf)")
sys.exit(0 if grad[0] == np.inf else 1)
