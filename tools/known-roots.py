#!/usr/bin/env python3
"""Writes the root-cause section of corpus/known_bugs.txt: the root cause of every bugs.md program
(corpus/bugs/*.txt), so that a campaign recognises a known fault reached through an op graph, dtype
or mode the list never saw (include/burnmark/triage/root_cause.h).

Each program runs through `burnmark minimize` (a bugs.md program is minimal already: it only adds
the "# root" line) on the backends and mode its header names, with every BURNMARK binary given, so
that rows fixed in one LibTorch release are measured where they are live:

  tools/known-roots.py build/test/src/cli/burnmark build/test-1.13/src/cli/burnmark

Rows marked "# convention:" are not bugs and are skipped. A root only counts for a library the row
says diverges. Two rows with the same root are printed as a merge for a person to check (the
line keeps the first row's anchor and names the other)."""
import glob
import os
import re
import subprocess
import sys

BEGIN = "# ---- root causes (tools/known-roots.py; do not edit by hand) ----"
END = "# ---- end of root causes ----"


def header(text, key):
    m = re.search(rf"^# {key}:(.*)$", text, re.M)
    return m.group(1).strip() if m else None


def library(backend):
    backend = re.sub(r"^child(\[[^\]]*\])?:", "", backend)
    backend = backend.split("@")[0]
    return "libtorch" if backend == "libtorch" or backend.startswith("libtorch-") else backend


def roots_of(burnmark, path, text):
    env = dict(os.environ, BACKENDS=header(text, "backends"), BURNMARK_KNOWN_BUGS="")
    mode = header(text, "mode")
    if mode == "tangents":
        env["BURNMARK_TANGENTS"] = "1"
    elif mode == "hvp":
        env["BURNMARK_HVP"] = "1"
    run = subprocess.run([burnmark, "minimize", "--as-is", path], env=env, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        print(f"{path}: {burnmark} minimize exited {run.returncode}: {run.stderr.strip()[:200]}",
              file=sys.stderr)
        return []
    m = re.search(r"^# root (.*)$", run.stdout, re.M)
    if not m or not m.group(1).strip() or m.group(1).strip() == "-":
        return []
    # "<id> <words> + <id> <words>"
    return [tuple(part.strip().split(" ", 1)) for part in m.group(1).split(" + ")]


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    known_path = "corpus/known_bugs.txt"
    lines = {}  # id -> (anchor, words, [other anchors])
    for path in sorted(glob.glob("corpus/bugs/*.txt")):
        text = open(path).read()
        if header(text, "convention") is not None:
            continue
        anchor = os.path.basename(path)[:-4]
        diverging = {library(b.strip()) for b in (header(text, "diverges") or "").split(",")}
        for burnmark in binaries:
            for root_id, words in roots_of(burnmark, path, text):
                if words.split(":")[0] not in diverging:
                    continue
                if root_id not in lines:
                    lines[root_id] = (anchor, words, [])
                elif lines[root_id][0] != anchor and anchor not in lines[root_id][2]:
                    lines[root_id][2].append(anchor)
    merges = {i: v for i, v in lines.items() if v[2]}
    for root_id, (anchor, words, others) in sorted(merges.items()):
        print(f"MERGE {root_id} {anchor} + {', '.join(others)}: {words}")
    section = [BEGIN,
               "# One line per root cause of a bugs.md program: a finding whose every root is listed",
               "# is known, whatever op graph, dtype or mode reached it."]
    for root_id, (anchor, words, others) in sorted(lines.items(), key=lambda kv: (kv[1][0], kv[0])):
        also = f" (also {', '.join(others)})" if others else ""
        section.append(f"{root_id} {anchor} root: {words}{also}")
    section.append(END)
    text = open(known_path).read()
    if BEGIN in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1] if END in rest else ""
        text = head.rstrip("\n") + "\n" + "\n".join(section) + tail
    else:
        text = text.rstrip("\n") + "\n" + "\n".join(section) + "\n"
    with open(known_path, "w") as f:
        f.write(text)
    print(f"{len(lines)} root causes from {len(glob.glob('corpus/bugs/*.txt'))} programs, "
          f"{len(merges)} shared by several rows", file=sys.stderr)


if __name__ == "__main__":
    main()
