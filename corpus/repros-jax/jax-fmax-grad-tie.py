#!/usr/bin/env python3
# jax-fmax-grad-tie (bugs.md): jnp.fmax at a tie gives the gradient to the second operand
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the other side (a choice, not a wrong value), 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(jnp.fmax, argnums=(0, 1)))(jnp.float32(-0.75), jnp.float32(-0.75))
print("fmax(a, b) at a = b = -0.75, gradients (a, b):", grad, " the reference's: (1, 0) (LibTorch: 0.5, 0.5)")
sys.exit(0 if grad[0] == 1 and grad[1] == 0 else 1)
