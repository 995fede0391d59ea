"""``python -m vlmrobust.dry [--only ID ...] [--out DIR]``: the paper variants, end to end, on twins
(make paper-dry)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .run import build_twins, execute, fabricate, plan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.dry", description=__doc__)
    ap.add_argument("--only", nargs="*", default=None, help="notebook ids (default: every notebook with a paper.yaml)")
    ap.add_argument("--out", default="build/paper-dry",
                    help="twins, data, merged variants, results, executed notebooks")
    ap.add_argument("--kernel", default="vlmrobust")
    ap.add_argument("--prepare-only", action="store_true", help="build twins and data, write nothing else")
    args = ap.parse_args(argv)
    out = Path(args.out)
    plans = plan(out, fabricate(out), args.only)
    archs = build_twins(out, plans)
    if args.prepare_only:
        print(json.dumps(archs, indent=1))
        return 0
    rows = execute(out, plans, archs, kernel=args.kernel)
    (out / "summary.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("\npaper variants on twins:")
    for r in rows:
        print(f"  {r['notebook']:<28} {'ok' if r['ok'] else 'FAILED':<6} {r['seconds']:>6.0f} s  "
              f"{', '.join(r['architectures']) or '-'}")
    every = sorted({a for r in rows for a in r["architectures"]})
    print(f"architectures run: {', '.join(every)}")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
