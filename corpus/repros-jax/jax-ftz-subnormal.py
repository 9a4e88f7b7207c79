#!/usr/bin/env python3
# jax-ftz-subnormal (bugs.md): documented: XLA's CPU runtime flushes f32 subnormals to zero
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
# Documented in JAX's Sharp Bits ("Miscellaneous divergences from NumPy"); kept as a check.
x = jnp.array([1e-40], jnp.float32)
value = jax.jit(jax.nn.relu)(x)
grad = jax.jit(jax.grad(lambda x: jax.nn.relu(x).sum()))(x)
print("relu(1e-40):", value[0], "IEEE 754:", np.float32(1e-40))
print("relu'(1e-40):", grad[0], "math: 1.0")
sys.exit(1 if value[0] != np.float32(1e-40) or grad[0] != 1.0 else 0)
