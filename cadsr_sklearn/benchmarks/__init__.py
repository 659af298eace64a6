"""Benchmark suites, SRBench metrics and the ``cadsr bench`` runner.

* :mod:`.suites` — Nguyen, Constant and Feynman problems, and PMLB/SRBench files
  (:func:`load_dataset`), each sampled into a :class:`Dataset` with a seed and
  SRBench's target noise;
* :mod:`.metrics` — the judge: which formula of a model is judged
  (:func:`~.metrics.judged_formula`), test R², accuracy and symbolic solutions,
  simplified complexity, with SymPy's simplification bounded in any thread or
  process;
* :mod:`.peer_formulas` — gplearn's and Operon's models as SymPy formulas;
* :mod:`.methods` — CADSR, gplearn and Operon under one time budget;
* :mod:`.tasks` — what a run is made of: :class:`Task`, :func:`make_tasks`;
* :mod:`.execution` — running tasks in parallel, resumably (joblib, or Dask):
  :func:`run_tasks`;
* :mod:`.results` — the results CSV (:func:`read_results`, also of old files);
* :mod:`.rescore` — judging finished rows again without fitting;
* :mod:`.presets` — named studies: ``recovery``, ``variance``;
* :mod:`.report` — summary tables, JSON summaries and the complexity-vs-R² plot;
* :mod:`.command` — the ``cadsr bench`` command line.
"""

from .execution import RunOutcome, run_tasks
from .results import read_results
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
from .tasks import Task, make_tasks

__all__ = [
    "SUITES",
    "Dataset",
    "Problem",
    "TableProblem",
    "RunOutcome",
    "Task",
    "get_problem",
    "get_suite",
    "load_dataset",
    "make_tasks",
    "read_results",
    "read_table",
    "run_tasks",
]
