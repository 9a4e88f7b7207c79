#!/usr/bin/env python3
# jax-logit-grad-outside-domain (bugs.md): logit(-1)'s gradient is -0.5 where logit has no real value
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.float32(-1)
value = jax.scipy.special.logit(x)
grad = jax.jit(jax.grad(jax.scipy.special.logit))(x)
print("logit(-1):", value, " its gradient:", grad, " right: nan (no derivative where the value is NaN)")
sys.exit(0 if np.isnan(grad) else 1)
