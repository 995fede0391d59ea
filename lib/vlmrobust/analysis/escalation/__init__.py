"""Robustness under corruption escalation (seed 001, BRUCE): the analysis of notebook 07.

* :mod:`.cells` — the per-cell sums behind every index (one pass over the predictions table);
* :mod:`.rci` — RCI, T-RCI, the worst direction and the Table I analogue (§II-D–F);
* :mod:`.ablation` — the weighting ablation and its rank correlations (§II-F);
* :mod:`.fragility` — fragility curves, regimes and latent instability (§IV-C, §V, §VI);
* :mod:`.taxonomy` — the failure taxonomy (§II-H, §VII);
* :mod:`.observations` — the paper's observations checked on a run;
* :mod:`.figures` — the notebook's figures (Figs. 3–8, the fill figures and the heatmaps), from its small tables.
"""
