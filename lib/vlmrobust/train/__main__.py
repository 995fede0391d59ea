"""``python -m vlmrobust.train <config> [options]``: train, export to the zoo, evaluate, write the card."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.train", description=__doc__)
    ap.add_argument("config", help="a config file or the name of a committed config (lib/vlmrobust/train/configs)")
    ap.add_argument("--runs", default=None, help="training-runs folder (default <repo>/runs)")
    ap.add_argument("--out", default=None, help="export folder (default lib/vlmrobust/zoo/<name>)")
    ap.add_argument("--no-export", action="store_true", help="train only")
    ap.add_argument("--eval-n", type=int, default=1000, help="held-out items for the model card (0: skip)")
    ap.add_argument("--inline-data", action="store_true", help="build batches in the trainer process")
    args = ap.parse_args(argv)

    from .card import export, write_card
    from .evaluate import HELDOUT_SEED, evaluate, summarise
    from .trainer import train

    trained = train(args.config, runs_dir=args.runs, inline_data=args.inline_data)
    cfg = trained.config
    if args.no_export or cfg.role in ("trunk", "test"):
        return 0
    out = export(trained, args.out)
    summary = None
    if args.eval_n > 0:
        scores = evaluate(trained.model, trained.processor, cfg.answer_format, n_total=args.eval_n)
        summary = summarise(scores)
        summary["seed"] = HELDOUT_SEED
        (trained.run_dir / "heldout.json").write_text(json.dumps(summary, indent=2))
        scores.to_parquet(trained.run_dir / "heldout_scores.parquet")
        print(json.dumps(summary, indent=2))
    write_card(trained, out, summary, eval_command=f"python -m vlmrobust.train {cfg.name} --eval-n {args.eval_n}")
    print(f"exported {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
