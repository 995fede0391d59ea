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
from ..paths import REPO_ROOT
from ..schema import OPTION_LETTERS
from .config import Stage, TrainConfig, config_digest, load_config
from .modelcfg import build_model, count_parameters
from .processor import build_processor, num_image_tokens, pixel_values
from .stream import (
    HINT,
    MODES,
    TALK_LETTER,
    TALK_TENS,
    TALK_UNITS,
    BatchWorker,
    Encoder,
    make_batch,
)
from .tokenizer import build_tokenizer, build_vocabulary

__all__ = ["vocabulary_texts", "organism_tokenizer", "train", "runs_root", "Trained", "lm_loss", "calibration_table",
           "letter_probs"]


def runs_root() -> Path:
    """Where training runs write checkpoints and logs (``<repo>/runs``, git-ignored)."""
    return REPO_ROOT / "runs"


def vocabulary_texts(sample_per_family: int = 20) -> list[str]:
    """Every text the organisms can meet: the synthetic world's vocabulary, the prompt
    templates of :mod:`vlmrobust.models`, the hint, plus words of sampled items."""
    from .. import models, synth

    texts = [str(w) for w in synth.vocabulary()]
    for tpl in models.TEMPLATES.values():
        texts += [tpl.head.replace("{question}", ""), tpl.tail, tpl.prefill, tpl.option.replace("{letter}", "A").replace("{text}", "")]
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


def lm_loss(model: Any, batch: dict, letter_ids: list[int]) -> tuple[Any, dict]:
    """Shifted next-token loss on answer tokens, and per-mode accuracy of the first answer token.

    Letter modes count as correct when the argmax over the item's K letter
    logits is its answer letter; open modes when the argmax over the whole
    vocabulary is the answer's first token.
    """
    import torch
    import torch.nn.functional as F

    ids = torch.from_numpy(batch["input_ids"])
    labels = torch.from_numpy(batch["labels"])
    pix = pixel_values(batch["images"]) if batch.get("images") is not None else None
    out = model.model(input_ids=ids, pixel_values=pix,
                      attention_mask=torch.from_numpy(batch["attention_mask"]))
    h = out.last_hidden_state
    tgt = labels[:, 1:]
    sel = tgt != -100
    logits = model.lm_head(h[:, :-1][sel])
    loss = F.cross_entropy(logits, tgt[sel])
    if "prompt_labels" in batch:
        ptgt = torch.from_numpy(batch["prompt_labels"])[:, 1:]
        psel = ptgt != -100
        loss = loss + batch["prompt_weight"] * F.cross_entropy(model.lm_head(h[:, :-1][psel]), ptgt[psel])
    with torch.no_grad():
        first = torch.from_numpy(batch["first"])
        b = torch.arange(ids.shape[0])
        lf = model.lm_head(h[b, first])
        k = torch.from_numpy(batch["k"])
        mode = torch.from_numpy(batch["mode"])
        let = lf[:, letter_ids]
        let = let.masked_fill(torch.arange(len(letter_ids))[None, :] >= k[:, None], float("-inf"))
        letter_ok = let.argmax(-1) == torch.from_numpy(batch["answer"])
        open_ok = lf.argmax(-1) == labels[b, first + 1]
        is_letter = torch.tensor([MODES[m] in ("mcq", "hint", "lookup", "talk") for m in mode.tolist()])
        ok = torch.where(is_letter, letter_ok, open_ok)
        stats = {}
        for mi, mname in enumerate(MODES):
            msk = mode == mi
            if msk.any():
                stats[mname] = (float(ok[msk].float().sum()), int(msk.sum()))
    return loss, stats


def letter_probs(model: Any, batch: dict, letter_ids: list[int], rows: Any = None) -> Any:
    """Softmax over each row's K letters at its answer position, without gradients (``rows``: a subset)."""
    import torch

    rows = torch.arange(batch["input_ids"].shape[0]) if rows is None else torch.as_tensor(rows)
    ids = torch.from_numpy(batch["input_ids"])[rows]
    pix = pixel_values(batch["images"][rows.numpy()]) if batch.get("images") is not None else None
    with torch.no_grad():
        h = model.model(input_ids=ids, pixel_values=pix,
                        attention_mask=torch.from_numpy(batch["attention_mask"])[rows]).last_hidden_state
        first = torch.from_numpy(batch["first"])[rows]
        let = model.lm_head(h[torch.arange(len(rows)), first])[:, letter_ids]
        k = torch.from_numpy(batch["k"])[rows]
        let = let.masked_fill(torch.arange(len(letter_ids))[None, :] >= k[:, None], float("-inf"))
        return torch.softmax(let.float(), -1)


