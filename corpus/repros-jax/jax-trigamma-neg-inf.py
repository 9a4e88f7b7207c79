#!/usr/bin/env python3
# jax-trigamma-neg-inf (bugs.md): digamma'(-inf) is +inf; trigamma has no limit at -inf (NaN)
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import digamma, polygamma

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([-np.inf], jnp.float32)
grad = jax.jit(jax.grad(lambda x: digamma(x).sum()))(x)
print("digamma(-inf):", digamma(x)[0], " digamma'(-inf):", grad[0],
      " right: nan (trigamma oscillates between about pi^2 and +inf as x -> -inf)")
sys.exit(0 if np.isnan(grad[0]) else 1)
