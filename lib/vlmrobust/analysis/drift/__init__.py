"""Same answer, different representations (seed 002): the analysis of notebook 05.

* :mod:`.instability` — flip pairs, instance flip rate and image vulnerability (Eq. 3, Table 1), transitions;
* :mod:`.representation` — hidden-state drift against control drift, Cohen's d (§3.3, §4.3–4.4);
* :mod:`.dirichlet` — Dirichlet energy of the vision-token grid and its change (§3.3, App. E);
* :mod:`.prior` — drift to the prior on yes/no questions (POPE, §7);
* :mod:`.frequency` — signed margins, flip curves and thresholds of the frequency experiments (§6, App. F);
* :mod:`.protocol` — the paper's protocol: shift reading, disjoint subsets, set-apart instances, POPE prompt;
* :mod:`.observations` — findings (i)–(v) and the patterns of §4 checked on a run, each with an interval
  (:mod:`.findings` holds the item bootstrap and the probe-based rows);
* :mod:`.figures` — the notebook's figures of labels, drift, Dirichlet energy, the prior and scale (Figs. 1-3, 5,
  10-14); :mod:`.frequency_figures` — those of the frequency experiments (Figs. 15-20).
"""
