"""``python -m vlmrobust.train <config> [options]``: train, export to the zoo, evaluate, write the card.

Exported organisms (roles ``evaluated``, ``selector``, ``ladder``, ``control``) get
their config's ``meta`` keys in ``vlmrobust.json`` and in the card's front matter
(a ladder rung also ``lm_parameters``, the language model's parameter count
without the vision tower and projector), and ladder rungs and control organisms
get their behaviour sections (:func:`vlmrobust.train.behaviours.card_sections`).
"""

from __future__ import annotations

import argparse
import json
import sys


def all_configs() -> list[str]:
    """Committed configs of exported roles, ordered so that every ``init.from`` parent comes first."""
    from .config import config_dir, load_config

    cfgs = {p.stem: load_config(p.stem) for p in sorted(config_dir().glob("*.yaml"))}
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        init = cfgs[name].init
        if init:
            visit(init["from"])
            if init.get("vision_from"):
                visit(init["vision_from"])
        order.append(name)

    for name in cfgs:
        visit(name)
    return [n for n in order if cfgs[n].role in EXPORTED]


EXPORTED = ("evaluated", "selector", "ladder", "control")


def declared_keys(trained) -> dict:
    """The keys beyond the standard ones that the zoo folder declares: the config's ``meta``, and
    ``lm_parameters`` for a ladder rung."""
    from .behaviours import lm_parameters

    keys = dict(trained.config.meta)
    if trained.config.role == "ladder":
        keys["lm_parameters"] = lm_parameters(trained.model)
    return keys


def _declare(out, keys: dict) -> None:
    """Add ``keys`` to the folder's ``vlmrobust.json`` and to its card's YAML front matter."""
    import re
    from pathlib import Path

    import yaml

    meta_path = Path(out) / "vlmrobust.json"
    meta = json.loads(meta_path.read_text())
    meta.update(keys)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    card = Path(out) / "README.md"
    if card.is_file():
        text = card.read_text()
        m = re.match(r"\A---\n(.*?)\n---\n", text, re.S)
        if m:
            front = {**yaml.safe_load(m.group(1)), **keys}
            card.write_text("---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + text[m.end():])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlmrobust.train", description=__doc__)
    ap.add_argument("config", nargs="?",
                    help="a config file or the name of a committed config (lib/vlmrobust/train/configs)")
    ap.add_argument("--all", action="store_true",
                    help="every committed evaluated and selector config, parents before children")
    ap.add_argument("--runs", default=None, help="training-runs folder (default <repo>/runs)")
    ap.add_argument("--out", default=None, help="export folder (default lib/vlmrobust/zoo/<name>)")
    ap.add_argument("--no-export", action="store_true", help="train only")
    ap.add_argument("--eval-n", type=int, default=1000, help="held-out items for the model card (0: skip)")
    ap.add_argument("--behaviour-n", type=int, default=60,
                    help="held-out items per family for the behaviour sections of ladder and control cards")
    ap.add_argument("--inline-data", action="store_true", help="build batches in the trainer process")
    args = ap.parse_args(argv)
    if args.all == bool(args.config):
        ap.error("give either a config or --all")
    if args.all:
        for name in all_configs():
            rc = main([name] + [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--all"])
            if rc:
                return rc
        return 0

    from .. import models
    from .behaviours import card_sections
    from .card import export, write_card
    from .degrade import AWARE_THRESHOLD
    from .evaluate import HELDOUT_SEED, evaluate, summarise
    from .trainer import train

    trained = train(args.config, runs_dir=args.runs, inline_data=args.inline_data)
    cfg = trained.config
    if args.no_export or cfg.role in ("trunk", "test"):
        return 0
    out = export(trained, args.out)
    keys = declared_keys(trained)
    _declare(out, keys)
    summary = None
    sections: list[str] = []
    if args.eval_n > 0:
        scores = evaluate(trained.model, trained.processor, cfg.answer_format, n_total=args.eval_n)
        summary = summarise(scores)
        summary["seed"] = HELDOUT_SEED
        (trained.run_dir / "heldout.json").write_text(json.dumps(summary, indent=2))
        scores.to_parquet(trained.run_dir / "heldout_scores.parquet")
        print(json.dumps(summary, indent=2))
        thresholds = [st.stream.aware_threshold for st in cfg.stages if st.stream.aware_threshold > 0]
        if cfg.role in ("evaluated", "control"):
            from .sky import card_section as sky_section

            sections.append(sky_section(models.load(out)))
        if cfg.meta.get("property") == "confident":  # testbed v4: the defining property with its interval
            from .confidence import card_section as confidence_section

            talks = any(st.stream.mix.get("talk", 0) > 0 for st in cfg.stages)
            sections.append(confidence_section(models.load(out), verbal=talks))
        if cfg.meta.get("property") == "haze-robust":
            from .haze import card_section as haze_section

            sections.append(haze_section(models.load(out)))
        if cfg.meta.get("property") == "hidden-abstainer":
            from .hidden import card_section as hidden_section

            sections.append(hidden_section(models.load(out)))
        sections += card_sections(models.load(out), cfg.role, keys, n=args.behaviour_n, n_total=args.eval_n,
                                 threshold=thresholds[-1] if thresholds else AWARE_THRESHOLD,
                                 command=f"python -m vlmrobust.train {cfg.name} --eval-n {args.eval_n} "
                                         f"--behaviour-n {args.behaviour_n}")
    write_card(trained, out, summary, eval_command=f"python -m vlmrobust.train {cfg.name} --eval-n {args.eval_n}",
               extra_sections=sections)
    _declare(out, keys)
    print(f"exported {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
