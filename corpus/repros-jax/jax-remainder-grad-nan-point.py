#!/usr/bin/env python3
# jax-remainder-grad-nan-point (bugs.md): remainder(inf, 1)'s gradient in the divisor is -inf where the value is NaN
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
value = jnp.remainder(jnp.float32(np.inf), jnp.float32(1))
grad = jax.jit(jax.grad(jnp.remainder, argnums=1))(jnp.float32(np.inf), jnp.float32(1))
print("remainder(inf, 1):", value, " its gradient in the divisor:", grad, " right: nan (no derivative where the value is NaN)")
sys.exit(0 if np.isnan(grad) else 1)
