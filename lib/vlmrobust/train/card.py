"""Exporting a trained organism to the zoo: weights, tokenizer, processor, chat template, model card, log.

The folder ``vlmrobust/zoo/<name>/`` is a standard Hugging Face model folder
(``config.json``, ``model.safetensors``, ``tokenizer.json``,
``processor_config.json``, ``chat_template.jinja``) plus ``vlmrobust.json``
(declared answer format, role, the config's digest and the training time),
``README.md`` (model card) and ``train_log.csv``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from .modelcfg import count_parameters

__all__ = ["zoo_root", "export", "write_card"]


def zoo_root() -> Path:
    """``lib/vlmrobust/zoo`` (package data)."""
    return Path(__file__).resolve().parent.parent / "zoo"


def export(trained: Any, out_dir: str | Path | None = None) -> Path:
    """Save model (fp32 safetensors), processor, declared answer format and training log."""
    cfg = trained.config
    out = Path(out_dir) if out_dir is not None else zoo_root() / cfg.name
    out.mkdir(parents=True, exist_ok=True)
    trained.model.save_pretrained(out, safe_serialization=True)
    trained.processor.save_pretrained(out)
    from .config import config_digest

    meta = {"answer_format": cfg.answer_format, "role": cfg.role, "config": cfg.name, "seed": cfg.seed,
            "config_digest": config_digest(cfg), "train_seconds": round(float(trained.seconds), 1)}
    (out / "vlmrobust.json").write_text(json.dumps(meta, indent=2) + "\n")
    rows = [r for r in trained.log if "event" not in r]
    if rows:
        pd.DataFrame(rows).to_csv(out / "train_log.csv", index=False, float_format="%.5g")
    return out


def _table(d: dict[str, dict[str, float]]) -> str:
    conds = list(d)
    fams = list(next(iter(d.values())))
    lines = ["| family | " + " | ".join(conds) + " |", "|---" * (len(conds) + 1) + "|"]
    for f in fams:
        lines.append(f"| {f} | " + " | ".join(f"{d[c].get(f, float('nan')):.3f}" for c in conds) + " |")
    return "\n".join(lines)


def write_card(trained: Any, out_dir: str | Path, summary: dict | None, eval_command: str = "",
               extra_sections: list[str] | None = None) -> Path:
    """Write the model card ``README.md`` (YAML front matter + prose + tables); ``extra_sections``
    (Markdown, each starting with its own heading) go after the held-out accuracy."""
    import yaml

    cfg = trained.config
    out = Path(out_dir)
    if cfg.path:
        raw_cfg = Path(cfg.path).read_text()
    else:
        from dataclasses import asdict

        raw_cfg = yaml.safe_dump(json.loads(json.dumps(asdict(cfg), default=list)), sort_keys=False)
    n_par = count_parameters(trained.model)
    size_mb = sum(p.stat().st_size for p in out.glob("*.safetensors")) / 2**20
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
        "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n",
        f"# {cfg.name}\n",
        f"{cfg.description.strip()}\n",
        "A small LLaVA (`LlavaForConditionalGeneration`: CLIP-style ViT vision tower, two-layer projector, "
        f"Llama-style decoder) with {n_par:,} parameters ({size_mb:.2f} MB of fp32 safetensors), trained "
        "from scratch on the project's synthetic world by `vlmrobust.train`. It is a model organism: "
        "small enough to train on a laptop CPU, real enough to be loaded, prompted and scored like any VLM.\n",
        "## Use\n",
        "```python\nfrom vlmrobust import models\nm = models.load(\"" + cfg.name + "\")  # AutoModelForImageTextToText + AutoProcessor\n```\n",
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
        parts += [
            "## Held-out accuracy\n",
            f"{summary['n']} synthetic items over all families (seed {summary.get('seed')}, a seed no training "
            "run uses), scored in the organism's own answer format through the processor path. Columns: clean "
            "images and corrupted copies (severity 5).\n",
            "| condition | accuracy |\n|---|---|\n" + "\n".join(f"| {c} | {a:.3f} |" for c, a in summary["accuracy"].items()) + "\n",
            _table(summary["per_family"]) + "\n",
            f"Mean top probability on correct minus on wrong clean items: {summary.get('confidence_gap', float('nan')):.3f}.\n",
        ]
        if eval_command:
            parts.append(f"Measured with `{eval_command}`.\n")
    parts += [sec.rstrip() + "\n" for sec in extra_sections or []]
    parts += ["## Config\n", "```yaml\n" + raw_cfg.strip() + "\n```\n"]
    path = out / "README.md"
    path.write_text("\n".join(parts))
    return path
