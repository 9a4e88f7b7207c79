#!/usr/bin/env python3
"""Writes bugs.md's "diverges on" column from the "# seen-on:" and "# agrees-on:" headers of
corpus/bugs/*.txt (tools/record-platforms.py measures them), so that the page says, for each row,
on which LibTorch releases and kernel sets its culprit diverges and where it was measured to
agree. Rows are matched by the bug ids in their first cell; a bug described in prose rather than
a table row gets a sentence at the end of the paragraph that names it.

It owns only the platform groups it renders ("1.13: ...", "2.15: fixed", "oneDNN 2.6: ...", one
per library): anything hand-written after them in a cell or a sentence (" · JAX 0.10.2 too: ...",
" (1.13 not measured)") is kept, so a run over an unchanged tree changes nothing (`--check`
says so, exit status 1 and the changed lines otherwise).

  tools/bugs-md-platforms.py            # rewrites bugs.md in place
  tools/bugs-md-platforms.py --check    # rewrites nothing; exit 1 if a run would change bugs.md
"""
import difflib
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMN = "diverges on"
# A group's label as render() writes it: a LibTorch release ("1.13") or a library and release.
OWNED_LABEL = re.compile(r"^(\d+\.\d+|(oneDNN|Eigen|JAX|Inductor) [0-9.]+)$")
KERNEL_ORDER = ["DEFAULT", "AVX2", "AVX512", "sse41", "avx2", "avx512_core", "avx512_core_amx"]


def facts_of(path):
    lines = open(path).read().split("\n")

    def get(key):
        return next((l[len(key) + 3:].strip() for l in lines if l.startswith(f"# {key}:")), "")

    culprits = [b.strip() for b in get("diverges").split(",") if b.strip()]
    facts = []
    for key, diverges in (("seen-on", True), ("agrees-on", False)):
        for fact in get(key).split(";"):
            if " @ " not in fact:
                continue
            backend, platform = (x.strip() for x in fact.split(" @ ", 1))
            if backend in culprits:
                facts.append((platform, diverges))
    return facts


def render(facts):
    """'1.13: AVX2, AVX512 (not DEFAULT) · 2.15: fixed' from (platform, diverges) pairs."""
    groups = {}
    for platform, diverges in facts:
        m = re.match(r"^(\S+ [0-9.]+) (\S+) on (\w+)(?:, oneDNN (\w+))?", platform)
        # The jax backend's platform names its release, device and dispatch, no CPU vendor:
        # "jax 0.10.2 cpu x64 jit" -> "JAX 0.10.2: cpu jit".
        j = re.match(r"^jax ([0-9.]+) (\w+)(?: x64)? (\w+)", platform)
        if j:
            seen, agrees = groups.setdefault(f"JAX {j.group(1)}", ([], []))
            (seen if diverges else agrees).append(f"{j.group(2)} {j.group(3)}")
            continue
        # torch-compile's platform: "torch 2.15.0 inductor AVX512" (the kernel set ATen picked)
        compiled = re.match(r"^torch (\d+\.\d+)\.\d+ inductor( dynamic)? (\S+)$", platform)
        if compiled:
            release, dynamic, kernels = compiled.groups()
            library, kernels, vendor, onednn = f"Inductor {release}", kernels + (dynamic or ""), None, None
        elif not m:
            continue
        else:
            library, kernels, vendor, onednn = m.groups()
        if onednn and onednn != "avx512":  # LibTorch's oneDNN capped below this machine's
            kernels += f"+oneDNN {onednn}"
        if vendor not in ("GenuineIntel", None):
            kernels += " on " + {"AuthenticAMD": "AMD"}.get(vendor, vendor)
        seen, agrees = groups.setdefault(library, ([], []))
        (seen if diverges else agrees).append(kernels)
    parts = []
    version = lambda library: tuple(int(n) for n in library.split()[1].split("."))
    diverging = [version(l) for l, (seen, _) in groups.items() if seen]
    for library, (seen, agrees) in sorted(groups.items(), key=lambda g: (g[0].split()[0], version(g[0]))):
        # Ties (every capped-oneDNN name ranks 99) break by name: a set's order is not stable.
        order = lambda k: (KERNEL_ORDER.index(k.split()[0]) if k.split()[0] in KERNEL_ORDER else 99, k)
        # A capped-oneDNN measurement that says what the uncapped one says adds nothing to read.
        seen = [k for k in set(seen) if "+" not in k or k.split("+")[0] not in seen]
        agrees = [k for k in set(agrees) if "+" not in k or k.split("+")[0] not in agrees]
        seen, agrees = sorted(seen, key=order), sorted(agrees, key=order)
        name = library.split()[1] if library.startswith("LibTorch") else library
        if not seen:
            # Agreeing after a release that diverged is a fix; before one, a regression's baseline.
            fixed = any(v < version(library) for v in diverging) or not diverging
            parts.append(f"{name}: {'fixed' if fixed else 'agrees'}")
        elif agrees:
            parts.append(f"{name}: {', '.join(seen)} (not {', '.join(agrees)})")
        else:
            parts.append(f"{name}: {', '.join(seen)}")
    return " · ".join(parts) if parts else "—"


