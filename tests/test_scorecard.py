"""The scorecard gathers the notebooks' claims tables, picks the deciding variant, says why, flags blind passes."""

import math

import pandas as pd
import pytest

from vlmrobust import scorecard as sc
from vlmrobust.stats.claims import Claim, claims_frame, no_subject

NAN = math.nan


def _claim(name, verdict, *, section="paper", lo=0.1, hi=0.3, subject="tiny-base"):
    return Claim(name, "paper words", subject, "null", "test", 0.2, lo, hi, f"measured {name}", verdict,
                 decide="about 900 items (now 300)" if verdict == "undecided" else "", section=section)


def _write(root, nb, rows, variant=None):
    d = root / ("variants/" + variant if variant else "") / nb
    d.mkdir(parents=True, exist_ok=True)
    claims_frame(rows).to_csv(d / "claims.csv", index=False)


@pytest.fixture
def root(tmp_path):
    nb = "06_visibility_blind_spots"
    _write(tmp_path, nb, [_claim("a", "undecided"), _claim("b", "reproduced"),
                          no_subject("c", "p", "n", "t", "no confident organism"),
                          _claim("d", "by construction", section="construction")])
    _write(tmp_path, nb, [_claim("a", "not reproduced"), _claim("b", "reproduced")], variant="controls")
    _write(tmp_path, nb, [_claim("a", "reproduced", subject="images only"),
                          _claim("b", "reproduced", subject="blind:tiny-base")], variant="blind")
    _write(tmp_path, "04_ras_attribution", [_claim("x", "undecided")])
    return tmp_path


def test_scorecard_rows(root):
    card = sc.scorecard(root).set_index("claim")
    assert list(card.columns) == [c for c in sc.COLUMNS if c != "claim"]
    a, b, c, d, x = (card.loc[k] for k in "abcdx")
    assert (a["default"], a["variant"], a["variant_verdict"], a["final"]) == ("undecided", "controls",
                                                                              "not reproduced", "not reproduced")
    assert a["why"] == "a finding about these organisms"
    assert b["why"] == "" and b["blind"] == "reproduced"
    assert c["final"] == "no subject" and c["why"] == "no organism with the property"
    assert c["measured"] == "no confident organism" and c["variant_verdict"] == "not run"
    assert d["why"] == "a limit of the synthetic world" and d["blind"] == "not run"
    assert x["variant_verdict"] == "not run" and x["why"] == "sample size" and "900 items" in x["decide"]
    assert list(sc.blind_passes(sc.scorecard(root))["claim"]) == ["b"]


def test_summary_counts_paper_claims_only(root):
    s = sc.summary(sc.scorecard(root))
    assert s.to_numpy().sum() == 4  # a, b, c (06) and x (04); d is a construction check
    assert s.loc["visibility blind spots", "no subject"] == 1


def test_main_writes_csv_and_figure(root, monkeypatch, capsys):
    monkeypatch.setenv("VLMROBUST_FIG_ROOT", str(root / "figs"))
    assert sc.main(["--root", str(root)]) == 0
    assert (root / "scorecard.csv").is_file() and (root / "figs/scorecard/scorecard.png").is_file()
    assert "blind twins" in capsys.readouterr().out


def test_bad_tables_are_refused(tmp_path):
    d = tmp_path / "04_ras_attribution"
    d.mkdir()
    pd.DataFrame({"claim": ["a"], "reproduced": [True]}).to_csv(d / "claims.csv", index=False)
    with pytest.raises(ValueError, match="not a claims table"):
        sc.scorecard(tmp_path)
    pd.DataFrame({"claim": ["a"], "section": ["paper"], "verdict": ["True"]}).to_csv(d / "claims.csv", index=False)
    with pytest.raises(ValueError, match="vocabulary"):
        sc.scorecard(tmp_path)
    assert sc.main(["--root", str(tmp_path / "none")]) == 0  # nothing to gather yet: a note, not a failure


def test_missing_runs(root, capsys):
    missing = sc.missing_runs(root)
    assert ("06_visibility_blind_spots", "controls") not in missing and ("06_visibility_blind_spots", "blind") \
        not in missing
    assert ("04_ras_attribution", "benchc") not in missing and ("08_reliability_card", "blind") in missing
    assert ("04_ras_attribution", "benchc") in sc.missing_runs(root, long=True)
    sc.main(["--root", str(root), "--missing"])
    assert "04_ras_attribution:blind" in capsys.readouterr().out.split()


def test_readme_block_is_rewritten_and_agrees_with_the_committed_scorecard(root):
    card = sc.scorecard(root)
    start, end = sc.README_MARK
    text = f"intro\n{start}\nold\n{end}\nrest\n"
    new = sc.with_readme_table(text, card)
    assert "old" not in new and new.startswith("intro\n") and new.endswith(f"{end}\nrest\n")
    assert "| **all paper claims** |" in new and sc.with_readme_table(new, card) == new
    with pytest.raises(ValueError, match="no scorecard block"):
        sc.with_readme_table("no block", card)


def test_the_readme_shows_the_committed_scorecard():
    committed = sc.paths.REPO_ROOT / "figures" / "scorecard" / "scorecard.csv"
    readme = (sc.paths.REPO_ROOT / "README.md").read_text()
    if not committed.is_file():
        pytest.skip("no committed scorecard yet (make figures writes it)")
    card = pd.read_csv(committed, keep_default_na=False)
    assert sc.with_readme_table(readme, card) == readme, "rerun: python -m vlmrobust.scorecard --readme " + str(
        committed.relative_to(sc.paths.REPO_ROOT))


def test_the_total_counts_no_card_row():
    card = pd.DataFrame({"notebook": ["06_visibility_blind_spots", "08_reliability_card", "08_reliability_card"],
                         "section": ["paper"] * 3, "final": ["reproduced", "reproduced", "undecided"]})
    text = sc.markdown_summary(card)
    assert "| the reliability card (no paper) | 1 | 1 |" in text
    assert text.splitlines()[-1] == "| **all paper claims** | **1** | **0** |"
