"""Known errors, injected one at a time: each must make the named tests fail.

``.venv/bin/python tests/injected_errors.py`` writes each error into the library's source, runs the test file
that should catch it, prints which test failed (or NOT CAUGHT), and restores the file (also on an error). They
are the mistakes an independent check of the equations found the tests letting through before the tests
written from the papers (``test_faithful_*.py``) existed; ``make mutants`` is the systematic version.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = [
 ("Table II: ΔAcc sign flipped", "lib/vlmrobust/analysis/ras/tables.py",
  "acc0, acc1, acc1 - acc0, safe_div(scons, n)", "acc0, acc1, acc0 - acc1, safe_div(scons, n)",
  "tests/test_faithful_metrics.py"),
 ("Table II: relative robustness inverted", "lib/vlmrobust/analysis/ras/tables.py",
  "safe_div(acc1, acc0), safe_div(sr, n)", "safe_div(acc0, acc1), safe_div(sr, n)",
  "tests/test_faithful_metrics.py"),
 ("Table II: consistency inverted", "lib/vlmrobust/analysis/ras/tables.py",
  "acc1 - acc0, safe_div(scons, n),", "acc1 - acc0, 1 - safe_div(scons, n),",
  "tests/test_faithful_metrics.py"),
 ("Table II: clean accuracy from the corrupted side", "lib/vlmrobust/analysis/ras/tables.py",
  "    acc0 = safe_div(ncc, n)\n", "    acc0 = safe_div(sc, n)\n",
  "tests/test_faithful_metrics.py"),
 ("underwater normalised by another channel", "lib/vlmrobust/corrupt/physical.py",
  "return extinction(visibility, convention) * a / a.min()", "return extinction(visibility, convention) * a / a[1]",
  "tests/test_faithful_corrupt.py"),
 ("fog_gain ignoring the image maximum", "lib/vlmrobust/corrupt/weather.py",
  "    m = float(image.max()) / 255.0\n", "    m = 1.0\n",
  "tests/test_faithful_corrupt.py"),
 ("BRUCE blur σ doubled", "lib/vlmrobust/corrupt/escalation.py",
  "    sigma = BLUR_SIGMAS[level - 1]\n", "    sigma = 2 * BLUR_SIGMAS[level - 1]\n",
  "tests/test_faithful_corrupt.py"),
 ("BRUCE rotation clockwise", "lib/vlmrobust/corrupt/escalation.py",
  "    return rotate(x, ROTATION_DEG[level - 1])", "    return rotate(x, -ROTATION_DEG[level - 1])",
  "tests/test_faithful_corrupt.py"),
 ("BRUCE angles scaled by 1.5", "lib/vlmrobust/corrupt/escalation.py",
  "    return rotate(x, ROTATION_DEG[level - 1])", "    return rotate(x, 1.5 * ROTATION_DEG[level - 1])",
  "tests/test_faithful_corrupt.py"),
 ("seed-002 ±30° rotation sign flipped", "lib/vlmrobust/corrupt/natural.py",
  "    return rotate(x, ROTATIONS_DEG[level - 1])", "    return rotate(x, -ROTATIONS_DEG[level - 1])",
  "tests/test_faithful_corrupt.py"),
 ("log-likelihood: option tokenised without its leading space", "lib/vlmrobust/score/methods.py",
  '    lead = "" if prompt[-1:].isspace() else " "\n', '    lead = ""\n',
  "tests/test_faithful_score.py"),
 ("confidence request worded otherwise", "lib/vlmrobust/models/prompts.py",
  "as a number from 0 to 100, in the format 'Confidence: N'.",
  "as a number from 0 to 100, in the form 'Confidence: N'.",
  "tests/test_faithful_score.py"),
 ("\"Confidence: 0.9\" read as a percentage", "lib/vlmrobust/score/parsing.py",
  '    if not ("." in number and value <= 1.0 and not percent):\n', '    if True:\n',
  "tests/test_faithful_score.py"),
]


def main() -> int:
    missed = 0
    for name, f, old, new, tests in CASES:
        p = ROOT / f
        src = p.read_text()
        if src.count(old) != 1:
            raise SystemExit(f"{name}: the line to change is not in {f} exactly once; update this list")
        p.write_text(src.replace(old, new))
        try:
            r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "-n", "0",
                                tests], cwd=ROOT, capture_output=True, text=True)
        finally:
            p.write_text(src)
        failed = [ln.split(" ")[1] for ln in r.stdout.splitlines() if ln.startswith("FAILED ")]
        missed += not failed
        print(f"{name}: {'caught by ' + failed[0] if failed else 'NOT CAUGHT'}", flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
