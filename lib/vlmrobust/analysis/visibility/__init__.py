"""Visibility blind spots (seed 003): the analysis of notebook 06.

* :mod:`.readouts` — the per-question signals, calibration, transmittance and ImageNet-C fog in metres;
* :mod:`.blind_spot` — curves, half-way crossings V_acc / V_aware and the blind-spot width W, bootstrapped;
* :mod:`.observations` — the paper's claims checked on a run;
* :mod:`.tables` — Tables IV and VII–X laid out as printed (presentation of numbers computed above);
* :mod:`.figures` — Figs. 2–8 and accuracy against the object's transmittance, drawn from those tables.
"""
