"""One switch silences every progress bar."""

from vlmrobust import progress


def test_progress_switch(monkeypatch):
    monkeypatch.delenv("VLMROBUST_PROGRESS", raising=False)
    assert progress.enabled() and not progress.enabled(False)
    monkeypatch.setenv("VLMROBUST_PROGRESS", "0")
    assert not progress.enabled() and progress.enabled(True)
    assert progress.bar(range(3)).disable and not progress.bar(range(3), progress=True).disable
    assert list(progress.bar(range(3))) == [0, 1, 2]


def test_line_mode_writes_one_line_per_loop(monkeypatch, capsys):
    monkeypatch.setenv("VLMROBUST_PROGRESS", "line")
    assert progress.mode() == "line"
    assert list(progress.bar(range(5), desc="loop")) == list(range(5))
    b = progress.bar(total=3, desc="manual")
    b.update(2)
    b.set_postfix_str("halfway")  # a redraw in bar mode; nothing here
    b.update(1)
    b.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "\r" not in err
    assert err.startswith("loop: 100%") and "manual: 100%" in err and "3/3" in err
    monkeypatch.setenv("VLMROBUST_PROGRESS", "off")
    assert progress.mode() == "off" and progress.bar(range(2)).disable
