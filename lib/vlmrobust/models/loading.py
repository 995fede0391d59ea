"""Loading zoo organisms, local model folders and hub ids (see :mod:`vlmrobust.models`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..schema import ANSWER_FORMATS
from . import zoo

__all__ = ["LoadedModel", "ModelLoadError", "load", "default_method", "fingerprint", "image_only", "offline",
           "hub_cached", "hub_reachable", "REMOTE_CODE"]

#: Hub ids whose model classes live in the hub repository's own code (``trust_remote_code``), which the notebooks
#: do not run, each with an alternative that transformers implements natively: the same model converted to
#: transformers' ``Ovis2ForConditionalGeneration`` for Ovis2; for Moondream2, which has no native class, a
#: native model of similar size.
REMOTE_CODE: dict[str, str] = {
    "vikhyatk/moondream2": "HuggingFaceTB/SmolVLM-256M-Instruct",
    "AIDC-AI/Ovis2-1B": "thisisiron/Ovis2-1B-hf",
    "AIDC-AI/Ovis2-2B": "thisisiron/Ovis2-2B-hf",
}


class ModelLoadError(OSError):
    """A model name, path or hub id could not be loaded (with the reason)."""


@dataclass
class LoadedModel:
    """A model ready for scoring. ``model_id`` and ``revision`` identify it in result tables."""

    model: Any
    processor: Any
    tokenizer: Any
    answer_format: str
    model_id: str
    revision: str | None = None
    name: str = ""
    source: str = ""
    extra: dict = field(default_factory=dict)
    #: a blind twin (``blind:NAME``): every image it is shown is replaced by :func:`blind_image` of it
    blind: bool = False

    @property
    def device(self) -> Any:
        return next(self.model.parameters()).device

    @cached_property
    def settings(self) -> dict:
        """Processor settings that change the model's inputs (hashed into sweep shard keys)."""
        ip = getattr(self.processor, "image_processor", None)
        ip_dict = ip.to_dict() if ip is not None and hasattr(ip, "to_dict") else {}
        ip_dict = {k: v for k, v in ip_dict.items() if not k.startswith("_")}
        return {
            "processor": type(self.processor).__name__,
            "image_processor": ip_dict,
            "chat_template": getattr(self.processor, "chat_template", None),
            "dtype": str(getattr(self.model, "dtype", "")),
            "answer_format": self.answer_format,
            **({"blind": BLIND_GREY} if self.blind else {}),
        }


#: The prefix of a blind twin's name: ``blind:NAME`` is model ``NAME`` shown a constant image whatever the
#: condition, a null model that cannot see (the verdicts' negative control; no training needed).
BLIND_PREFIX = "blind:"
#: The grey level of a blind twin's image (every pixel, every channel).
BLIND_GREY = 128


def blind_image(img: Any) -> Any:
    """A constant mid-grey image (:data:`BLIND_GREY`) of ``img``'s size and mode: what a blind twin sees."""
    from PIL import Image

    if isinstance(img, Image.Image):
        return Image.new(img.mode, img.size, (BLIND_GREY,) * len(img.getbands()) if len(img.getbands()) > 1
                         else BLIND_GREY)
    arr = np.asarray(img)
    return np.full_like(arr, BLIND_GREY)


def default_method(answer_format: str) -> str:
    """The default scoring method for an answer format: letter logits or option log-likelihood."""
    if answer_format == "letters":
        return "letter"
    if answer_format == "text":
        return "loglik"
    raise ValueError(f"answer_format must be one of {ANSWER_FORMATS}, got {answer_format!r}")


