#!/usr/bin/env python3
# jax-trigamma-negative (bugs.md): digamma's gradient (trigamma) is wrong below about -8.5 in float32
# Standalone: needs only jax (0.10.2 measured, CPU). Prints JAX's values and the right ones;
# exit status 1 while JAX gives the wrong ones, 0 once it agrees.
import math
import sys

import jax
import jax.numpy as jnp


def trigamma(x):
    # float64 reference: reflection psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x), then the
    # recurrence psi'(y) = psi'(y + 1) + 1 / y^2 up to y >= 20 and the asymptotic series there.
    if x < 0.5:
        return (math.pi / math.sin(math.pi * x)) ** 2 - trigamma(1 - x)
    acc = 0.0
    while x < 20:
        acc += 1 / (x * x)
        x += 1
    inv = 1 / x
    return acc + inv + inv**2 / 2 + inv**3 / 6 - inv**5 / 30 + inv**7 / 42 - inv**9 / 30


print("jax", jax.__version__, jax.devices()[0].platform)
grad = jax.jit(jax.grad(jax.scipy.special.digamma))
wrong = False
for x in (-24.973679, -9.5, -16.5):
    got = float(grad(jnp.float32(x)))
    want = trigamma(float(jnp.float32(x)))
    print(f"digamma'({x}) = trigamma: jax {got:.6g}, right {want:.6g}")
    wrong |= not math.isclose(got, want, rel_tol=1e-3)
sys.exit(1 if wrong else 0)
