#!/usr/bin/env python3
# jax-xla-fusion-reorders (bugs.md): under jit, sum([3e38, -2^64] * 2^64) is inf (a fused multiply-add), not NaN
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
a = jnp.array([3e38, -(2.0**64)], jnp.float32)
b = jnp.array(2.0**64, jnp.float32)
value = jax.jit(lambda a, b: jnp.sum(a * b))(a, b)
print("sum([3e38, -2^64] * 2^64):", value, " right: nan (inf + -inf: -2^128 overflows f32)")
sys.exit(0 if np.isnan(value) else 1)
