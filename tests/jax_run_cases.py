"""Runs a file of BurnMark programs through runner_jax.py (test_jax's corpus check).

    python jax_run_cases.py RUNNER_DIR CASES.json RESULTS.json

CASES.json: {"cases": [{"source", "dtype", "leaves": [[kind, shape, values]], "tangents"}]}, every
float as a hex string (float.hex, "inf", "nan"), so no value is lost on the way. RESULTS.json:
one result per case, {"status": "ok" | "error" | "unsupported", "message", "root", "grads",
"tangent", "hvp"} in runner_jax's shapes, floats as hex strings again.
"""

import json
import sys


def main():
    runner_dir, cases_path, results_path = sys.argv[1:4]
    sys.path.insert(0, runner_dir)
    import runner_jax  # imports runner_common from the same folder

    runner = runner_jax.Runner(json.loads(sys.argv[4]) if len(sys.argv) > 4 else {})

    def hexed(t):
        return None if t is None else [t[0], [float.hex(v) for v in t[1]]]

    with open(cases_path) as f:
        cases = json.load(f)["cases"]
    results = []
    for case in cases:
        leaves = [(kind, shape, [float.fromhex(v) for v in values] if kind == "float" else values)
                  for kind, shape, values in case["leaves"]]
        tangents = case.get("tangents")
        if tangents is not None:
            tangents = [None if t is None else [float.fromhex(v) for v in t] for t in tangents]
        try:
            out = runner.run(case["source"], case["dtype"], leaves, True, tangents,
                             bool(case.get("hessian", False)))
        except runner_jax.Unsupported as e:
            results.append({"status": "unsupported", "message": str(e)})
            continue
        except Exception as e:  # the framework's error: its first line, as the child reports it
            lines = str(e).splitlines() or [type(e).__name__]
            results.append({"status": "error", "message": lines[0]})
            continue
        results.append({"status": "ok", "message": "", "root": hexed(out["root"]),
                        "grads": [hexed(g) for g in out["grads"]],
                        "tangent": hexed(out["tangent"]),
                        "hvp": [hexed(h) for h in out["hvp"]]})
    with open(results_path, "w") as f:
        json.dump({"platform": runner.platform(), "results": results}, f)


if __name__ == "__main__":
    main()
