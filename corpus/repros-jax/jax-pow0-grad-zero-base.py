#!/usr/bin/env python3
# jax-pow0-grad-zero-base (bugs.md): d/dx jnp.power(x, 0.0) at x = 0 is NaN (0 * 0^-1)
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([0.0], jnp.float32)
grad = jax.jit(jax.grad(lambda x: jnp.power(x, 0.0).sum()))(x)
grad_int = jax.jit(jax.grad(lambda x: jnp.power(x, 0).sum()))(x)
print("d/dx power(x, 0.0) at 0:", grad[0], " with the integer exponent 0:", grad_int[0],
      " right: 0 (x^0 = 1 for every x)")
sys.exit(0 if grad[0] == 0 else 1)
