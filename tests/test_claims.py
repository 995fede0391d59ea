"""The claims table's type, its verdict vocabulary, and the rule helpers (vlmrobust.stats.claims)."""

import math

import numpy as np
import pytest

from vlmrobust.stats.claims import (
    CLAIM_COLUMNS,
    NO_SUBJECT,
    NOT_REPRODUCED,
    REPRODUCED,
    UNDECIDED,
    Claim,
    claims_frame,
    combine,
    decide_text,
    interval_text,
    no_subject,
    size_to_decide,
    verdict,
)

NAN = float("nan")


def _row(**kw):
    base = dict(claim="c", paper="p", subject="tiny-base", null="RAS centred at 0", test="interval above 0",
                value=0.3, lo=0.1, hi=0.5, measured="0.30 [0.10, 0.50]", verdict=REPRODUCED)
    return Claim(**{**base, **kw})


def test_verdict_three_ways():
    assert verdict(0.2, 0.4, 0.0, 1.0) == REPRODUCED
    assert verdict(0.0, 1.0, 0.0, 1.0) == REPRODUCED  # the edges belong to the region
    assert verdict(-0.3, -0.1, 0.0) == NOT_REPRODUCED and verdict(1.1, 1.2, high=1.0) == NOT_REPRODUCED
    assert verdict(-0.1, 0.3, 0.0) == UNDECIDED and verdict(0.9, 1.1, 0.0, 1.0) == UNDECIDED
    assert verdict(NAN, 0.3) == UNDECIDED


def test_combine():
    assert combine([REPRODUCED, REPRODUCED]) == REPRODUCED
    assert combine([REPRODUCED, UNDECIDED]) == UNDECIDED
    assert combine([UNDECIDED, NOT_REPRODUCED]) == NOT_REPRODUCED
    assert combine([]) == NO_SUBJECT and combine([NO_SUBJECT]) == NO_SUBJECT
    assert combine([REPRODUCED, NO_SUBJECT]) == REPRODUCED
    with pytest.raises(ValueError, match="not a verdict"):
        combine([True])


def test_a_reproduced_row_needs_interval_null_and_subject():
    _row()
    with pytest.raises(ValueError, match="finite interval"):
        _row(lo=NAN)
    with pytest.raises(ValueError, match="null"):
        _row(null=" ")
    with pytest.raises(ValueError, match="subject"):
        _row(subject="")
    with pytest.raises(ValueError, match="verdict"):
        _row(verdict="True")
    with pytest.raises(ValueError, match="decide"):
        _row(verdict=UNDECIDED)
    assert _row(verdict=UNDECIDED, decide="about 400 items").decide
    with pytest.raises(ValueError, match="section"):
        _row(section="controls")


def test_frame_columns_and_no_subject():
    df = claims_frame([_row(), no_subject("c2", "p", "n", "t", "no confident organism in the run")])
    assert tuple(df.columns) == CLAIM_COLUMNS
    assert df["verdict"].tolist() == [REPRODUCED, NO_SUBJECT]
    assert df["value"].dtype == float and math.isnan(df["lo"].iloc[1])


def test_size_to_decide_scales_with_the_square_of_the_width():
    # estimate 0.1 with half-width 0.2 against edge 0: width must shrink by 2, i.e. n × 4
    assert size_to_decide(100, 0.1, -0.1, 0.3, 0.0) == 400
    assert size_to_decide(100, 0.5, 0.3, 0.7, 0.0) == 100  # already decided
    assert math.isinf(size_to_decide(100, 0.0, -0.1, 0.1, 0.0))
    assert "400 scenes (now 100)" in decide_text(100, 0.1, -0.1, 0.3, 0.0, unit="scenes")
    assert "no practical size decides" in decide_text(100, 0.0, -0.1, 0.1, 0.0)
    assert "no practical size decides" in decide_text(100, 1e-6, -0.1, 0.1, 0.0)  # 10^10 items is no answer


def test_interval_text():
    assert interval_text(0.4242, 0.3, 0.55) == "0.42 [0.30, 0.55]"
    assert interval_text(0.4242, NAN, 0.5, digits=3) == "0.424"
    assert interval_text(NAN, 0.0, 1.0) == "n/a"
    assert np.isfinite(size_to_decide(10, 1.0, 0.0, 2.0, 0.5))
