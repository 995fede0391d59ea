"""The paper path, run offline: twins of the paper variants' models, their data in the real formats, and a runner.

``make paper-dry`` executes every notebook's ``params/<id>/paper.yaml`` end to end
with each hub id replaced by a local random-weight twin of the same architecture
and each data path by a small seeded file in the same format, as mapped in
``params/paper_dry.yaml``. The variants themselves are not edited; the runner
writes merged parameter files under ``build/paper-dry/``.

* :mod:`vlmrobust.dry.twins` — twins of VLM architectures, image encoders and a depth model;
* :mod:`vlmrobust.dry.fabricate` — VLMEvalKit TSVs, a COCO instances file with images, SEEDBench and POPE files;
* :mod:`vlmrobust.dry.run` — the mapping, the merged variants and their execution;
* :mod:`vlmrobust.dry.gpu` — on a CUDA machine: the twins timed there, notebook 05's paper variant with a
  full-size Qwen3-VL twin (``make gpu-check``).
"""