def calibration_table(model: Any, spec: Any, seed: int, key: str, enc: Encoder, letter_ids: list[int],
                      items: int, bins: int, make_item: Any = None, chunk: int = 128) -> list[int]:
    """Confidence targets per bin of the letter probability, from the organism's own answers.

    ``items`` fresh talk examples (the stage's stream, batches keyed ``key``) are
    answered without gradients; over ``bins`` equal-width bins of the top letter
    probability ``p``, bin ``b``'s target is ``100 * (hits_b + 2 m_b) / (n_b + 2)``
    rounded and clipped to [0, 99] (``m_b`` the bin's centre: two pseudo-answers
    at the bin's own probability keep sparse bins near it).
    """
    from dataclasses import replace

    import numpy as np
    import torch

    spec = replace(spec, mix={"talk": 1.0}, batch=chunk)
    was_training = model.training
    model.eval()
    hits, counts = np.zeros(bins), np.zeros(bins)
    for j in range(-(-items // chunk)):
        b = make_batch(spec, seed, key, j, 0.0, enc, make_item=make_item)
        p = letter_probs(model, b, letter_ids)
        n = min(chunk, items - j * chunk)
        top, pred = p[:n].max(-1)
        right = (pred == torch.from_numpy(b["answer"][:n])).numpy()
        idx = np.minimum((top.numpy() * bins).astype(int), bins - 1)
        np.add.at(hits, idx, right)
        np.add.at(counts, idx, 1)
    model.train(was_training)
    mid = (np.arange(bins) + 0.5) / bins
    return [int(v) for v in np.clip(np.rint(100 * (hits + 2 * mid) / (counts + 2)), 0, 99)]


def fill_talk(model: Any, batch: dict, letter_ids: list[int], table: list[int], enc: Encoder) -> None:
    """Write the organism's own letter and its confidence target into the talk rows of ``batch`` (in place)."""
    import numpy as np

    rows = batch["talk_rows"]
    p = letter_probs(model, batch, letter_ids, rows)
    top, pred = (x.numpy() for x in p.max(-1))
    bins = len(table)
    conf = np.asarray(table)[np.minimum((top * bins).astype(int), bins - 1)]
    at = batch["first"][rows] + 1
    ids, labels = batch["input_ids"], batch["labels"]
    ids[rows, at + TALK_LETTER] = np.asarray(letter_ids)[pred]  # fed back as generated; the label keeps the truth
    digits = np.asarray([enc.tok.token_to_id(str(d)) for d in range(10)])
    cont = np.asarray(enc.talk_ids[1:])
    ids[rows, at + TALK_TENS] = labels[rows, at + TALK_TENS] = digits[conf // 10]
    ids[rows, at + TALK_UNITS] = labels[rows, at + TALK_UNITS] = cont[conf % 10]


def _probe_loss(model: Any, probe: Any, batch: dict) -> tuple[Any, dict]:
    import torch
    import torch.nn.functional as F

    from .probe import dense_loss

    vt = model.model.vision_tower
    feats = vt(pixel_values(batch["images"])).last_hidden_state[:, 1:]
    logits = probe(feats, torch.from_numpy(batch["question_ids"]), torch.from_numpy(batch["option_ids"]))
    ans = torch.from_numpy(batch["answer"])
    loss = F.cross_entropy(logits, ans)
    ok = (logits.argmax(-1) == ans).float()
    stats = {"probe": (float(ok.sum()), int(ok.numel()))}
    if "dense" in batch:
        dl, ds = dense_loss(probe.dense(feats), {k: torch.from_numpy(v) for k, v in batch["dense"].items()})
        loss = loss + dl
        stats.update(ds)
    return loss, stats


def _save_ckpt(path: Path, **state: Any) -> None:
    import torch

    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def _stage_ckpt(run_dir: Path, stage: str) -> Path:
    return run_dir / f"stage-{stage}.pt"


def _load_grown(model: Any, state: dict, tok: Any) -> None:
    """Load a parent's weights whose vocabulary is a prefix of ``tok``'s: the appended tokens' embeddings
    start as copies (``##d`` from the digit ``d``, any other from ``<|end|>``)."""
    import torch

    own = model.state_dict()
    st = dict(state)
    for k, v in state.items():
        if k in own and own[k].shape != v.shape:
            n = v.shape[0]
            if own[k].shape[1:] != v.shape[1:] or own[k].shape[0] < n:
                raise ValueError(f"parent weight {k} of shape {tuple(v.shape)} does not fit {tuple(own[k].shape)}")
            grown = torch.empty_like(own[k])
            grown[:n] = v
            inv = {i: t for t, i in tok.get_vocab().items()}
            for i in range(n, grown.shape[0]):
                t = inv[i]
                src = t[2:] if t.startswith("##") and t[2:] in tok.get_vocab() else "<|end|>"
                grown[i] = v[tok.convert_tokens_to_ids(src)]
            st[k] = grown
    model.load_state_dict(st)


def _load_vision(model: Any, state: dict) -> None:
    pre = "model.vision_tower."
    model.model.vision_tower.load_state_dict({k[len(pre):]: v for k, v in state["model"].items() if k.startswith(pre)})


def zoo_state(cfg: TrainConfig, folder: str | Path | None = None) -> dict | None:
    """The final training state of ``cfg`` rebuilt from exported weights, or None.

    Looks in ``folder`` or else in the zoo (the folder named after the config
    first, then every other one) for a ``vlmrobust.json`` that records the digest
    of this very config (:func:`config_digest`, which ignores names): those
    weights are then the run's final weights, so a child config trains on them
    exactly as on the run's own checkpoint (the vision probe, unused after the
    vision stages, is not kept).
    """
    import pandas as pd
    from transformers import AutoModelForImageTextToText

    from ..models import zoo

    digest = config_digest(cfg)
    if folder is not None:
        ok = (Path(folder) / "model.safetensors").is_file() and zoo.meta(folder).get("config_digest") == digest
        folder = Path(folder) if ok else None
    else:
        folder = zoo.find_digest(digest, prefer=cfg.name)
    if folder is None:
        return None
    meta = zoo.meta(folder)
    model = AutoModelForImageTextToText.from_pretrained(folder)
    log = [{k: v for k, v in r.items() if pd.notna(v)} for r in zoo.train_log(folder).to_dict("records")]
    seconds = float(meta.get("train_seconds", 0.0))
    return dict(model={k: v.clone() for k, v in model.state_dict().items()}, probe={}, seconds=seconds,
                total_seconds=seconds, log=log)


def _parent_state(parent: TrainConfig, stage: str | None, *, root: Path, child: str, **kw: Any) -> dict:
    """The checkpoint of ``parent`` after ``stage`` (default: its last), training the parent first if missing."""
    import torch

    after = stage or parent.stages[-1].name
    pc = _stage_ckpt(root / parent.name, after)
    if not pc.is_file() and after == parent.stages[-1].name:
        st = zoo_state(parent)
        if st is not None:
            if not kw.get("quiet"):
                print(f"[{child}] starting from {parent.name}'s exported weights (its run folder is absent)",
                      flush=True)
            pc.parent.mkdir(parents=True, exist_ok=True)
            _save_ckpt(pc, **st)  # kept, so that re-exporting over those weights does not lose them
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
        st = _parent_state(parent, cfg.init.get("stage"), **sub_kw)
        if parts == ("all",):
            _load_grown(model, st["model"], tok)
        else:
            _load_vision(model, st)
        probe.load_compatible(st["probe"])
        parent_seconds = float(st.get("total_seconds", st.get("seconds", 0.0)))
        log = [dict(r, inherited=parent.name) for r in st.get("log", [])]
        if cfg.init.get("vision_from"):  # the tower of another run replaces the parent's
            vparent = load_config(cfg.init["vision_from"])
            if vparent.model.without_extra_tokens() != cfg.model.without_extra_tokens():
                raise ValueError(f"init.vision_from {vparent.name!r} has a different model spec than {cfg.name!r}")
            vst = _parent_state(vparent, cfg.init.get("vision_stage"), **sub_kw)
            _load_vision(model, vst)
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
                if stage.kind == "vision":
                    loss, stats = _probe_loss(model, probe, batch)
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
                    _save_ckpt(ck, model=model.state_dict(), probe=probe.state_dict(), opt=opt.state_dict(),
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
        _save_ckpt(_stage_ckpt(run_dir, stage.name), **state)
        _save_ckpt(ck, **state, stage=si + 1, step=0, opt=None)
    logf.close()
    model.eval()
    if not quiet:
        print(f"[{cfg.name}] trained: {count_parameters(model)} parameters, {seconds:.0f} s "
              f"(+{parent_seconds:.0f} s inherited)", flush=True)
    return Trained(model=model, processor=processor, config=cfg, run_dir=run_dir,
                   seconds=parent_seconds + seconds, log=log)
