#!/usr/bin/env python3
# jax-mish-neg-inf (bugs.md): jax.nn.mish(-inf) is NaN (-inf * tanh(softplus(-inf)) = -inf * 0)
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([-np.inf], jnp.float32)
value = jax.jit(jax.nn.mish)(x)
grad = jax.jit(jax.grad(lambda x: jax.nn.mish(x).sum()))(x)
print("mish(-inf):", value[0], " mish'(-inf):", grad[0], " right: -0 and 0 (the limits)")
sys.exit(0 if value[0] == 0 and grad[0] == 0 else 1)
