"""Benchmark suites, SRBench metrics and the ``cadsr bench`` runner.

* :mod:`.suites` — Nguyen, Constant and Feynman problems, and PMLB/SRBench files
  (:func:`load_dataset`), each sampled into a :class:`Dataset` with a seed and
  SRBench's target noise;
* :mod:`.metrics` — test R², accuracy and symbolic solutions, simplified
  complexity, with SymPy's simplification bounded in any thread or process;
* :mod:`.methods` — CADSR, gplearn and Operon under one time budget;
* :mod:`.runner` — parallel, resumable runs (joblib, or Dask) behind ``cadsr bench``;
* :mod:`.report` — summary tables and the complexity-vs-R² plot.
"""

from .suites import (
    SUITES,
    Dataset,
    Problem,
    TableProblem,
    get_problem,
    get_suite,
    load_dataset,
    read_table,
)

__all__ = [
    "SUITES",
    "Dataset",
    "Problem",
    "TableProblem",
    "get_problem",
    "get_suite",
    "load_dataset",
    "read_table",
]