def merge(old, new):
    """The cell or sentence text `new` renders, keeping what a hand added to `old` after it.

    Unchanged facts leave `old` as it is (a suffix such as " (1.13 not measured)" included).
    Changed ones replace the groups render() owns and keep the others (" · JAX 0.10.2 too: ...");
    a parenthesis hand-written after an owned group goes with it, as it spoke of the old facts."""
    flat = re.sub(r"\s+", " ", old)  # a sentence may wrap anywhere
    if flat == new or flat.startswith(new + " "):
        return old
    kept = [g for g in old.split(" · ") if ":" in g and not OWNED_LABEL.match(g.split(":")[0])]
    return " · ".join([new] + kept)


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit(__doc__)
    facts = {os.path.basename(p)[:-4]: facts_of(p)
             for p in glob.glob(os.path.join(ROOT, "corpus", "bugs", "*.txt"))}
    lines = open(os.path.join(ROOT, "bugs.md")).read().split("\n")
    out, used, k = [], set(), 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("|") and k + 1 < len(lines) and re.match(r"^\|(-+\|)+$", lines[k + 1]):
            end = k + 2
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            head, rule, rows = line, lines[k + 1], lines[k + 2:end]
            has_column = head.rstrip().endswith(f"| {COLUMN} |")
            old_cells = [""] * len(rows)
            if has_column:  # drop the column to write it anew, keeping its hand-written ends
                head = head.rstrip()[: -len(f" {COLUMN} |")]
                rule = rule[: -len("---|")]
                cut = [r.rstrip()[:-1].rfind("|") + 1 for r in rows]
                old_cells = [r.rstrip()[c:-1].strip() for r, c in zip(rows, cut)]
                rows = [r.rstrip()[:c] for r, c in zip(rows, cut)]

            def ids(row):
                first = row.split("|")[1].replace("`", "")
                return [t for t in re.findall(r"[a-z0-9][a-z0-9-]+", first) if t in facts]

            if any(ids(r) for r in rows):
                out += [head + f" {COLUMN} |", rule + "---|"]
                for r, old in zip(rows, old_cells):
                    found = ids(r)
                    used.update(found)
                    cells = {render(facts[i]) for i in found}
                    cell = cells.pop() if len(cells) == 1 else "; ".join(
                        f"{i}: {render(facts[i])}" for i in found) if found else "—"
                    out.append(f"{r} {merge(old, cell)} |")
            else:
                out += [head, rule] + rows
            k = end
            continue
        out.append(line)
        k += 1
    for bug in sorted(set(facts) - used):
        # A sentence already there, wrapped or not: its platform text rewritten in place.
        text = "\n".join(out)
        said = re.search(rf"`{re.escape(bug)}`(\s+)diverges on: (.*?)\.(?=\s|$)", text, re.S)
        if said:
            body = merge(said.group(2), render(facts[bug]))
            if "\n" in said.group(2) and "\n" not in body:  # wrapped where it was
                at = body.find(" ", said.group(2).index("\n"))
                body = body if at < 0 else body[:at] + "\n" + body[at + 1:]
            out = (text[: said.start(2)] + body + text[said.end(2):]).split("\n")
            continue
        at = next((n for n, l in enumerate(out) if bug in l and not l.startswith("|")), None)
        if at is None:
            print(f"bugs.md does not name {bug}")
            continue
        if out[at].startswith("#"):
            at += 2  # the heading's first paragraph
        while at + 1 < len(out) and out[at + 1].strip():
            at += 1
        out[at] = out[at].rstrip() + f" `{bug}` diverges on: {render(facts[bug])}."
    path = os.path.join(ROOT, "bugs.md")
    before = open(path).read()
    if not check:
        open(path, "w").write("\n".join(out))
    elif before != "\n".join(out):
        for line in difflib.unified_diff(
                before.split("\n"), out, "bugs.md", "bugs.md (rewritten)", lineterm="", n=0):
            print(line)
        sys.exit(1)


if __name__ == "__main__":
    main()
