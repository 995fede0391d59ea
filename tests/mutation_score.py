"""The mutation score of `make mutants`, from `mutmut results --all true` on standard input.

In scope: every mutant of the files listed in ``[tool.mutmut] only_mutate``
(``score/parsing.py`` is the answer and confidence parsing). The score is the share of in-scope mutants killed (a
failing test, a timeout or a crash); "no tests" mutants count as not killed.
Prints the counts per status, the score per module and overall, and every
mutant that was not killed.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict

KILLED = {"killed", "timeout", "segfault", "caught by type check"}
_LINE = re.compile(r"^\s*(?P<name>[\w.]+__mutmut_\d+):\s*(?P<status>.+?)\s*$")


def parse(lines) -> list[tuple[str, str]]:
    """``(mutant name, status)`` of every line of mutmut's result listing."""
    out = []
    for line in lines:
        m = _LINE.match(line)
        if m:
            out.append((m["name"], m["status"]))
    return out


def summary(results: list[tuple[str, str]]) -> dict:
    """Counts, per-module and overall scores, and the mutants not killed."""
    kept = results
    counts = Counter(s for _, s in kept)
    per_module: dict[str, Counter] = defaultdict(Counter)
    for n, s in kept:
        per_module[n.rpartition(".")[0]]["killed" if s in KILLED else "not killed"] += 1
    killed = sum(counts[s] for s in KILLED)
    return {
        "total": len(kept),
        "killed": killed,
        "score": killed / len(kept) if kept else float("nan"),
        "counts": dict(counts),
        "per_module": {m: (c["killed"], c["killed"] + c["not killed"]) for m, c in sorted(per_module.items())},
        "not_killed": sorted((n, s) for n, s in kept if s not in KILLED),
    }


def main() -> int:
    res = summary(parse(sys.stdin))
    if not res["total"]:
        print("no mutants in scope: did `mutmut run` finish?")
        return 1
    for module, (k, n) in res["per_module"].items():
        print(f"{module:45s} {k:5d} / {n:5d} killed  {100 * k / n:5.1f} %")
    print("statuses: " + ", ".join(f"{s} {c}" for s, c in sorted(res["counts"].items())))
    print(f"mutation score: {res['killed']} / {res['total']} = {100 * res['score']:.1f} %")
    for name, status in res["not_killed"]:
        print(f"  {status:10s} {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
