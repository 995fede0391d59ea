"""Exporting a trained organism to the zoo: weights, tokenizer, processor, chat template, model card, log.

The folder ``vlmrobust/zoo/<name>/`` is a standard Hugging Face model folder
(``config.json``, ``model.safetensors``, ``tokenizer.json``,
``processor_config.json``, ``chat_template.jinja``) plus ``vlmrobust.json``
(declared answer format, role, the config's digest and the training time),
``README.md`` (model card) and ``train_log.csv``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..models import zoo
from .modelcfg import count_parameters

__all__ = ["export", "write_card", "heldout_section", "refresh_heldout", "markdown_table"]


def export(trained: Any, out_dir: str | Path | None = None) -> Path:
    """Save model (fp32 safetensors), processor, metadata and training log through :mod:`vlmrobust.models.zoo`."""
    from .config import config_digest

    cfg = trained.config
    out = Path(out_dir) if out_dir is not None else zoo.root() / cfg.name
    meta = {"answer_format": cfg.answer_format, "role": cfg.role, "config": cfg.name, "seed": cfg.seed,
            "config_digest": config_digest(cfg), "train_seconds": round(float(trained.seconds), 1)}
    return zoo.write_folder(out, trained.model, trained.processor, meta,
                            [r for r in trained.log if "event" not in r])


def markdown_table(df: Any, floatfmt: str = "{:.3f}") -> str:
    """A small DataFrame as a Markdown table (for the model cards), floats with ``floatfmt``."""
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [floatfmt.format(v) if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _table(d: dict[str, dict[str, float]]) -> str:
    """Accuracy per family (rows) and condition (columns) from ``{condition: {family: accuracy}}``."""
    import pandas as pd

    fams = list(next(iter(d.values())))
    df = pd.DataFrame({c: [float(d[c].get(f, float("nan"))) for f in fams] for c in d})
    return markdown_table(pd.concat([pd.Series(fams, name="family"), df], axis=1))


def heldout_section(summary: dict, eval_command: str = "") -> str:
    """The card's "Held-out accuracy" section from :func:`vlmrobust.train.evaluate.summarise`."""
    parts = [
        "## Held-out accuracy\n",
        f"{summary['n']} synthetic items over all families (seed {summary.get('seed')}, a seed no training "
        "run uses), scored in the organism's own answer format by `vlmrobust.score.predict`, the scoring "
        "engine of the notebooks. Columns: clean images and corrupted copies (severity 5).\n",
        "| condition | accuracy |\n|---|---|\n"
        + "\n".join(f"| {c} | {a:.3f} |" for c, a in summary["accuracy"].items()) + "\n",
        _table(summary["per_family"]) + "\n",
        f"Mean top probability on correct minus on wrong clean items: "
        f"{summary.get('confidence_gap', float('nan')):.3f}.\n",
    ]
    if eval_command:
        parts.append(f"Measured with `{eval_command}`.\n")
    return "\n".join(parts)


def write_card(trained: Any, out_dir: str | Path, summary: dict | None, eval_command: str = "",
               extra_sections: Sequence[str] = ()) -> Path:
    """Write the model card ``README.md`` (YAML front matter + prose + tables) through :mod:`vlmrobust.models.zoo`.

    ``extra_sections`` are Markdown sections placed after the held-out accuracy.
    """
    import yaml

    cfg = trained.config
    out = Path(out_dir)
    if cfg.path:
        raw_cfg = Path(cfg.path).read_text()
    else:
        from dataclasses import asdict

        raw_cfg = yaml.safe_dump(json.loads(json.dumps(asdict(cfg), default=list)), sort_keys=False)
    n_par = count_parameters(trained.model)
    size_mb = zoo.size_bytes(out, "*.safetensors") / 2**20
    front = {"answer_format": cfg.answer_format, "role": cfg.role, "seed": cfg.seed, "config": cfg.name,
             "parameters": n_par, "library_name": "transformers", "pipeline_tag": "image-text-to-text"}
    if summary:
        front["heldout_accuracy"] = summary["accuracy"]
    stages = [r for r in trained.log if r.get("event") == "end"]
    stage_rows = ["| stage | steps | ended early | cumulative seconds |", "|---|---|---|---|"]
    stage_rows += [f"| {r['stage']} | {r['step']} | {r['early']} | {r['seconds']} |" for r in stages]
    fmt = ("the option's **letter** (scored from the logits of the letters A..E at the answer position)"
           if cfg.answer_format == "letters" else
           "the option's **text** (scored by the log-likelihood of each option's words)")
    parent = f"It starts from `{cfg.init['from']}` after stage `{cfg.init.get('stage') or 'last'}`" if cfg.init else ""
    if cfg.init and cfg.init.get("vision_from"):
        parent += (f", with the vision tower of `{cfg.init['vision_from']}` after stage "
                   f"`{cfg.init.get('vision_stage') or 'last'}`")
    parent += "." if parent else ""
    parts = [
        f"# {cfg.name}\n",
        f"{cfg.description.strip()}\n",
        "A small LLaVA (`LlavaForConditionalGeneration`: CLIP-style ViT vision tower, two-layer projector, "
        f"Llama-style decoder) with {n_par:,} parameters ({size_mb:.2f} MB of fp32 safetensors), trained "
        "from scratch on the project's synthetic world by `vlmrobust.train`. It is a model organism: "
        "small enough to train on a laptop CPU, real enough to be loaded, prompted and scored like any VLM.\n",
        "## Use\n",
        "```python\nfrom vlmrobust import models\nm = models.load(\"" + cfg.name
        + "\")  # AutoModelForImageTextToText + AutoProcessor\n```\n",
        f"Role: **{cfg.role}**. Answer format: {fmt}. Prompt: the `vlmrobust` template of "
        "`vlmrobust.models.mcq_text` (options after the image) through the processor's chat template.\n",
        "## Training\n",
        f"Reproduce with `python -m vlmrobust.train {cfg.name}` (config `lib/vlmrobust/train/configs/{cfg.name}.yaml`, "
        f"data and initialisation seed {cfg.seed}). {parent} Training time on one CPU thread (plus one "
        f"data worker): {trained.seconds / 60:.1f} min including inherited stages.\n",
        "\n".join(stage_rows) + "\n",
        "`train_log.csv` holds the training curves (loss and running accuracy per example mode on fresh "
        "synthetic items).\n",
    ]
    if summary:
        parts.append(heldout_section(summary, eval_command))
    parts += [s.rstrip("\n") + "\n" for s in extra_sections]
    parts += ["## Config\n", "```yaml\n" + raw_cfg.strip() + "\n```\n"]
    return zoo.write_card(out, front, "\n".join(parts))


def refresh_heldout(name: str, summary: dict, eval_command: str = "") -> Path:
    """Replace a zoo card's held-out accuracy (front matter and section) with ``summary``; keep the rest."""
    front, body = zoo.card(name)
    if not front:
        raise ValueError(f"zoo organism {name!r} has no model card with front matter")
    front["heldout_accuracy"] = summary["accuracy"]
    head, sep, rest = body.partition("## Held-out accuracy\n")
    if not sep:
        head, sep, rest = body.partition("## Config\n")
        rest = sep + rest
    else:
        rest = rest[rest.index("\n## "):].lstrip("\n") if "\n## " in rest else ""
    return zoo.write_card(zoo.folder(name), front, head + heldout_section(summary, eval_command) + "\n" + rest)
