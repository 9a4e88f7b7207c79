#!/usr/bin/env python3
"""Records where each bugs.md program diverges: replays corpus/bugs/*.txt with `burnmark run`
under the current environment and, for every backend after the reference on its "# backends:"
line, adds "NAME @ PLATFORM" (PLATFORM as `burnmark run` prints it on "platform NAME: ...") to
the file's "# seen-on:" header when it diverged, or to "# agrees-on:" when it agreed. test_bugs then checks
each backend where its platform was measured and reports it elsewhere. Run it once per kernel
set and LibTorch release a machine can reach, e.g.

  tools/record-platforms.py build/test/src/cli/burnmark corpus/bugs/*.txt
  ATEN_CPU_CAPABILITY=default tools/record-platforms.py build/test/src/cli/burnmark corpus/bugs/*.txt
  ONEDNN_MAX_CPU_ISA=avx2 tools/record-platforms.py build/test/src/cli/burnmark corpus/bugs/onednn-*.txt

A backend not on "# diverges:" (a bystander) that diverges is recorded too, and printed as news
to look at: the row's own culprit agrees with the reference everywhere else.
"""
import os
import re
import subprocess
import sys


def header(lines, key):
    for line in lines:
        if line.startswith(f"# {key}:"):
            return line[len(key) + 3:].strip()
    return None


def platform_list(value):
    return [p.strip() for p in (value or "").split(";") if p.strip()]


def set_header(lines, key, values, after):
    """Replaces or inserts "# key: a; b" (dropped when empty) right after the `after` header."""
    lines = [l for l in lines if not l.startswith(f"# {key}:")]
    if not values:
        return lines
    at = next(i for i, l in enumerate(lines) if l.startswith(f"# {after}:")) + 1
    lines.insert(at, f"# {key}: {'; '.join(values)}")
    return lines


def record(burnmark, path):
    with open(path) as f:
        lines = f.read().split("\n")
    backends = header(lines, "backends")
    diverging = [b.strip() for b in header(lines, "diverges").split(",") if b.strip()]
    env = dict(os.environ, BACKENDS=backends, BURNMARK_KNOWN_BUGS="")
    mode = header(lines, "mode")
    if mode == "tangents":
        env["BURNMARK_TANGENTS"] = "1"
    elif mode == "hvp":
        env["BURNMARK_HVP"] = "1"
    run = subprocess.run([burnmark, "run", path], env=env, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        return f"burnmark run exited {run.returncode}: {run.stderr.strip()[:300]}"
    platforms = dict(re.findall(r"^platform (\S+): (.*)$", run.stdout, re.M))
    diverged = set(re.findall(r"^DIVERGENCE backend=(\S+)", run.stdout, re.M))
    names = [b.strip() for b in backends.split(",") if b.strip()][1:]
    seen = platform_list(header(lines, "seen-on"))
    agrees = platform_list(header(lines, "agrees-on"))
    said = []
    for backend in names:
        platform = platforms.get(backend)
        if not platform:
            said.append(f"{backend} has no platform line")
            continue
        fact = f"{backend} @ {platform}"
        mine, other = (seen, agrees) if backend in diverged else (agrees, seen)
        if fact in other:
            other.remove(fact)  # a re-measurement replaces the old fact
        if fact not in mine:
            mine.append(fact)
        news = " (NEWS: not the row's culprit)" if backend in diverged and backend not in diverging else ""
        said.append(f"{backend} {'diverges' if backend in diverged else 'agrees'} on {platform}{news}")
    lines = set_header(lines, "seen-on", seen, "diverges")
    lines = set_header(lines, "agrees-on", agrees, "seen-on" if seen else "diverges")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return "; ".join(said)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: record-platforms.py BURNMARK FILE...")
    burnmark, files = sys.argv[1], sys.argv[2:]
    for path in files:
        print(f"{os.path.basename(path)}: {record(burnmark, path)}", flush=True)


if __name__ == "__main__":
    main()