def offline() -> bool:
    """Whether the Hugging Face hub is switched off (``HF_HUB_OFFLINE`` set to 1/true/yes/on)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def hub_reachable() -> bool:
    """Whether the hub's host name resolves (a quick look-up; no request is sent)."""
    import socket
    from urllib.parse import urlsplit

    host = urlsplit(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def hub_cached(model_id: str, revision: str | None = None) -> bool:
    """Whether a hub model's ``config.json`` is in the local Hugging Face cache (no network used)."""
    from huggingface_hub import try_to_load_from_cache

    hit = try_to_load_from_cache(model_id, "config.json", revision=revision)
    return isinstance(hit, str)


def _resolve_dtype(dtype: Any) -> Any:
    import torch

    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    if isinstance(dtype, str) and dtype != "auto":
        try:
            return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[dtype]
        except KeyError:
            raise ValueError(
                f"dtype must be float32, float16, bfloat16, 'auto' or a torch.dtype, got {dtype!r}") from None
    return dtype


def load(name_or_path: str | os.PathLike, *, revision: str | None = None, trust_remote_code: bool = False,
         dtype: Any = None, device: str = "cpu", answer_format: str | None = None) -> LoadedModel:
    """Load a zoo organism (by name), a local model folder, or a Hugging Face hub id.

    The model is loaded with ``AutoModelForImageTextToText`` and
    ``AutoProcessor``, in eval mode, ``trust_remote_code`` off unless asked.
    ``HF_HUB_OFFLINE=1`` is respected: a hub id missing from the local cache
    raises :class:`ModelLoadError` saying so. The answer format comes from the
    folder's ``vlmrobust.json`` / model card (:func:`zoo.answer_format`), the
    ``answer_format`` argument, or defaults to ``"letters"`` for hub models.
    """
    from transformers import AutoModelForImageTextToText, AutoProcessor

    if not isinstance(name_or_path, (str, os.PathLike)) or not str(name_or_path).strip():
        raise TypeError(f"name_or_path must be a zoo name, a folder or a hub id, got {name_or_path!r}")
    if answer_format is not None and answer_format not in ANSWER_FORMATS:
        raise ValueError(f"answer_format must be one of {ANSWER_FORMATS} or None, got {answer_format!r}")
    raw = str(name_or_path)
    if raw.startswith(BLIND_PREFIX):
        lm = load(raw[len(BLIND_PREFIX):], revision=revision, trust_remote_code=trust_remote_code, dtype=dtype,
                  device=device, answer_format=answer_format)
        lm.blind, lm.name, lm.model_id = True, raw, BLIND_PREFIX + lm.model_id
        return lm
    kwargs: dict[str, Any] = {"trust_remote_code": bool(trust_remote_code)}
    if raw in zoo.names():
        where, source, model_id = zoo.folder(raw), "zoo", f"zoo/{raw}"
    elif Path(raw).expanduser().is_dir():
        where, source = Path(raw).expanduser().resolve(), "path"
        model_id = where.name
    elif Path(raw).expanduser().exists() or raw.startswith((".", "/", "~")):
        raise ModelLoadError(f"name_or_path {raw!r} is not a model folder (zoo names: {zoo.names()})")
    else:
        where, source, model_id = raw, "hub", raw
        if revision is not None:
            kwargs["revision"] = revision
        if offline():
            kwargs["local_files_only"] = True
    torch_dtype = _resolve_dtype(dtype)
    from transformers.utils import logging as hf_logging

    quiet = source != "hub" and hf_logging.is_progress_bar_enabled()  # a local folder loads in a blink
    if quiet:
        hf_logging.disable_progress_bar()
    try:
        try:
            processor = AutoProcessor.from_pretrained(str(where), **kwargs)
        except (OSError, ValueError, ImportError) as exc:
            if "video processor" not in str(exc).lower():
                raise
            processor = _image_only_processor(str(where), kwargs)
        model = AutoModelForImageTextToText.from_pretrained(
            str(where), **kwargs, **({"dtype": torch_dtype} if torch_dtype is not None else {})
        )
    except (OSError, ValueError) as exc:
        if source == "hub" and offline():
            raise ModelLoadError(
                f"model {raw!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
                f"download it first (huggingface-cli download {raw}) or unset HF_HUB_OFFLINE. ({exc})"
            ) from exc
        raise ModelLoadError(f"could not load model {raw!r} from {source}: {exc}") from exc
    finally:
        if quiet:
            hf_logging.enable_progress_bar()
    model.eval()
    model.to(device)
    declared = zoo.answer_format(where) if source != "hub" else None
    fmt = answer_format or declared or "letters"
    if source != "hub" and revision is None:
        revision = zoo.folder_revision(where)
    tokenizer = getattr(processor, "tokenizer", processor)
    return LoadedModel(model=model, processor=processor, tokenizer=tokenizer, answer_format=fmt,
                       model_id=model_id, revision=revision, name=Path(raw).name if source != "hub" else raw,
                       source=source)


class _NoVideoProcessor:
    """Stands in for a video processor where a processor reads its frame defaults without any video."""

    num_frames = None
    fps = None


def image_only(processor_cls: type) -> type:
    """``processor_cls`` without its video processor, for machines without torchvision.

    Qwen2-VL, LLaVA-OneVision, InternVL, SmolVLM and Gemma 4 processors carry a
    video processor that needs torchvision; images do not. The subclass keeps
    the class's own image handling (image-token expansion included) and its
    name. Gemma 4's processor passes ``video_processor`` on to
    ``ProcessorMixin`` by keyword and SmolVLM's requires it as an argument: the
    keyword is dropped on its way to ``ProcessorMixin`` (a class placed just
    before it in the method order) and the argument is filled with ``None`` when
    loading (through ``from_dict``, or ``from_args_and_dict`` in older
    releases). SmolVLM's ``apply_chat_template`` reads
    ``video_processor.num_frames`` and ``.fps`` even without a video; both read
    ``None``.
    """
    import inspect

    from transformers import ProcessorMixin

    class _DropVideo(ProcessorMixin):  # sits between processor_cls and ProcessorMixin in the method order
        def __init__(self, *args, video_processor=None, **kwargs):
            super().__init__(*args, **kwargs)

    needs_slot = "video_processor" in inspect.signature(processor_cls.__init__).parameters

    class ImageOnly(processor_cls, _DropVideo):  # type: ignore[misc, valid-type]
        video_processor = _NoVideoProcessor()

        @classmethod
        def get_attributes(cls) -> list[str]:
            return [a for a in processor_cls.get_attributes() if "video" not in a]

        # transformers up to 5.2x built a loaded processor through from_args_and_dict, later releases
        # through from_dict: the empty slot is filled on both paths
        @classmethod
        def from_args_and_dict(cls, args, processor_dict, **kwargs):
            if needs_slot:
                kwargs.setdefault("video_processor", None)
            return super().from_args_and_dict(args, processor_dict, **kwargs)

        @classmethod
        def from_dict(cls, processor_dict, **kwargs):
            if needs_slot:
                kwargs.setdefault("video_processor", None)
            return super().from_dict(processor_dict, **kwargs)

    ImageOnly.__name__ = processor_cls.__name__
    ImageOnly.__qualname__ = processor_cls.__qualname__
    return ImageOnly


def _image_only_processor(where: str, kwargs: dict) -> Any:
    """Load a processor whose video processor cannot be built here (no torchvision)."""
    import transformers
    from huggingface_hub import hf_hub_download

    local = Path(where) / "processor_config.json"
    if not local.is_file():
        local = Path(hf_hub_download(where, "processor_config.json", revision=kwargs.get("revision"),
                                     local_files_only=bool(kwargs.get("local_files_only"))))
    name = json.loads(local.read_text()).get("processor_class")
    cls = getattr(transformers, str(name), None)
    if cls is None:
        raise ValueError(f"unknown processor_class {name!r} in {local}")
    return image_only(cls).from_pretrained(where, **kwargs)


def fingerprint(name_or_path: str | os.PathLike, revision: str | None = None) -> dict:
    """What identifies a model's weights and processor without loading it (for sweep shard keys).

    Zoo names and local folders: a content hash of the folder's weights, configs,
    processor settings and chat template. Hub ids: the id and the requested
    revision (pin one for reproducible caches).
    """
    raw = str(name_or_path)
    if raw in zoo.names():
        return {"source": "zoo", "id": f"zoo/{raw}", "revision": revision or zoo.folder_revision(zoo.folder(raw))}
    folder = Path(raw).expanduser()
    if folder.is_dir():
        return {"source": "path", "id": folder.resolve().name, "revision": revision or zoo.folder_revision(folder)}
    return {"source": "hub", "id": raw, "revision": revision}
