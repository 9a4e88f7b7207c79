#!/usr/bin/env python3
"""The Python backends' server (issue 32): started by the C++ parent as
`<python> burnmark_child.py --framework torch|torch-compile|jax --options JSON`, it speaks the
child backend's frames (src/backends/process/wire.h) on the socket at fd BURNMARK_CHILD_FD: a
ready frame naming its platform (or a failed frame saying why it cannot serve), then per request
(python_backend.cpp's encode_python_request) one response frame laid out exactly as
wire::encode_response, until the parent closes the socket."""

import argparse
import array
import importlib
import json
import os
import socket
import struct
import sys

READY_PREFIX = b"burnmark child ready v2; platform: "  # wire.h kReadyPrefix
FAILED_PREFIX = b"burnmark child failed: "  # wire.h kFailedPrefix
REQUEST_VERSION = 1  # python_backend.cpp kRequestVersion
RESPONSE_VERSION = 3  # wire.cpp kVersion
STATUS_OK, STATUS_ERROR, STATUS_UNSUPPORTED = 0, 1, 2  # outcome.h Status

# --framework -> (runner module, options it adds): adding a framework is one row.
RUNNERS = {
    "torch": ("runner_torch", {}),
    "torch-compile": ("runner_torch", {"compile": True}),
    "jax": ("runner_jax", {}),
}


def read_exactly(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(sock):
    head = read_exactly(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack("=I", head)
    return read_exactly(sock, size) if size else b""


def write_frame(sock, payload):
    sock.sendall(struct.pack("=I", len(payload)) + payload)


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        values = struct.unpack_from("=" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("=" + fmt)
        return values if len(values) > 1 else values[0]

    def string(self):
        n = self.take("I")
        s = self.data[self.pos : self.pos + n].decode()
        self.pos += n
        return s

    def values(self, code):
        n = self.take("Q")
        a = array.array(code)
        a.frombytes(self.data[self.pos : self.pos + 8 * n])
        self.pos += 8 * n
        return a.tolist()


def decode_request(frame):
    r = Reader(frame)
    if r.take("I") != REQUEST_VERSION:
        raise ValueError("a request of another version")
    gradients, tangents, hessian = (r.take("B") != 0 for _ in range(3))
    source = r.string()
    float_dtype = r.string()
    leaves, directions = [], []
    for _ in range(r.take("I")):
        kind = "i64" if r.take("B") else "float"
        rank = r.take("B")
        shape = [r.take("q") for _ in range(rank)]
        leaves.append((kind, shape, r.values("q" if kind == "i64" else "d")))
        direction = r.values("d")
        directions.append(direction if kind == "float" else None)
    if r.pos != len(frame):
        raise ValueError("a request with trailing bytes")
    return dict(
        source=source,
        float_dtype=float_dtype,
        leaves=leaves,
        gradients=gradients,
        tangents=directions if tangents else None,
        hessian=hessian,
        # v of H·v: the same leaf_tangent() directions, whenever tangents or hessian is asked.
        directions=directions if tangents or hessian else None,
    )


def put_string(out, s):
    b = s.encode()
    out += struct.pack("=I", len(b)) + b


def put_tensor(out, tensor):
    shape, values = tensor if tensor is not None else ([], [])
    out += struct.pack("=B", len(shape))
    out += struct.pack("=%dq" % len(shape), *shape)
    data = values if isinstance(values, (bytes, bytearray)) else array.array("d", values).tobytes()
    out += struct.pack("=Q", len(data) // 8) + data
    out += struct.pack("=Q", 0)  # no error bounds: only the reference gives them


def encode_response(status, message, note, result=None):
    result = result or {}
    out = bytearray(struct.pack("=IBB", RESPONSE_VERSION, status, 0))
    put_string(out, message)
    put_string(out, note)
    put_tensor(out, result.get("root"))
    put_tensor(out, result.get("tangent"))
    for key in ("grads", "hvp"):
        items = result.get(key) or []
        out += struct.pack("=I", len(items))
        for t in items:
            put_tensor(out, t)
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", required=True, choices=sorted(RUNNERS))
    parser.add_argument("--options", default="{}", help="JSON object for the runner")
    args = parser.parse_args()
    sock = socket.socket(fileno=int(os.environ["BURNMARK_CHILD_FD"]))
    module_name, extra = RUNNERS[args.framework]
    options = dict(json.loads(args.options), **extra)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        module = importlib.import_module(module_name)
        common = importlib.import_module("runner_common")
        runner = module.Runner(options)
        platform = runner.platform()
    except Exception as e:  # the framework is missing or broken: one line for the parent
        line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        why = "%s cannot load %s (%s)" % (sys.executable, module_name, line)
        write_frame(sock, FAILED_PREFIX + why.encode())
        return 1
    write_frame(sock, READY_PREFIX + platform.encode())
    note = getattr(runner, "note", lambda: "")
    while True:
        frame = read_frame(sock)
        if frame is None:
            return 0
        request = decode_request(frame)
        try:
            result = runner.run(**request)
            response = encode_response(STATUS_OK, "", note(), result)
        except common.Unsupported as e:
            response = encode_response(STATUS_UNSUPPORTED, str(e), note())
        except Exception as e:
            response = encode_response(STATUS_ERROR, common.first_line(e), note())
        write_frame(sock, response)


if __name__ == "__main__":
    sys.exit(main())
