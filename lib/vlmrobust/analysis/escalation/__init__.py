"""Robustness under corruption escalation (seed 001, BRUCE): the analysis of notebook 07.

* :mod:`.ladders` — the ladders' readings (contrast kept, crop area) and the items' mean fill, as a sweep runs them (§III);
* :mod:`.cells` — the per-cell sums behind every index (one pass over the predictions table);
* :mod:`.rci` — RCI, T-RCI, the worst direction and the Table I analogue (§II-D–F);
* :mod:`.ablation` — the weighting ablation and its rank correlations (§II-F);
* :mod:`.fragility` — fragility curves, regimes and latent instability (§IV-C, §V, §VI);
* :mod:`.taxonomy` — the failure taxonomy (§II-H, §VII);
* :mod:`.paper_table` — the paper's Table I as printed and the bound RCI_mu >= 0.3 (1 - A_CR) it obeys;
* :mod:`.replicates` — the run's tables on resampled questions and permuted groups (intervals and nulls);
* :mod:`.checks` and :mod:`.observations` — the paper's observations checked on a run;
* :mod:`.figures` — the notebook's figures (Figs. 3–8, the fill figures and the heatmaps), from its small tables.
"""
