#!/usr/bin/env python3
# jax-digamma-zero (bugs.md): digamma(+0), digamma(-0) are NaN; the one-sided limits are -inf, +inf
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import digamma, polygamma

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([0.0, -0.0], jnp.float32)
value = jax.jit(digamma)(x)
print("digamma([+0, -0]):", value, "right: [-inf, inf] (as scipy.special.digamma and torch.digamma)")
sys.exit(0 if value[0] == -np.inf and value[1] == np.inf else 1)
