"""Every claim rule of every notebook, checked against its null by simulation.

Each analysis package lists its rules in its ``rules.py`` (``RULES``, a tuple of
:class:`~vlmrobust.stats.nullsim.RuleCheck`). :func:`all_rules` gathers them in notebook order;
``python -m vlmrobust.analysis.rules [--draws N] [--out docs/rules.md]`` draws each rule's null and
positive simulations and prints (or writes) the false-pass rate beside its bound and the power.
The unit tests assert every rule within the bound (``tests/test_rules.py``).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..stats.nullsim import RuleCheck, results_frame, run_checks

__all__ = ["PACKAGES", "all_rules", "main"]

PACKAGES = ("selection", "ras", "drift", "visibility", "escalation", "card")


def all_rules() -> list[RuleCheck]:
    """The ``RULES`` of every analysis package that has a ``rules`` module, in notebook order."""
    out: list[RuleCheck] = []
    for pkg in PACKAGES:
        try:
            mod = importlib.import_module(f"{__package__}.{pkg}.rules")
        except ModuleNotFoundError as e:
            if e.name != f"{__package__}.{pkg}.rules":
                raise
            continue
        out.extend(mod.RULES)
    return sorted(out, key=lambda r: r.name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.analysis.rules", description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=500, help="null (and positive) draws per rule (default 500)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="rules whose name starts with this (e.g. 07)")
    ap.add_argument("--out", default="", help="write a Markdown table here (e.g. docs/rules.md)")
    a = ap.parse_args(argv)
    rules = [r for r in all_rules() if r.name.startswith(a.only)]
    df = results_frame(run_checks(rules, draws=a.draws, seed=a.seed))
    show = df[["rule", "size", "false_passes", "draws", "bound", "power", "calibrated"]]
    print(show.to_string(index=False))
    if a.out:
        lines = ["# Claim rules against their nulls", "",
                 f"Written by `python -m vlmrobust.analysis.rules --draws {a.draws} --out {a.out}`: each rule's "
                 "verdict on draws from its null (the claim false, at the notebook's default size) and at the "
                 "paper's effect size. A rule is calibrated when its false passes stay within the bound (the 99th "
                 "percentile of Binomial(draws, 0.05)).", "",
                 "| rule | size | null | false passes | bound | positive draw | power |",
                 "|---|---|---|---|---|---|---|"]
        for r in df.itertuples():
            lines.append(f"| {r.rule} | {r.size} | {r.null} | {r.false_passes} of {r.draws} | {r.bound} | "
                         f"{r.positive} | {r.power:.2f} |")
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0 if bool(df["calibrated"].all()) else 1


if __name__ == "__main__":
    sys.exit(main())
