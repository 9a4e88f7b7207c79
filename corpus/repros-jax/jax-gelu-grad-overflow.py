#!/usr/bin/env python3
# jax-gelu-grad-overflow (bugs.md): gelu(-3e38)'s gradient with an upstream gradient of 3 is NaN, not 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
f = jax.jit(jax.grad(lambda x: 3 * jax.nn.gelu(x, approximate=False)))
grad = f(jnp.float32(-3e38))
print("d/dx 3 * gelu(x) at -3e38:", grad, " right: 0 (x * pdf(x) underflows to 0)")
sys.exit(0 if grad == 0 else 1)
