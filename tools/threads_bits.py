#!/usr/bin/env python3
# Does LibTorch give other bits on 4 intra-op threads than on 1, at BurnMark's sizes (at most
# 8,192 elements)? One line per case: forward and gradient equal bit for bit or not. The last
# case is past ATen's 32,768-element grain, to show that the check can see a difference.
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(128, 64)
v = torch.randn(8192)
CASES = {
    "sum(1)": (x, lambda t: t.sum(1)), "sum()": (x, lambda t: t.sum()),
    "mean(0)": (x, lambda t: t.mean(0)), "prod(1)": (x, lambda t: t.prod(1)),
    "softmax(1)": (x, lambda t: t.softmax(1)), "log_softmax(0)": (x, lambda t: t.log_softmax(0)),
    "logsumexp(1)": (x, lambda t: t.logsumexp(1)), "cumsum(1)": (x, lambda t: t.cumsum(1)),
    "cumprod(1)": (x, lambda t: t.cumprod(1)), "norm(dim=1)": (x, lambda t: t.norm(dim=1)),
    "var(1)": (x, lambda t: t.var(1)), "std(0)": (x, lambda t: t.std(0)),
    "mm": (x, lambda t: t @ t.t()),
    "bmm": (x, lambda t: torch.bmm(t.reshape(16, 32, 16), t.reshape(16, 16, 32))),
    "sort(1)": (x, lambda t: t.sort(1).values), "max(1)": (x, lambda t: t.max(1).values),
    "amax(0)": (x, lambda t: t.amax(0)), "layer_norm": (x, lambda t: F.layer_norm(t, (64,))),
    "exp": (x, lambda t: t.exp()), "gelu": (x, lambda t: F.gelu(t)),
    "mm k=2048": (v, lambda t: t.reshape(4, 2048) @ t.reshape(2048, 4)),
    "mm k=512": (v, lambda t: t.reshape(16, 512) @ t.reshape(512, 16)),
    "mv": (v, lambda t: t.reshape(4, 2048) @ t[:2048]), "dot": (v, lambda t: t @ t.flip(0)),
    "bmm k=256": (v, lambda t: torch.bmm(t.reshape(8, 4, 256), t.reshape(8, 256, 4))),
    "sum 8192": (v, lambda t: t.sum()), "sum(1) 8x1024": (v, lambda t: t.reshape(8, 1024).sum(1)),
    "norm(3)": (v, lambda t: t.norm(3)), "cumsum 8192": (v, lambda t: t.cumsum(0)),
    "var 8192": (v, lambda t: t.var()), "logsumexp 8192": (v, lambda t: t.logsumexp(0)),
    "softmax 8192": (v, lambda t: t.softmax(0)),
    "outer.sum(0)": (v, lambda t: torch.outer(t[:64], t[:128]).sum(0)),
    "sum 65536 (past the grain)": (torch.randn(65536), lambda t: t.sum()),
}


def run(threads, data, f):
    torch.set_num_threads(threads)
    leaf = data.clone().requires_grad_()
    out = f(leaf)
    out.sum().backward()
    return out.detach(), leaf.grad


for name, (data, f) in CASES.items():
    one, four = run(1, data, f), run(4, data, f)
    print(f"{name:28} forward {'same' if torch.equal(one[0], four[0]) else 'DIFFERS'}"
          f"  gradient {'same' if torch.equal(one[1], four[1]) else 'DIFFERS'}")
