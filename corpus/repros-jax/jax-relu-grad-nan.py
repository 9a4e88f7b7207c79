#!/usr/bin/env python3
# jax-relu-grad-nan (bugs.md): relu'(NaN) is 0 (select(x > 0, g, 0)); PyTorch's formula gives g
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([jnp.nan], jnp.float32)
grad = jax.jit(jax.grad(lambda x: jax.nn.relu(x).sum()))(x)
print("relu(NaN):", jax.nn.relu(x)[0], " relu'(NaN):", grad[0],
      "reference: 1.0 (derivatives.yaml threshold_backward passes g unless result <= 0)")
sys.exit(1 if grad[0] != 1.0 else 0)
