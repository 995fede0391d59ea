"""Visibility blind spots (seed 003): the analysis of notebook 06.

* :mod:`.readouts` — the per-question signals, calibration, transmittance and ImageNet-C fog in metres;
* :mod:`.blind_spot` — curves, half-way crossings V_acc / V_aware and the blind-spot width W, bootstrapped;
* :mod:`.paper` — the paper's own Table IX-X rows and Table V, and the abstain mid-level that reproduces it;
* :mod:`.verdicts` — the condition means behind the rows (how a row decides, an interval against a region from
  the paper, is :func:`vlmrobust.stats.observations.verdict`);
* :mod:`.claims`, :mod:`.controls` — the paper's claims and controls, and the testbed's control organisms;
* :mod:`.observations` — those checks assembled into the notebook's observations table;
* :mod:`.tables` — Tables IV–X laid out as printed (presentation of numbers computed above);
* :mod:`.figures` — Figs. 2–8 and accuracy against the object's transmittance, drawn from those tables.
"""
