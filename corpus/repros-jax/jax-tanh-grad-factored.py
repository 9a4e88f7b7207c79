#!/usr/bin/env python3
# jax-tanh-grad-factored (bugs.md): tanh's JVP (g + g * y) * (1 - y) gives NaN for g = -inf at y = tanh(0) = 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
f = jax.jit(jax.grad(lambda x, a: (a * jnp.tanh(x)).sum()))
grad = f(jnp.array([0.0], jnp.float32), jnp.array([-np.inf], jnp.float32))
print("d/dx (-inf * tanh(x)) at x = 0:", grad[0], " right: -inf (-inf * tanh'(0) = -inf * 1)")
sys.exit(0 if grad[0] == -np.inf else 1)
