#!/usr/bin/env python3
# jax-std-grad-zero-spread (bugs.md): the gradient of jnp.std at a row of equal values is NaN
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the reference's;
# exit status 1 while JAX gives NaN, 0 once it gives a subgradient (0 is the minimum-norm one).
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([[0.0, 0.0]], jnp.float32)
grad = jax.jit(jax.grad(lambda x: jnp.std(x, axis=1, ddof=1).sum()))(x)
print("std([0, 0]):", jnp.std(x, axis=1, ddof=1)[0], " gradient:", grad[0],
      " reference: [0, 0] (std is not differentiable there; 0 is a subgradient, NaN is not)")
sys.exit(1 if np.any(np.isnan(np.asarray(grad))) else 0)
