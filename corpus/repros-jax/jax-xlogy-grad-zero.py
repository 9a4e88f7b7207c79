#!/usr/bin/env python3
# jax-xlogy-grad-zero (bugs.md): xlogy(0, 0)'s gradient in x is -inf (log 0) where the reference and LibTorch say 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the other value (a choice at a discontinuity), 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(jax.scipy.special.xlogy))(jnp.float32(0), jnp.float32(0))
print("d/dx xlogy(x, 0) at x = 0:", grad, " the reference's: 0 (LibTorch's xlogy(x != 0, y))")
sys.exit(0 if grad == 0 else 1)
