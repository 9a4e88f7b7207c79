#!/usr/bin/env python3
# jax-xla-log-exp-fold (bugs.md): under jit, log(exp(1.5e38)) is 1.5e38 (XLA folds log(exp(x)) to x)
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([1.5e38], jnp.float32)
value = jax.jit(lambda x: jnp.log(jnp.exp(x)))(x)
print("log(exp(1.5e38)):", value[0], " right: inf (exp(1.5e38) overflows f32)")
sys.exit(0 if value[0] == np.inf else 1)
