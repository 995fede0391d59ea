"""One switch silences every progress bar."""

from vlmrobust import progress


def test_progress_switch(monkeypatch):
    monkeypatch.delenv("VLMROBUST_PROGRESS", raising=False)
    assert progress.enabled() and not progress.enabled(False)
    monkeypatch.setenv("VLMROBUST_PROGRESS", "0")
    assert not progress.enabled() and progress.enabled(True)
    assert progress.bar(range(3)).disable and not progress.bar(range(3), progress=True).disable
    assert list(progress.bar(range(3))) == [0, 1, 2]
