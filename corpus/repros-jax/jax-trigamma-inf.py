#!/usr/bin/env python3
# jax-trigamma-inf (bugs.md): digamma'(+inf) = trigamma(inf) is NaN; the limit is 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(jax.lax.digamma))(jnp.float32(np.inf))
print("digamma'(inf):", grad, " right: 0 (trigamma(x) ~ 1/x)")
sys.exit(0 if grad == 0 else 1)
