#!/usr/bin/env python3
# jax-scatter-min-self-grad (bugs.md): x.at[i].min(s) under jit: self not the minimum gets -2^-24 * g, not 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
x = jnp.array([-0.5], jnp.float32)
s = jnp.array([1.25, 0.0, -2.5], jnp.float32)
f = lambda x, s: x.at[jnp.array([0, 0, 0])].min(s).sum()
jitted = jax.jit(jax.grad(f))(x, s)
eager = jax.grad(f)(x, s)
print("d/dself under jit:", jitted[0], " op by op:", eager[0], " right: 0 (min is s[2] = -2.5)")
sys.exit(1 if jitted[0] != 0 else 0)
