"""The results file of ``cadsr bench``: one CSV row per finished task.

Rows are appended as tasks finish (:class:`ResultsWriter`, flushed at once), so
an interrupted run keeps what it did; :func:`read_results` reads them back,
skipping a line a crash cut short, and a later run skips every task whose key
(:data:`KEY`) already has a row without an error.

:func:`read_results` also reads the files of earlier versions: a ``cadsr
bench`` file with fewer columns (the missing ones are empty; appending to one
first rewrites it with today's columns), and the CSV files of the scripts the
presets replaced, ``benchmarks/bench_recovery.py`` and
``benchmarks/bench_variance.py`` (CADSR only; their noise level and budget were
not recorded and read as empty).
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

from ..user_input import UsageError

__all__ = [
    "COLUMNS",
    "KEY",
    "read_results",
    "results_format",
    "write_results",
    "ResultsWriter",
    "row_key",
    "normalise_row",
]

#: Columns of the results CSV, in order.
COLUMNS: tuple[str, ...] = (
    "suite",
    "problem",
    "method",
    "variant",
    "seed",
    "noise",
    "max_time",
    "r2_test",
    "r2_train",
    "accuracy_solution",
    "symbolic_solution",
    "solved_srbench",
    "exact_test",
    "complexity",
    "size",
    "k",
    "fit_time",
    "time_to_best_s",
    "epochs",
    "stop",
    "units_rejected",
    "evaluations",
    "n_train",
    "n_test",
    "model",
    "truth",
    "native",
    "r2_test_unsnapped",
    "solved_srbench_unsnapped",
    "size_unsnapped",
    "model_unsnapped",
    "host",
    "error",
)
#: The columns that identify a task's row.
KEY: tuple[str, ...] = ("suite", "problem", "method", "variant", "seed", "noise", "max_time")
_INT = {"seed", "complexity", "size", "k", "epochs", "evaluations", "n_train", "n_test",
        "size_unsnapped"}
_FLOAT = {"noise", "max_time", "r2_test", "r2_train", "fit_time", "time_to_best_s",
          "r2_test_unsnapped", "units_rejected"}
_BOOL = {"accuracy_solution", "symbolic_solution", "solved_srbench", "exact_test",
         "solved_srbench_unsnapped"}
#: Columns of ``cadsr bench`` files written before the variant column.
_OPTIONAL_KEY = {"variant"}
#: Test R² of an accuracy solution (metrics.ACCURACY_R2; not imported: no SymPy needed here).
_ACCURACY_R2 = 0.999

# The scripts the presets replaced: their columns, renamed to today's.
_RECOVERY_SCRIPT = {
    "solved": "symbolic_solution",
    "complexity": "k",
    "time_s": "fit_time",
    "formula": "model",
    "formula_unsnapped": "model_unsnapped",
}
_VARIANCE_SCRIPT = {"solved": "symbolic_solution", "complexity": "k", "formula": "model"}


def _parse(column: str, text: str | None):
    if text is None or text == "":
        return None
    if column in _INT:
        return int(float(text))
    if column in _FLOAT:
        return float(text)
    if column in _BOOL:
        return text.strip().lower() in ("1", "true", "yes")
    return text


def _format(column: str, value) -> str:
    if value is None:
        return ""
    if column in _BOOL:
        return "1" if value else "0"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else (
            "-inf" if value < 0 else ("inf" if value > 0 else "nan")
        )
    return str(value)


def normalise_row(row: dict) -> dict:
    """Every column, with the same types whether a row came from a worker or from the CSV."""
    return {c: _parse(c, _format(c, row.get(c))) for c in COLUMNS}


def row_key(row: dict) -> tuple:
    """The row's :data:`KEY`, comparable with :attr:`.tasks.Task.key`."""
    def value(column):
        v = row.get(column)
        if column == "variant":
            return v or ""
        if column in ("noise", "max_time"):
            return None if v is None else float(v)
        return v

    return tuple(value(c) for c in KEY)


def _header(path: Path) -> list[str] | None:
    if not path.exists() or path.stat().st_size == 0:
        return None
    with path.open(newline="") as fh:
        return next(csv.reader(fh), None)


def results_format(path: str | Path) -> str | None:
    """What wrote ``path``, by its header; None for a missing or empty file.

    "bench" (today's columns), "bench-old" (an earlier ``cadsr bench``, fewer
    columns), "recovery-script" or "variance-script" (the scripts the presets
    replaced).
    """
    header = _header(Path(path))
    if not header:
        return None
    if header == list(COLUMNS):
        return "bench"
    if "problem" in header and "seed" in header and "solved" in header and "suite" not in header:
        return "variance-script" if "variance" in header else "recovery-script"
    missing = [c for c in KEY if c not in header and c not in _OPTIONAL_KEY]
    if missing:
        raise UsageError(f"{path}: not a cadsr bench results file (no column(s) {missing})")
    return "bench-old"


def read_results(path: str | Path) -> list[dict]:
    """Rows of a results CSV, parsed, with every column of :data:`COLUMNS`.

    Rows cut short by a crash are skipped. Files of earlier versions are read
    as described in the module's docstring.
    """
    path = Path(path)
    kind = results_format(path)
    if kind is None:
        return []
    rows = []
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        for values in reader:
            if len(values) != len(header):
                continue  # a line half-written when the run was killed
            raw = dict(zip(header, values))
            if kind == "recovery-script":
                raw = _from_script(raw, _RECOVERY_SCRIPT)
            elif kind == "variance-script":
                raw = _from_script(raw, _VARIANCE_SCRIPT)
                raw["variant"] = f"bic_variance={raw.pop('variance', '')}"
            try:
                row = {c: _parse(c, raw.get(c)) for c in COLUMNS}
            except ValueError:
                continue
            if kind.endswith("-script") and row["r2_test"] is not None:
                row["accuracy_solution"] = row["r2_test"] > _ACCURACY_R2
            rows.append(row)
    return rows


def _from_script(raw: dict, renamed: dict) -> dict:
    row = {renamed.get(c, c): v for c, v in raw.items()}
    row.update(suite=raw["problem"].split("-", 1)[0].lower(), method="cadsr")
    return row


def write_results(path: str | Path, rows: list[dict]) -> None:
    """Write ``rows`` as a whole results file, atomically (a temporary file renamed over it)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([_format(c, row.get(c)) for c in COLUMNS])
    os.replace(tmp, path)


class ResultsWriter:
    """Appends one row at a time to a results file and flushes it to disk at once.

    A file of an earlier ``cadsr bench`` is first rewritten with today's columns;
    one of the replaced scripts is refused (read it with ``cadsr bench --report``).
    """

    def __init__(self, path: str | Path):
        self.path = path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        kind = results_format(path)
        if kind is not None and kind.endswith("-script"):
            raise UsageError(
                f"{path}: written by the old bench_{kind.split('-')[0]}.py; read it with "
                "`cadsr bench --report` and write new runs to another --out"
            )
        if kind == "bench-old":
            write_results(path, read_results(path))
        torn = False
        if kind is not None:
            with path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                torn = fh.read(1) != b"\n"
        self.fh = path.open("a", newline="")
        if kind is None:
            self.fh.write(",".join(COLUMNS) + "\n")
        elif torn:
            self.fh.write("\n")  # end a line cut by a crash; read_results drops it
        self.writer = csv.writer(self.fh)
        self.fh.flush()

    def write(self, row: dict) -> None:
        self.writer.writerow([_format(c, row.get(c)) for c in COLUMNS])
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        self.fh.close()
