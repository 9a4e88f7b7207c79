"""What every Python backend's runner shares (runner_torch.py, runner_jax.py): the exception a
runner raises for a mode or program its framework lacks, and small helpers on the result format
burnmark_child.py encodes (shape, flat row-major values as Python floats)."""


class Unsupported(Exception):
    """The framework lacks this mode (forward mode, second order) or program: the outcome is
    Status::Unsupported, skipped and counted, never a divergence. Any other exception a runner
    raises is the framework's error (Status::Error)."""


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def zeros(shape):
    """The result of a derivative nothing reached: zeros of the leaf's shape, as every backend."""
    return (list(shape), [0.0] * numel(shape))


def first_line(exc):
    """An exception as one line: its message's first line, else its type's name."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
