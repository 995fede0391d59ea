"""Validation of notebook parameters.

A notebook's parameters cell holds plain literals (papermill overrides them); its
resolve cell checks them all in one call, ``P = <analysis>.Params.resolve(globals())``,
so a bad value stops the notebook at once with a message that names the parameter,
what it got and what is allowed — before any work is done. The body then reads
the checked values as ``P.<name>``.

* :func:`check` and :func:`check_list` check one value;
* :func:`one` and :func:`many` declare those checks as rules, whose options may
  depend on parameters checked before (``hi=lambda p: p["stable_min"]``);
* :class:`Params` is a notebook's checked parameters: a subclass declares its
  ``RULES`` (name → rule, in the parameters cell's order), and the sweep
  parameters that several notebooks share are declared once, in
  :func:`vlmrobust.sweep.sweep_rules`;
* :func:`use_variant` applies a parameter variant (``params/<notebook>/<variant>.yaml``) named by the
  notebook's ``variant`` parameter, and returns the values of the *unchanged run* (the notebook's defaults
  with the variant's file over them), which the exercise checks compare a run with.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

__all__ = ["ParameterError", "Params", "Rule", "check", "check_list", "check_range", "many", "one", "unchanged_run",
           "use_variant"]

#: A rule: ``rule(name, value, checked)`` returns the checked value or raises :class:`ParameterError`;
#: ``checked`` holds the parameters checked before it, by name.
Rule = Callable[[str, Any, Mapping[str, Any]], Any]


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


def _options(options: Mapping[str, Any], checked: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v(checked) if callable(v) else v) for k, v in options.items()}


def one(type_: type | tuple[type, ...], **options: Any) -> Rule:
    """A rule for one value of ``type_``: :func:`check` with ``options`` (each may be a function of ``checked``)."""
    return lambda name, value, checked: check(name, value, type_, **_options(options, checked))


def many(item_type: type | tuple[type, ...], **options: Any) -> Rule:
    """A rule for a list of ``item_type``: :func:`check_list` with ``options`` (each may be a function of
    ``checked``)."""
    return lambda name, value, checked: check_list(name, value, item_type, **_options(options, checked))


class Params:
    """A notebook's checked parameters, read as attributes (``P.levels``) and fixed once resolved.

    A subclass declares ``RULES``: parameter name → rule, in the parameters cell's order, each
    checked after those above it (so a rule may read them). :meth:`resolve` takes the notebook's
    namespace (``globals()``) and checks every declared parameter; the first bad one raises
    :class:`ParameterError` naming it.
    """

    RULES: ClassVar[Mapping[str, Rule]] = {}

    def __init__(self, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    @classmethod
    def resolve(cls, namespace: Mapping[str, Any]) -> Params:
        """Check every parameter of ``RULES`` in ``namespace`` (a notebook's ``globals()``), in order."""
        missing = [name for name in cls.RULES if name not in namespace]
        if missing:
            raise ParameterError(f"parameter(s) {missing} not defined: run the parameters cell first")
        checked: dict[str, Any] = {}
        for name, rule in cls.RULES.items():
            checked[name] = rule(name, namespace[name], checked)
        if "variant" in namespace and "variant" not in cls.RULES:  # every notebook's last parameter
            checked["variant"] = check("variant", namespace["variant"], str)
        return cls(checked)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no parameter {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"parameters are fixed once resolved; change {name!r} in the parameters cell")

    def as_dict(self) -> dict[str, Any]:
        """The checked values, by name, in the parameters cell's order."""
        return dict(self._values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"


def unchanged_run(nb_id: str, variant: str = "") -> dict[str, Any]:
    """The parameter values of notebook ``nb_id``'s unchanged run: its defaults, with ``variant``'s file over them.

    ``variant`` names a file of ``params/<nb_id>/`` without ``.yaml`` (``"lesson"``, ``"paper"``, ...); ``""``
    is the default run. A variant that does not exist, or whose file sets a parameter the notebook does not
    have, raises :class:`ParameterError` naming the variants there are.
    """
    from . import nbtools, paths

    values = nbtools.parameters(nb_id)
    if not variant:
        return values
    folder = paths.params_dir() / nb_id
    path = folder / f"{variant}.yaml"
    if not path.is_file():
        there = sorted(p.stem for p in folder.glob("*.yaml"))
        raise ParameterError(f"parameter 'variant' = {variant!r}: there is no {path.relative_to(paths.REPO_ROOT)}; "
                             f"the variants of {nb_id} are {there}")
    overrides = nbtools.read_params_file(path)
    unknown = sorted(set(overrides) - set(values))
    if unknown:
        raise ParameterError(f"{path.name} of {nb_id} sets unknown parameter(s) {unknown}")
    return {**values, **overrides}


def use_variant(nb_id: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Apply the variant named by ``namespace["variant"]`` and return the unchanged run's values.

    This is how a notebook runs a variant in JupyterLab in one step: set ``variant = "lesson"`` in the
    parameters cell and *Run All*. Every parameter the variant's file sets takes the file's value unless the
    notebook already holds another value than its default there (your own edits win), and the run's tables
    and figures go to ``results/variants/<variant>/``, as ``make run P=<variant>`` puts them, unless
    ``VLMROBUST_RESULTS_ROOT`` is set. When any parameter already holds the variant's value (papermill ran
    with ``-f <variant>.yaml``, as ``make run P=<variant>`` and ``make instructor`` do), the namespace is
    left as it is, so that a change back to a default on top of the variant (exercise 06.3) stays. In Lab a
    value equal to the notebook's default cannot be told from an unedited one: there the variant's value
    takes its place. With ``variant = ""`` nothing changes.
    """
    from . import nbtools, paths

    variant = check("variant", namespace.get("variant", ""), str)
    unchanged = unchanged_run(nb_id, variant)
    if variant:
        defaults = nbtools.parameters(nb_id)
        sets = {name for name in unchanged if unchanged[name] != defaults[name]}
        # A run whose parameters already hold the variant somewhere (papermill with -f <variant>.yaml, as make
        # and make instructor run it) keeps them all: only a namespace at the defaults takes the file.
        if not any(name in namespace and namespace[name] == unchanged[name] for name in sets):
            for name in sets:
                if name in namespace and namespace[name] == defaults[name]:
                    namespace[name] = unchanged[name]
        if not os.environ.get("VLMROBUST_RESULTS_ROOT") or os.environ["VLMROBUST_RESULTS_ROOT"] in _ROOTS_SET:
            root = str(paths.REPO_ROOT / "results" / "variants" / variant)
            os.environ["VLMROBUST_RESULTS_ROOT"] = root
            _ROOTS_SET.add(root)
    elif os.environ.get("VLMROBUST_RESULTS_ROOT") in _ROOTS_SET:  # back to the default run in the same kernel
        del os.environ["VLMROBUST_RESULTS_ROOT"]
    return unchanged


#: results roots :func:`use_variant` set itself (so that going back to ``variant = ""`` undoes them)
_ROOTS_SET: set[str] = set()
