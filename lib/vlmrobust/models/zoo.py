"""The zoo of model organisms: the one reader and writer of its folder layout.

A zoo folder ``vlmrobust/zoo/<name>/`` is a standard Hugging Face model folder
(``config.json``, ``model.safetensors``, tokenizer files, ``processor_config.json``,
``chat_template.jinja``) plus three files of the project's own:

* ``vlmrobust.json`` — metadata: ``answer_format`` (:data:`~vlmrobust.schema.ANSWER_FORMATS`),
  ``role`` (:data:`~vlmrobust.schema.ROLES`), the training ``config`` name, ``seed``,
  ``config_digest``, ``train_seconds`` and role-specific keys (``ladder_rung``, ``behaviour``, ...);
* ``README.md`` — the model card, with YAML front matter (:func:`card`);
* ``train_log.csv`` — the training curves (:func:`train_log`).

Training writes through :func:`write_folder` and :func:`write_card`; loading, the
notebooks, the tests and the benchmarks read through :func:`names`,
:func:`meta`, :func:`card`, :func:`answer_format` and :func:`train_log`.
:func:`folder_revision` is the content hash that identifies a folder's weights
in sweep shard keys; it is computed once per process for unchanged files.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..schema import ANSWER_FORMATS, ROLES

__all__ = ["root", "names", "folder", "meta", "role", "card", "front_matter", "answer_format", "train_log",
           "find_digest", "folder_revision", "write_folder", "write_card", "size_bytes",
           "META_FILE", "CARD_FILE", "LOG_FILE"]

META_FILE, CARD_FILE, LOG_FILE = "vlmrobust.json", "README.md", "train_log.csv"
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.S)
_REVISIONS: dict[tuple, str] = {}


def root() -> Path:
    """The folder of the organisms shipped with the package (``vlmrobust/zoo``)."""
    return Path(__file__).resolve().parent.parent / "zoo"


def _is_model_folder(path: Path) -> bool:
    return (path / "config.json").is_file()


def names(role: str | Iterable[str] | None = None) -> list[str]:
    """Names of the zoo's organisms, sorted; ``role`` keeps those of that role (or roles).

    A folder whose ``vlmrobust.json`` declares no role counts as ``"evaluated"``.
    An unknown role raises ``ValueError`` listing :data:`~vlmrobust.schema.ROLES`.
    """
    base = root()
    found = sorted(p.name for p in base.iterdir() if _is_model_folder(p)) if base.is_dir() else []
    if role is None:
        return found
    wanted = {role} if isinstance(role, str) else set(role)
    bad = sorted(wanted - set(ROLES))
    if bad:
        raise ValueError(f"unknown zoo role(s) {bad}; roles are {list(ROLES)}")
    return [n for n in found if _role_of(base / n) in wanted]


def folder(name: str) -> Path:
    """The folder of zoo organism ``name`` (``KeyError`` naming the zoo's organisms when absent)."""
    path = root() / str(name)
    if not name or "/" in str(name) or not _is_model_folder(path):
        raise KeyError(f"no organism {name!r} in the zoo; organisms are {names()}")
    return path


def _as_folder(name_or_folder: str | os.PathLike) -> Path:
    path = Path(name_or_folder)
    return path if path.is_dir() else folder(str(name_or_folder))


def meta(name_or_folder: str | os.PathLike) -> dict:
    """The ``vlmrobust.json`` of a zoo organism or model folder (``{}`` when it has none)."""
    path = _as_folder(name_or_folder) / META_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(data).__name__}")
    return data


def _role_of(path: Path) -> str:
    return str(meta(path).get("role", "evaluated"))


def role(name_or_folder: str | os.PathLike) -> str:
    """The organism's declared role (``"evaluated"`` when none is declared)."""
    return _role_of(_as_folder(name_or_folder))


def front_matter(text: str) -> tuple[dict, str]:
    """Split a model card into its YAML front matter (``{}`` when absent) and its body."""
    import yaml

    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text
    front = yaml.safe_load(m.group(1)) or {}
    if not isinstance(front, dict):
        raise ValueError("the model card's front matter must be a YAML mapping")
    return front, text[m.end():]


def card(name_or_folder: str | os.PathLike) -> tuple[dict, str]:
    """The model card (``README.md``) of an organism or folder: ``(front matter, body)``."""
    path = _as_folder(name_or_folder) / CARD_FILE
    return front_matter(path.read_text()) if path.is_file() else ({}, "")


