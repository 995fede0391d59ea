"""Validation of notebook parameters.

Every notebook's resolve cell calls :func:`check` (or :func:`check_list`) on each
parameter, so a bad value stops the notebook at once with a message that names
the parameter, what it got and what is allowed — before any work is done.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["ParameterError", "check", "check_list", "check_range"]


class ParameterError(ValueError):
    """A notebook parameter has a wrong type or value."""


def _type_name(type_: type | tuple[type, ...]) -> str:
    if isinstance(type_, tuple):
        return " or ".join(t.__name__ for t in type_)
    return type_.__name__


def _is_instance(value: Any, type_: type | tuple[type, ...]) -> bool:
    types = type_ if isinstance(type_, tuple) else (type_,)
    for t in types:
        if t is bool:
            if isinstance(value, bool):
                return True
        elif t is int:
            if isinstance(value, numbers.Integral) and not isinstance(value, bool):
                return True
        elif t is float:
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                return True
        elif isinstance(value, t):
            return True
    return False


def check(
    name: str,
    value: Any,
    type_: type | tuple[type, ...],
    *,
    choices: Iterable[Any] | None = None,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
) -> Any:
    """Check one parameter and return it (ints given for floats become floats).

    ``choices`` lists the allowed values; ``lo``/``hi`` bound numbers (closed
    unless ``lo_open``/``hi_open``). NaN is never allowed for numbers.
    """
    if not _is_instance(value, type_):
        raise ParameterError(
            f"parameter {name!r} must be {_type_name(type_)}, got {value!r} ({type(value).__name__})"
        )
    if choices is not None:
        allowed = list(choices)
        if value not in allowed:
            raise ParameterError(f"parameter {name!r} = {value!r} is not allowed; choose one of {allowed}")
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if math.isnan(value):
            raise ParameterError(f"parameter {name!r} must be a number, got NaN")
        check_range(name, value, lo, hi, lo_open=lo_open, hi_open=hi_open)
        if type_ is float:
            value = float(value)
    return value


def check_range(
    name: str, value: float, lo: float | None, hi: float | None, *, lo_open: bool = False, hi_open: bool = False
) -> None:
    """Raise :class:`ParameterError` unless ``lo <= value <= hi`` (or open bounds)."""
    bad_lo = lo is not None and (value <= lo if lo_open else value < lo)
    bad_hi = hi is not None and (value >= hi if hi_open else value > hi)
    if bad_lo or bad_hi:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        lo_s = "-inf" if lo is None else repr(lo)
        hi_s = "inf" if hi is None else repr(hi)
        raise ParameterError(f"parameter {name!r} = {value!r} is out of range; allowed {left}{lo_s}, {hi_s}{right}")


def check_list(
    name: str,
    value: Any,
    item_type: type | tuple[type, ...],
    *,
    choices: Iterable[Any] | None = None,
    lo: float | None = None,
    hi: float | None = None,
    min_len: int = 1,
    unique: bool = True,
) -> list:
    """Check a list parameter: its type, length, element types and values."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ParameterError(f"parameter {name!r} must be a list, got {value!r} ({type(value).__name__})")
    value = list(value)
    if len(value) < min_len:
        raise ParameterError(f"parameter {name!r} needs at least {min_len} element(s), got {len(value)}")
    allowed = None if choices is None else list(choices)
    out = []
    for i, v in enumerate(value):
        out.append(check(f"{name}[{i}]", v, item_type, choices=allowed, lo=lo, hi=hi))
    if unique and len(set(map(repr, out))) != len(out):
        raise ParameterError(f"parameter {name!r} has repeated elements: {value!r}")
    return out
