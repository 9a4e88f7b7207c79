#!/usr/bin/env python3
# jax-trigamma-huge (bugs.md): trigamma(x) = 0 in f32 from x = 1e19 (zeta's q^-2 subnormal, flushed)
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import digamma, polygamma

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([2e19], jnp.float32)
grad = jax.jit(jax.grad(lambda x: digamma(x).sum()))(x)
tri = jax.jit(lambda x: polygamma(1, x))(x)
print("digamma'(2e19):", grad[0], " polygamma(1, 2e19):", tri[0], " right:", np.float32(1 / 2e19))
sys.exit(0 if abs(float(grad[0]) - 5e-20) <= 1e-4 * 5e-20 else 1)
