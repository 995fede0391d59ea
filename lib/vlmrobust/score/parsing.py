"""Reading generated answers: the chosen option (by letter or text) and a verbalized confidence."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..schema import LETTERS

__all__ = ["parse_answer", "parse_confidence"]

_LETTER_RE = re.compile(r"^\(?([A-Z])\)?(?=$|[\s.:,)\]])")
_CONF_RE = re.compile(r"confidence\s*[:=]?\s*(\d+(?:\.\d+)?|\.\d+)\s*(%?)", re.I)


def parse_answer(text: str, options: Sequence[str], answer_format: str = "letters") -> int | None:
    """Map a generated answer to an option index by its letter or its option text; ``None`` if neither.

    The first non-empty line is used, with a leading ``Answer:`` removed. A
    letter must be one of the K letters; option text matches case-insensitively
    and without a closing ``.`` or ``!`` on either side (so an option that ends
    with a full stop, like seed 003's abstain wording, matches itself), exactly
    or as the line's start followed by a non-alphanumeric character (longest
    option first). ``answer_format="letters"`` tries the letter first, ``"text"``
    the option text first.
    """
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    line = re.sub(r"^(answer|the answer is)\s*[:\-]?\s*", "", line, flags=re.I).strip()

    def by_letter() -> int | None:
        m = _LETTER_RE.match(line)
        if m and LETTERS.index(m.group(1)) < len(options):
            return LETTERS.index(m.group(1))
        return None

    def by_text() -> int | None:
        def norm(t: str) -> str:  # case and a closing full stop or exclamation mark do not count
            return t.lower().strip().rstrip(".!")

        low = norm(line)
        for i, opt in enumerate(options):
            if low == norm(opt):
                return i
        for i in sorted(range(len(options)), key=lambda j: -len(options[j])):
            o = norm(options[i])
            if low.startswith(o) and (len(low) == len(o) or not low[len(o)].isalnum()):
                return i
        return None

    order = (by_letter, by_text) if answer_format == "letters" else (by_text, by_letter)
    for f in order:
        hit = f()
        if hit is not None:
            return hit
    return None


def parse_confidence(text: str) -> float:
    """Verbalized confidence ``Confidence: N`` (seed 003, Table II) as a probability in [0, 1]; NaN if absent.

    Seed 003 asks for "a number from 0 to 100", so ``N`` is read as a
    percentage, with one exception for answers that give a probability
    instead. The rule, applied to the first ``confidence`` followed by a number
    (``:`` or ``=`` optional, case-insensitive):

    * a number written **with a decimal point and a value in [0, 1]**
      (``0.9``, ``.9``, ``1.0``, ``0.0``) is a probability: 0.9 is 0.9;
    * every other number is a percentage: integers (``Confidence: 85`` is
      0.85, ``Confidence: 1`` is 0.01, ``Confidence: 0`` is 0), decimals above 1
      (``85.5`` is 0.855), and any number followed by ``%`` (``0.9%`` is
      0.009);
    * the result is clipped to [0, 1] (``120%`` is 1).
    """
    m = _CONF_RE.search(str(text))
    if not m:
        return float("nan")
    number, percent = m.group(1), m.group(2)
    value = float(number)
    if not ("." in number and value <= 1.0 and not percent):
        value /= 100.0
    return float(min(max(value, 0.0), 1.0))
