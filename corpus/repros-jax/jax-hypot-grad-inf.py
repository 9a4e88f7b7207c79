#!/usr/bin/env python3
# jax-hypot-grad-inf (bugs.md): hypot(0, -inf)'s gradient in x is NaN; x / hypot(x, y) = 0 / inf = 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(jnp.hypot))(jnp.float32(0), jnp.float32(-np.inf))
print("d/dx hypot(x, -inf) at x = 0:", grad, " right: 0 (x / hypot = 0 / inf)")
sys.exit(0 if grad == 0 else 1)
