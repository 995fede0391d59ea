"""Loading zoo organisms, local model folders and hub ids (see :mod:`vlmrobust.models`)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .prompts import ANSWER_FORMATS

__all__ = ["LoadedModel", "ModelLoadError", "zoo_dir", "zoo_names", "read_answer_format", "load",
           "default_method", "fingerprint", "image_only"]


class ModelLoadError(OSError):
    """A model name, path or hub id could not be loaded (with the reason)."""




def zoo_dir() -> Path:
    """The folder of the model organisms shipped with the package (``vlmrobust/zoo``)."""
    return Path(__file__).resolve().parent.parent / "zoo"


def zoo_names(role: str | None = None) -> list[str]:
    """Names of the organisms in the zoo (folders holding a ``config.json``).

    ``role`` keeps those whose ``vlmrobust.json`` declares that role (``"evaluated"``,
    ``"selector"``, ...); a folder without a declared role counts as ``"evaluated"``.
    """
    root = zoo_dir()
    if not root.is_dir():
        return []
    names = sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())
    if role is None:
        return names
    return [n for n in names if _zoo_role(root / n) == role]


def _zoo_role(folder: Path) -> str:
    meta = folder / "vlmrobust.json"
    return str(json.loads(meta.read_text()).get("role", "evaluated")) if meta.is_file() else "evaluated"


_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)


def read_answer_format(folder: str | os.PathLike) -> str | None:
    """A model folder's declared answer format, or ``None`` when it declares none.

    Read from ``vlmrobust.json`` (``{"answer_format": "letters"}``) or else from
    the ``answer_format:`` key of the YAML front matter of ``README.md`` (the
    model card). Raises ``ValueError`` for a declared value outside
    ``("letters", "text")``.
    """
    folder = Path(folder)
    value = None
    meta = folder / "vlmrobust.json"
    if meta.is_file():
        value = json.loads(meta.read_text()).get("answer_format")
    elif (folder / "README.md").is_file():
        m = _FRONT_MATTER.match((folder / "README.md").read_text())
        if m:
            import yaml

            front = yaml.safe_load(m.group(1)) or {}
            if isinstance(front, dict):
                value = front.get("answer_format") or (front.get("vlmrobust") or {}).get("answer_format")
    if value is not None and value not in ANSWER_FORMATS:
        raise ValueError(f"answer_format in {folder} must be one of {ANSWER_FORMATS}, got {value!r}")
    return value


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
        }


def default_method(answer_format: str) -> str:
    """The default scoring method for an answer format: letter logits or option log-likelihood."""
    if answer_format == "letters":
        return "letter"
    if answer_format == "text":
        return "loglik"
    raise ValueError(f"answer_format must be one of {ANSWER_FORMATS}, got {answer_format!r}")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


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
    folder's ``vlmrobust.json`` / model card (:func:`read_answer_format`), the
    ``answer_format`` argument, or defaults to ``"letters"`` for hub models.
    """
    from transformers import AutoModelForImageTextToText, AutoProcessor

    if not isinstance(name_or_path, (str, os.PathLike)) or not str(name_or_path).strip():
        raise TypeError(f"name_or_path must be a zoo name, a folder or a hub id, got {name_or_path!r}")
    if answer_format is not None and answer_format not in ANSWER_FORMATS:
        raise ValueError(f"answer_format must be one of {ANSWER_FORMATS} or None, got {answer_format!r}")
    raw = str(name_or_path)
    kwargs: dict[str, Any] = {"trust_remote_code": bool(trust_remote_code)}
    if raw in zoo_names():
        where, source, model_id = zoo_dir() / raw, "zoo", f"zoo/{raw}"
    elif Path(raw).expanduser().is_dir():
        where, source = Path(raw).expanduser().resolve(), "path"
        model_id = where.name
    elif Path(raw).expanduser().exists() or raw.startswith((".", "/", "~")):
        raise ModelLoadError(f"name_or_path {raw!r} is not a model folder (zoo names: {zoo_names()})")
    else:
        where, source, model_id = raw, "hub", raw
        if revision is not None:
            kwargs["revision"] = revision
        if _offline():
            kwargs["local_files_only"] = True
    torch_dtype = _resolve_dtype(dtype)
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
        if source == "hub" and _offline():
            raise ModelLoadError(
                f"model {raw!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
                f"download it first (huggingface-cli download {raw}) or unset HF_HUB_OFFLINE. ({exc})"
            ) from exc
        raise ModelLoadError(f"could not load model {raw!r} from {source}: {exc}") from exc
    model.eval()
    model.to(device)
    declared = read_answer_format(where) if source != "hub" else None
    fmt = answer_format or declared or "letters"
    if source != "hub" and revision is None:
        revision = _folder_revision(Path(where))
    tokenizer = getattr(processor, "tokenizer", processor)
    return LoadedModel(model=model, processor=processor, tokenizer=tokenizer, answer_format=fmt,
                       model_id=model_id, revision=revision, name=Path(raw).name if source != "hub" else raw,
                       source=source)


def image_only(processor_cls: type) -> type:
    """``processor_cls`` without its video processor, for machines without torchvision.

    Qwen2-VL and LLaVA-OneVision processors carry a video processor that needs
    torchvision; images do not. The subclass keeps the class's own image
    handling (image-token expansion included) and its name.
    """

    class ImageOnly(processor_cls):  # type: ignore[misc, valid-type]
        @classmethod
        def get_attributes(cls) -> list[str]:
            return [a for a in super().get_attributes() if "video" not in a]

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


def _folder_revision(folder: Path) -> str:
    """A content hash of a local model folder's weights and configs (its 'revision')."""
    import hashlib

    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        if p.is_file() and p.suffix in {".json", ".safetensors", ".jinja", ".txt", ".model"}:
            st = p.stat()
            h.update(f"{p.name}:{st.st_size}".encode())
            if st.st_size < 50_000_000:
                h.update(p.read_bytes())
    return "sha256:" + h.hexdigest()[:16]


def fingerprint(name_or_path: str | os.PathLike, revision: str | None = None) -> dict:
    """What identifies a model's weights and processor without loading it (for sweep shard keys).

    Zoo names and local folders: a content hash of the folder's weights, configs,
    processor settings and chat template. Hub ids: the id and the requested
    revision (pin one for reproducible caches).
    """
    raw = str(name_or_path)
    if raw in zoo_names():
        return {"source": "zoo", "id": f"zoo/{raw}", "revision": revision or _folder_revision(zoo_dir() / raw)}
    folder = Path(raw).expanduser()
    if folder.is_dir():
        return {"source": "path", "id": folder.resolve().name, "revision": revision or _folder_revision(folder)}
    return {"source": "hub", "id": raw, "revision": revision}
