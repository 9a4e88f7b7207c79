#!/usr/bin/env python3
# jax-hardsigmoid-kink-rounding (bugs.md): hard_sigmoid'(2.9999998) is 0 (x + 3 rounds to relu6's kink at 6)
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(jax.nn.hard_sigmoid))(jnp.float32(2.9999998))
print("hard_sigmoid'(2.9999998):", grad, " right: 1/6 (2.9999998 < 3, inside the linear part)")
sys.exit(0 if abs(grad - 1 / 6) < 1e-6 else 1)
