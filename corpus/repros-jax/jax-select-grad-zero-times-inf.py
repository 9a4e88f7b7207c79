#!/usr/bin/env python3
# jax-select-grad-zero-times-inf (bugs.md): log(max([0, -1]))'s gradient in the unselected element is 0, not 0 * inf = NaN
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(lambda x: jnp.log(jnp.max(x))))(jnp.array([0.0, -1.0], jnp.float32))
print("gradient of log(max(x)) at [0, -1]:", grad, " right: [inf, nan] (0 * log'(0) = 0 * inf)")
sys.exit(0 if np.isnan(grad[1]) else 1)
