#!/usr/bin/env python3
# jax-expm1-grad-cancellation (bugs.md): expm1's JVP is g * (expm1(x) + 1), cancelling for x << 0
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's value and the right one;
# exit status 1 while JAX gives the wrong one, 0 once it agrees.
import sys

import jax
import jax.numpy as jnp
import numpy as np

print("jax", jax.__version__, jax.devices()[0].platform)
import math
x = jnp.array([-20.0], jnp.float32)
grad = jax.jit(jax.grad(lambda x: jax.nn.elu(x).sum()))(x)
print("elu'(-20):", grad[0], "right:", np.float32(math.exp(-20)))
y = jnp.array([-1.3], jnp.float32)
cgrad = jax.jit(jax.grad(lambda x: jax.nn.celu(x, alpha=0.1).sum()))(y)
print("celu'(-1.3, alpha=0.1):", cgrad[0], "right:", np.float32(math.exp(-13.0)))
ok = abs(float(grad[0]) - math.exp(-20)) <= 1e-4 * math.exp(-20)
ok = ok and abs(float(cgrad[0]) - math.exp(-13)) <= 1e-4 * math.exp(-13)
sys.exit(0 if ok else 1)