def answer_format(name_or_folder: str | os.PathLike) -> str | None:
    """A folder's declared answer format, or ``None`` when it declares none.

    Read from ``vlmrobust.json`` (``{"answer_format": "letters"}``) or else from
    the ``answer_format:`` key (or ``vlmrobust: {answer_format: ...}``) of the
    model card's front matter. Raises ``ValueError`` for a declared value
    outside :data:`~vlmrobust.schema.ANSWER_FORMATS`.
    """
    path = _as_folder(name_or_folder)
    if (path / META_FILE).is_file():
        value = meta(path).get("answer_format")
    else:
        front, _ = card(path)
        value = front.get("answer_format") or (front.get("vlmrobust") or {}).get("answer_format")
    if value is not None and value not in ANSWER_FORMATS:
        raise ValueError(f"answer_format in {path} must be one of {ANSWER_FORMATS}, got {value!r}")
    return value


def train_log(name_or_folder: str | os.PathLike) -> Any:
    """The organism's training log (a DataFrame; empty when the folder has none)."""
    import pandas as pd

    path = _as_folder(name_or_folder) / LOG_FILE
    return pd.read_csv(path) if path.is_file() else pd.DataFrame()


def find_digest(digest: str, prefer: str | None = None) -> Path | None:
    """The zoo folder whose weights were trained from the config with ``digest`` (or ``None``).

    The folder named ``prefer`` is looked at first, then every other one in name
    order; a folder counts only when it holds weights.
    """
    order = ([prefer] if prefer in names() else []) + [n for n in names() if n != prefer]
    for n in order:
        path = root() / n
        if (path / "model.safetensors").is_file() and meta(path).get("config_digest") == digest:
            return path
    return None


def size_bytes(name_or_folder: str | os.PathLike, pattern: str = "*") -> int:
    """Bytes of the folder's files matching ``pattern`` (``"*.safetensors"`` for the weights)."""
    return sum(p.stat().st_size for p in _as_folder(name_or_folder).glob(pattern) if p.is_file())


def folder_revision(path: str | os.PathLike) -> str:
    """A content hash of a model folder's weights and configs (its "revision" in shard keys).

    Hashes the bytes of every ``.json``, ``.safetensors``, ``.jinja``, ``.txt`` and
    ``.model`` file below 50 MB (name and size for larger ones). The result is
    remembered for the process as long as no file's size or modification time
    changes, so repeated sweeps over the same model do not re-read its weights.
    """
    path = Path(path).resolve()
    files = sorted(p for p in path.iterdir()
                   if p.is_file() and p.suffix in {".json", ".safetensors", ".jinja", ".txt", ".model"})
    stamp = (str(path), tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files))
    if stamp not in _REVISIONS:
        h = hashlib.sha256()
        for p, (_, size, _) in zip(files, stamp[1], strict=True):
            h.update(f"{p.name}:{size}".encode())
            if size < 50_000_000:
                h.update(p.read_bytes())
        _REVISIONS[stamp] = "sha256:" + h.hexdigest()[:16]
    return _REVISIONS[stamp]


def write_folder(out: str | os.PathLike, model: Any, processor: Any, meta_data: dict,
                 log_rows: list[dict] | None = None) -> Path:
    """Write a zoo folder: fp32 safetensors, processor, ``vlmrobust.json`` and the training log.

    ``meta_data`` must declare ``answer_format`` and ``role`` (checked against the schema).
    """
    import pandas as pd

    if meta_data.get("answer_format") not in ANSWER_FORMATS:
        raise ValueError(f"meta answer_format must be one of {ANSWER_FORMATS}, got {meta_data.get('answer_format')!r}")
    if meta_data.get("role") not in ROLES:
        raise ValueError(f"meta role must be one of {ROLES}, got {meta_data.get('role')!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    (out / META_FILE).write_text(json.dumps(meta_data, indent=2) + "\n")
    if log_rows:
        pd.DataFrame(log_rows).to_csv(out / LOG_FILE, index=False, float_format="%.5g")
    return out


def write_card(out: str | os.PathLike, front: dict, body: str) -> Path:
    """Write ``README.md``: ``front`` as YAML front matter, then the Markdown ``body``."""
    import yaml

    path = Path(out) / CARD_FILE
    path.write_text("---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n" + body.lstrip("\n"))
    return path
