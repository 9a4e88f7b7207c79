#!/usr/bin/env python3
# jax-abs-grad-zero (bugs.md): abs'(+0) = abs'(-0) = 1 (select(x >= 0, g, -g)); sgn(0) = 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([0.0, -0.0], jnp.float32)
grad = jax.jit(jax.grad(lambda x: jnp.abs(x).sum()))(x)
print("abs'([+0, -0]):", grad, "reference: [0, 0] (sgn(0), jnp.sign(0.0) =", jnp.sign(0.0), ")")
sys.exit(1 if np.any(np.asarray(grad) != 0) else 0)
