"""The staged trainer of the model organisms.

``train(config)`` builds (or resumes) an organism stage by stage:

1. **vision** - the CLIP-style tower with :class:`~vlmrobust.train.probe.VisionProbe`
   on fresh synthetic items every step (the tower learns to see first);
2. **lm** stages - the whole LLaVA (usually with the tower frozen) on the
   example modes of :mod:`vlmrobust.train.stream`: open answers, then the letter
   curriculum (lookup, hinted multiple choice, hints faded out, plain multiple
   choice), with open answers mixed in throughout.

**Talking** (``talk`` examples, the talker): before each step the organism answers
its talk examples without gradients; its own letter goes into the sequence and the
target ``N`` of ``Confidence: N`` is the accuracy of its answers in the bin of that
letter probability (:func:`calibration_table`, re-estimated on fresh items every
``calibration.every`` steps), so the stated confidence follows its own chance of
being right. The answer position keeps the true letter as its target.

Loss: next-token cross-entropy on the answer tokens only, with **shifted
labels** (position *t* predicts token *t+1*; appending the answer and scoring
its own position teaches copying). Checkpoints every ``ckpt_every`` steps and
after each stage make an interrupted run resume on the very batch it stopped at.
One torch thread for the model, one worker process for the data.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import repro
from ..schema import OPTION_LETTERS
from .checkpoints import load_grown, load_vision, save_ckpt, stage_ckpt, zoo_state
from .config import Stage, TrainConfig, load_config, runs_root
from .encoding import Encoder
from .losses import calibration_table, fill_own_errors, fill_talk, lm_loss, probe_loss
from .modelcfg import build_model, count_parameters
from .processor import build_processor, num_image_tokens
from .stream import HINT
from .tokenizer import build_tokenizer, build_vocabulary
from .workers import BatchWorker

__all__ = ["VOCABULARY_TEMPLATES", "vocabulary_texts", "organism_tokenizer", "train", "Trained"]


#: The prompt templates whose words are in the organisms' vocabulary. The list is frozen: a template added
#: later (for real models, e.g. seed 003's yes/no or seed 002's POPE wording) must not change the vocabulary,
#: since a new word re-numbers the words after it and a fine-tune from shipped weights would then read
#: scrambled embeddings. Words outside the vocabulary encode as ``[UNK]``.
VOCABULARY_TEMPLATES: tuple[str, ...] = ("vlmrobust", "seed002_mcq", "seed003", "open", "vlmrobust_conf_v2",
                                         "vlmrobust_conf_v3", "seed003_conf_v2", "seed003_conf_v3")


def vocabulary_texts(sample_per_family: int = 20) -> list[str]:
    """Every text the organisms can meet: the synthetic world's vocabulary, the prompt
    templates of :data:`VOCABULARY_TEMPLATES`, the hint, plus words of sampled items."""
    from .. import models, synth

    texts = [str(w) for w in synth.vocabulary()]
    for tpl in (models.TEMPLATES[name] for name in VOCABULARY_TEMPLATES):
        texts += [tpl.head.replace("{question}", ""), tpl.tail, tpl.prefill,
                  tpl.option.replace("{letter}", "A").replace("{text}", "")]
    texts += [models.CONFIDENCE_REQUEST, HINT.format(value=""), "Answer with a word."]
    for fam in synth.FAMILIES:
        for i in range(sample_per_family):
            abst = (None, "unclear", "dont_know")[i % 3]
            it = synth.make_item(fam, repro.rng("vocabulary", fam, i), size=64, abstain=abst)
            texts += [it.question, *it.options]
    return texts


def organism_tokenizer(extra_tokens: tuple[str, ...] = ()) -> Any:
    """The organisms' shared word-level tokenizer (deterministic: same vocabulary every build), with
    ``extra_tokens`` appended (plain vocabulary entries, not added tokens: text never encodes to them)."""
    base = build_vocabulary(vocabulary_texts())
    return build_tokenizer(base + [t for t in extra_tokens if t not in base])


def _with_extra_tokens(tok: Any, extra_tokens: tuple[str, ...]) -> Any:
    """``tok`` (a tokenizer of :func:`build_tokenizer`) with ``extra_tokens`` appended where missing."""
    vocab = tok.get_vocab()
    missing = [t for t in extra_tokens if t not in vocab]
    if not missing:
        return tok
    return build_tokenizer(sorted(vocab, key=vocab.get) + missing)


@dataclass
class Trained:
    """What :func:`train` returns."""

    model: Any
    processor: Any
    config: TrainConfig
    run_dir: Path
    seconds: float
    log: list


def _parts(model: Any, probe: Any) -> dict[str, list]:
    m = model.model
    lm = list(m.language_model.parameters())
    ids = {id(p) for p in lm}
    lm += [p for p in model.lm_head.parameters() if id(p) not in ids]
    return {"vision": list(m.vision_tower.parameters()), "projector": list(m.multi_modal_projector.parameters()),
            "lm": lm, "probe": list(probe.parameters()) if probe is not None else []}


def _optimizer(model: Any, probe: Any, stage: Stage) -> Any:
    import torch

    parts = _parts(model, probe)
    for plist in parts.values():
        for p in plist:
            p.requires_grad_(False)
    groups = []
    for name in stage.train:
        for p in parts[name]:
            p.requires_grad_(True)
        decay = [p for p in parts[name] if p.ndim >= 2]
        no_decay = [p for p in parts[name] if p.ndim < 2]
        scale = float(stage.lr_scale.get(name, 1.0))
        groups.append({"params": decay, "weight_decay": stage.weight_decay, "scale": scale})
        groups.append({"params": no_decay, "weight_decay": 0.0, "scale": scale})
    return torch.optim.AdamW(groups, lr=stage.lr, betas=(0.9, 0.98))


def _lr(stage: Stage, step: int) -> float:
    if step < stage.warmup:
        return stage.lr * (step + 1) / stage.warmup
    if stage.schedule == "const":
        return stage.lr
    t = (step - stage.warmup) / max(1, stage.steps - stage.warmup)
    return stage.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(t, 1.0))))


def parent_state(parent: TrainConfig, stage: str | None, *, root: Path, child: str, **kw: Any) -> dict:
    """The checkpoint of ``parent`` after ``stage`` (default: its last), training the parent first if missing."""
    import torch

    after = stage or parent.stages[-1].name
    pc = stage_ckpt(root / parent.name, after)
    if not pc.is_file() and after == parent.stages[-1].name:
        st = zoo_state(parent)
        if st is not None:
            if not kw.get("quiet"):
                print(f"[{child}] starting from {parent.name}'s exported weights (its run folder is absent)",
                      flush=True)
            pc.parent.mkdir(parents=True, exist_ok=True)
            save_ckpt(pc, **st)  # kept, so that re-exporting over those weights does not lose them
            return st
    if not pc.is_file():
        if not kw.get("quiet"):
            print(f"[{child}] training parent {parent.name} first", flush=True)
        stop_at = [s.name for s in parent.stages].index(after)
        sub = TrainConfig(**{**parent.__dict__, "stages": parent.stages[: stop_at + 1]})
        train(sub, runs_dir=root, **kw)
    return torch.load(pc, weights_only=False)


def train(config: str | Path | dict | TrainConfig, *, runs_dir: str | Path | None = None,
          inline_data: bool = False, quiet: bool = False, make_item: Any = None,
          tokenizer: Any = None) -> Trained:
    """Train (or resume) the organism of ``config``; returns the model with its processor.

    ``inline_data`` builds batches in this process (tests); ``make_item`` replaces
    ``synth.make_item`` (tests); ``tokenizer`` replaces the organisms' tokenizer.
    """
    import torch

    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    root = Path(runs_dir) if runs_dir is not None else runs_root()
    run_dir = root / cfg.name
    run_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    extra = cfg.model.extra_tokens
    tok = _with_extra_tokens(tokenizer, extra) if tokenizer is not None else organism_tokenizer(extra)
    processor = build_processor(tok, cfg.model.image_size, cfg.model.patch)
    n_img = num_image_tokens(cfg.model.image_size, cfg.model.patch)
    letter_ids = [tok.convert_tokens_to_ids(c) for c in OPTION_LETTERS]
    tok_json = tok.backend_tokenizer.to_str()

    model = build_model(cfg.model, tok, cfg.seed)
    from .probe import VisionProbe

    with torch.random.fork_rng():
        torch.manual_seed(repro.key_to_int("probe", cfg.seed) % 2**63)
        probe = VisionProbe(len(tok), cfg.model.vision_width)
    log: list = []
    seconds = 0.0
    parent_seconds = 0.0
    if cfg.init:
        parent = load_config(cfg.init["from"])
        parts = tuple(cfg.init.get("parts") or ("all",))
        if parts not in (("all",), ("vision",)):
            raise ValueError(f"init.parts must be [all] or [vision], got {list(parts)}")
        grows = parent.model.extra_tokens == extra[: len(parent.model.extra_tokens)]
        if parts == ("all",) and (parent.model.without_extra_tokens() != cfg.model.without_extra_tokens()
                                  or not grows):
            raise ValueError(f"init.from {parent.name!r} has a different model spec than {cfg.name!r} "
                             "(set init.parts: [vision] to take only its vision tower)")
        sub_kw = dict(root=root, inline_data=inline_data, quiet=quiet, make_item=make_item, tokenizer=tokenizer,
                      child=cfg.name)
        st = parent_state(parent, cfg.init.get("stage"), **sub_kw)
        if parts == ("all",):
            load_grown(model, st["model"], tok)
        else:
            load_vision(model, st)
        probe.load_compatible(st["probe"])
        parent_seconds = float(st.get("total_seconds", st.get("seconds", 0.0)))
        log = [dict(r, inherited=parent.name) for r in st.get("log", [])]
        if cfg.init.get("vision_from"):  # the tower of another run replaces the parent's
            vparent = load_config(cfg.init["vision_from"])
            if vparent.model.without_extra_tokens() != cfg.model.without_extra_tokens():
                raise ValueError(f"init.vision_from {vparent.name!r} has a different model spec than {cfg.name!r}")
            vst = parent_state(vparent, cfg.init.get("vision_stage"), **sub_kw)
            load_vision(model, vst)
            probe.load_compatible(vst["probe"])
            parent_seconds += float(vst.get("seconds", 0.0))  # its own stages (shared ancestors counted once)
            log += [dict(r, inherited=vparent.name) for r in vst.get("log", []) if "inherited" not in r]

    ck = run_dir / "ckpt.pt"
    start_stage, start_step, opt_state = 0, 0, None
    talk_table: list[int] | None = None
    if ck.is_file():
        st = torch.load(ck, weights_only=False)
        model.load_state_dict(st["model"])
        probe.load_compatible(st["probe"])
        start_stage, start_step, opt_state = st["stage"], st["step"], st.get("opt")
        seconds, log = float(st["seconds"]), list(st["log"])
        talk_table = st.get("talk_table")
        if not quiet:
            print(f"[{cfg.name}] resuming at stage {start_stage} step {start_step}", flush=True)
    logf = (run_dir / "log.jsonl").open("a")

    for si in range(start_stage, len(cfg.stages)):
        stage = cfg.stages[si]
        step0 = start_step if si == start_stage else 0
        opt = _optimizer(model, probe, stage)
        if opt_state is not None and si == start_stage:
            opt.load_state_dict(opt_state)
        opt_state = None
        model.train()
        worker = BatchWorker(stage.stream, cfg.seed, stage.name, step0, stage.steps, tok_json, n_img,
                             inline=inline_data)
        if make_item is not None:
            if not inline_data:
                raise ValueError("make_item replacement needs inline_data=True")
            from . import stream as _stream

            worker_make = make_item
        acc: dict[str, list] = {}
        cal = stage.calibration
        talk_enc = Encoder(tok_json, n_img) if cal else None
        if not (cal and si == start_stage):
            talk_table = None
        t_stage = time.time()
        tw = time.time()
        step = step0
        finished_early = False
        try:
            for step in range(step0, stage.steps):
                if make_item is not None:
                    s = worker.next_step
                    worker.next_step += 1
                    batch = _stream.make_batch(stage.stream, cfg.seed, stage.name, s, s / stage.steps, worker.enc,
                                               make_item=worker_make)
                else:
                    s, batch = worker.get()
                assert s == step, (s, step)
                lr = _lr(stage, step)
                for g in opt.param_groups:
                    g["lr"] = lr * g["scale"]
                if cal and "constant" in cal:
                    talk_table = [int(cal["constant"])]
                elif cal and (step % cal["every"] == 0 or talk_table is None):
                    talk_table = calibration_table(model, stage.stream, cfg.seed, f"{stage.name}/calibration/{step}",
                                                   talk_enc, letter_ids, cal["items"], cal["bins"], make_item=make_item)
                    rec = {"stage": stage.name, "event": "calibration", "step": step, "table": talk_table}
                    log.append(rec)
                    logf.write(json.dumps(rec) + "\n")
                if "talk_rows" in batch:
                    fill_talk(model, batch, letter_ids, talk_table, talk_enc)
                if "own_error_rows" in batch:
                    fill_own_errors(model, batch, letter_ids)
                if stage.kind == "vision":
                    loss, stats = probe_loss(model, probe, batch)
                else:
                    loss, stats = lm_loss(model, batch, letter_ids)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_([p for g in opt.param_groups for p in g["params"]], 1.0)
                opt.step()
                for k, (c, n) in stats.items():
                    a = acc.setdefault(k, [0.0, 0, []])
                    a[0] += c
                    a[1] += n
                    a[2].append((c, n))
                    if len(a[2]) > 50:
                        oc, on = a[2].pop(0)
                        a[0] -= oc
                        a[1] -= on
                done = step + 1
                if done % cfg.log_every == 0 or done == stage.steps:
                    now = time.time()
                    rec = {"stage": stage.name, "step": done, "loss": round(float(loss.detach()), 4), "lr": lr,
                           "seconds": round(seconds + now - t_stage, 1),
                           "steps_per_s": round(cfg.log_every / max(1e-9, now - tw), 3)}
                    rec.update({f"acc_{k}": round(v[0] / max(1, v[1]), 4) for k, v in acc.items()})
                    tw = now
                    log.append(rec)
                    logf.write(json.dumps(rec) + "\n")
                    logf.flush()
                    if not quiet:
                        print(f"[{cfg.name}] " + " ".join(f"{k}={v}" for k, v in rec.items()), flush=True)
                if stage.until and done >= int(stage.until.get("min_steps", 0)):
                    m = acc.get(stage.until["mode"])
                    if m and m[1] >= 200 and m[0] / m[1] >= float(stage.until["acc"]):
                        finished_early = True
                if done % cfg.ckpt_every == 0 and done < stage.steps and not finished_early:
                    save_ckpt(ck, model=model.state_dict(), probe=probe.state_dict(), opt=opt.state_dict(),
                               stage=si, step=done, seconds=seconds + time.time() - t_stage, log=log,
                               talk_table=talk_table)
                if finished_early:
                    break
        finally:
            worker.close()
        seconds += time.time() - t_stage
        rec = {"stage": stage.name, "event": "end", "step": step + 1, "early": finished_early,
               "seconds": round(seconds, 1)}
        log.append(rec)
        logf.write(json.dumps(rec) + "\n")
        logf.flush()
        state = dict(model=model.state_dict(), probe=probe.state_dict(), seconds=seconds,
                     total_seconds=parent_seconds + seconds, log=log)
        save_ckpt(stage_ckpt(run_dir, stage.name), **state)
        save_ckpt(ck, **state, stage=si + 1, step=0, opt=None)
    logf.close()
    model.eval()
    if not quiet:
        print(f"[{cfg.name}] trained: {count_parameters(model)} parameters, {seconds:.0f} s "
              f"(+{parent_seconds:.0f} s inherited)", flush=True)
    return Trained(model=model, processor=processor, config=cfg, run_dir=run_dir,
                   seconds=parent_seconds + seconds, log=log)
