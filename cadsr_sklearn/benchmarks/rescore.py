"""Judging finished rows again from their stored formulas (``cadsr bench --rescore``).

For after a change to the judge: nothing is refitted. The formula a row judges
is the one :func:`.metrics.judged_formula` chose when the task ran, stored in
its ``model`` column (and τ* before snapping in ``model_unsnapped``), so a
rescore judges exactly what the run judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import sympy

from ..user_input import UsageError
from .execution import RunOutcome
from .results import normalise_row, read_results, results_format, row_key, write_results
from .tasks import Task

__all__ = ["rescore_results"]


def rescore_results(tasks: Sequence[Task], out: str | Path, timeout: float = 10.0) -> RunOutcome:
    """Recompute the SymPy metrics of the finished rows of ``tasks`` in ``out``.

    R², fit time, evaluations and ``exact_test`` stay; ``accuracy_solution``,
    ``symbolic_solution``, ``solved_srbench``, ``complexity`` and
    ``solved_srbench_unsnapped`` are recomputed. The file is rewritten
    atomically (other rows are kept as they are). Simplified complexities can
    differ from the first run where a simplification ran into its time limit
    in one run and not in the other.
    """
    from .metrics import (
        ACCURACY_R2,
        SYMBOLIC_MIN_R2,
        is_symbolic_solution,
        simplified_complexity,
        symbolic_verdicts,
    )

    path = Path(out)
    kind = results_format(path)
    if kind is not None and kind.endswith("-script"):
        raise UsageError(f"{path}: --rescore rewrites cadsr bench files only; this one was "
                         f"written by the old bench_{kind.split('-')[0]}.py")
    rows = read_results(path)
    if not rows:
        raise UsageError(f"{path}: no results to rescore")
    wanted = {t.key: t for t in tasks}
    latest = {}
    for i, row in enumerate(rows):
        if not row.get("error"):
            latest[row_key(row)] = i
    done = []
    for key, i in latest.items():
        task = wanted.get(key)
        if task is None:
            continue
        row = rows[i]
        local = {v: sympy.Symbol(v) for v in task.problem.variables}
        try:
            model = sympy.sympify(row["model"], locals=local)
            truth = sympy.sympify(row["truth"], locals=local) if row.get("truth") else None
            unsnapped = (sympy.sympify(row["model_unsnapped"], locals=local)
                         if row.get("model_unsnapped") else None)
        except (sympy.SympifyError, SyntaxError, TypeError, ValueError):
            continue  # a formula SymPy cannot read back keeps its first scores
        r2 = row["r2_test"]
        row["accuracy_solution"] = r2 > ACCURACY_R2
        if truth is not None:
            row["symbolic_solution"], row["solved_srbench"] = symbolic_verdicts(
                model, truth, timeout, r2=r2
            )
            raw_r2 = row.get("r2_test_unsnapped")
            if unsnapped == model and raw_r2 is not None and (
                (raw_r2 > SYMBOLIC_MIN_R2) == (r2 > SYMBOLIC_MIN_R2)
            ):
                row["solved_srbench_unsnapped"] = row["solved_srbench"]  # nothing was snapped
            elif unsnapped is not None and raw_r2 is not None:
                row["solved_srbench_unsnapped"] = is_symbolic_solution(
                    unsnapped, truth, timeout, r2=raw_r2, real=False
                )
        row["complexity"] = simplified_complexity(model, timeout)
        done.append(normalise_row(row))
    write_results(path, rows)
    by_key = {row_key(r): r for r in done}
    return RunOutcome([by_key[t.key] for t in tasks if t.key in by_key])
