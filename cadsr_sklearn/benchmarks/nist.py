"""NIST StRD nonlinear-regression files: small real tables with a certified model.

Each file (``Misra1a.dat``, ``DanWood.dat``, …) holds observed data, the model
a scientist fitted (``y = b1*x**b2``), its certified least-squares parameters,
two sets of starting values and the certified residual sum of squares (RSS).
They are the small tables scientists bring, with a known good answer, so they
say whether a search returns a credible law or an interpolant dressed in
constants. Two judgements, each against the certified model:

* **on all rows** (``split="all"``): the chosen formula is the *certified form
  or better* when its RSS is at most 5 % above the certified RSS (or lower)
  with at most the certified model's nodes + 2;
* **held out** (``split="holdout"``): fitted on a random 75 % of the rows, its
  mean squared error on the other 25 % against that of the certified model
  refitted on the same rows (from the file's starting values, by SciPy's
  least squares): no worse is a pass.

``cadsr bench --preset nist --data …/nist/*.dat`` runs both (see
:func:`run_study`), resumably, and prints the table.
"""

from __future__ import annotations

import csv
import math
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import sympy

__all__ = ["NistProblem", "read_nist", "refit_certified", "run_nist_task", "run_study",
           "nist_table", "RSS_TOLERANCE", "EXTRA_NODES", "HOLDOUT"]

#: The chosen formula's RSS may exceed the certified RSS by this fraction.
RSS_TOLERANCE = 0.05
#: … with at most this many nodes more than the certified model.
EXTRA_NODES = 2
#: Fraction of the rows the held-out judgement fits on.
HOLDOUT = 0.75

_COLUMNS = ("problem", "split", "variant", "seed", "max_time", "n_train", "n_test", "formula",
            "nodes", "certified_nodes", "n_fitted", "rss", "certified_rss", "mse_test",
            "certified_mse_test", "passed", "fit_time", "stop", "error")


@dataclass(frozen=True)
class NistProblem:
    """One NIST StRD file: data, certified model and its parameters."""

    name: str
    X: np.ndarray  # (S, 1)
    y: np.ndarray  # (S,)
    model: sympy.Expr  # in x and b1 … bk
    parameters: tuple[sympy.Symbol, ...]  # b1 … bk
    starts: tuple[np.ndarray, ...]  # the file's starting values, (k,) each
    certified: np.ndarray  # (k,)
    certified_rss: float

    def predict(self, b: np.ndarray, X: np.ndarray) -> np.ndarray:
        f = sympy.lambdify((sympy.Symbol("x"), *self.parameters), self.model, "numpy")
        with np.errstate(all="ignore"):
            return np.broadcast_to(np.asarray(f(X[:, 0], *b), dtype=float), (len(X),))

    @property
    def certified_nodes(self) -> int:
        """Nodes of the certified model, its parameters as numbers (SRBench's count)."""
        from .metrics import node_count

        return int(node_count(self.model.subs(dict(zip(self.parameters, self.certified)))))


def read_nist(path: str | Path) -> NistProblem:
    """Read a NIST StRD nonlinear-regression ``.dat`` file."""
    path = Path(path)
    lines = path.read_text().splitlines()
    model_text = _model_text(lines)
    values = {}
    for line in lines:
        found = re.match(r"\s*(b\d+)\s*=\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", line)
        if found:
            values[found.group(1)] = [float(v) for v in found.group(2, 3, 4)]
    names = sorted(values, key=lambda b: int(b[1:]))
    parameters = tuple(sympy.Symbol(b) for b in names)
    local = {b.name: b for b in parameters} | {"x": sympy.Symbol("x"), "exp": sympy.exp,
                                                "arctan": sympy.atan, "pi": sympy.pi}
    model = sympy.sympify(model_text, locals=local)
    rss = next(float(line.split(":")[1]) for line in lines
               if line.startswith("Residual Sum of Squares"))
    header = next(i for i, line in enumerate(lines)
                  if re.match(r"\s*Data:\s+y\s+x\s*$", line))
    data = np.array([[float(v) for v in line.split()] for line in lines[header + 1:]
                     if line.strip()])
    table = np.array([values[b] for b in names])  # (k, 3): start 1, start 2, certified
    return NistProblem(path.stem, data[:, 1:2], data[:, 0], model, parameters,
                       (table[:, 0], table[:, 1]), table[:, 2], rss)


def _model_text(lines: list[str]) -> str:
    """The right-hand side of the ``Model:`` section's ``y = … + e``, in Python syntax."""
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("y ") and "=" in line)
    text = lines[start].split("=", 1)[1]
    for line in lines[start + 1:]:
        if not line.strip():
            break
        text += line
    text = re.sub(r"\+\s*e\s*$", "", text.strip())
    return text.replace("[", "(").replace("]", ")")


def refit_certified(problem: NistProblem, rows: np.ndarray) -> np.ndarray:
    """The certified model's parameters least-squares fitted on ``rows``, from the file's
    starting values (the lower RSS of the two starts)."""
    from scipy.optimize import least_squares

    X, y = problem.X[rows], problem.y[rows]
    best, best_cost = problem.certified, math.inf
    for start in problem.starts:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fit = least_squares(lambda b: problem.predict(b, X) - y, start, method="lm",
                                max_nfev=20000, xtol=1e-15, ftol=1e-15)
        if np.isfinite(fit.cost) and fit.cost < best_cost:
            best, best_cost = fit.x, fit.cost
    return best


def _split(S: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(S)
    n_train = max(3, int(round(HOLDOUT * S)))
    return np.sort(order[:n_train]), np.sort(order[n_train:])


def run_nist_task(problem: NistProblem, split: str, seed: int, max_time: float,
                  params: dict[str, Any] | None = None, variant: str = "") -> dict:
    """Fit CADSR on ``problem`` (all rows, or a 75 % ``"holdout"`` split) and judge it."""
    from ..estimator import CADSRRegressor
    from .metrics import node_count

    S = len(problem.y)
    train, test = (np.arange(S), np.arange(0)) if split == "all" else _split(S, seed)
    row: dict[str, Any] = dict(problem=problem.name, split=split, variant=variant, seed=seed,
                               max_time=max_time, n_train=len(train), n_test=len(test),
                               certified_nodes=problem.certified_nodes, error="")
    try:
        model = CADSRRegressor(**{"max_time": max_time, "random_state": seed, "device": "cpu",
                                  "n_jobs": 1, **(params or {})})
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the small-table advice: expected here
            model.fit(problem.X[train], problem.y[train])
        row["fit_time"] = time.perf_counter() - start
        row["stop"] = model.stop_reason_
        formula = model.sympy()
        # every digit: rounded, a sensitive formula (49.78*exp(-11.66*exp(-x0))) does not
        # predict what the model does, nor have the RSS beside it
        row["formula"] = str(formula)
        row["nodes"] = int(node_count(formula))
        row["n_fitted"] = int(model.best_expression_.n_fitted)
        if split == "all":
            residual = model.predict(problem.X) - problem.y
            row["rss"] = float(np.sum(residual**2))
            row["certified_rss"] = problem.certified_rss
            row["passed"] = bool(row["rss"] <= (1 + RSS_TOLERANCE) * problem.certified_rss
                                 and row["nodes"] <= row["certified_nodes"] + EXTRA_NODES)
        else:
            b = refit_certified(problem, train)
            with np.errstate(all="ignore"):
                mine = float(np.mean((model.predict(problem.X[test]) - problem.y[test]) ** 2))
                theirs = float(np.mean((problem.predict(b, problem.X[test])
                                        - problem.y[test]) ** 2))
            row["mse_test"] = mine if math.isfinite(mine) else math.inf
            row["certified_mse_test"] = theirs
            row["passed"] = bool(row["mse_test"] <= theirs)
    except Exception as err:  # noqa: BLE001 - one failed task must not end the study
        row["error"] = f"{type(err).__name__}: {err}".replace("\n", " ")
    return row


def _key(row: dict) -> tuple:
    return (row["problem"], row["split"], row["variant"], int(row["seed"]),
            float(row["max_time"]))


def _read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        return [r for r in csv.DictReader(handle) if not r.get("error")]


def run_study(paths: Sequence[str], seeds: Sequence[int], max_time: float,
              variants: dict[str, dict[str, Any]], out: Path | None, n_jobs: int = 1) -> list[dict]:
    """Every (file, split, variant, seed) task not already in ``out``; all rows of the study."""
    from joblib import Parallel, delayed

    problems = [read_nist(p) for p in paths]
    done = {_key(r): r for r in _read(out)} if out else {}
    tasks = [(p, split, s, name, settings) for p in problems for split in ("all", "holdout")
             for s in seeds for name, settings in variants.items()
             if (p.name, split, name, int(s), float(max_time)) not in done]
    rows = list(done.values())
    new = out is not None and not out.exists()
    handle = out.open("a", newline="") if out else None
    try:
        writer = csv.DictWriter(handle, _COLUMNS) if handle else None
        if writer and new:
            writer.writeheader()
        results = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_single_threaded_task)(p, split, s, max_time, settings, name)
            for p, split, s, name, settings in tasks)
        for i, row in enumerate(results, 1):
            rows.append(row)
            print(f"[{i}/{len(tasks)}] {row['problem']} {row['split']} seed={row['seed']}"
                  f"{' [' + row['variant'] + ']' if row['variant'] else ''}: "
                  f"{'FAILED ' + row['error'] if row['error'] else row['formula']}", flush=True)
            if writer:
                writer.writerow(row)
                handle.flush()
    finally:
        if handle:
            handle.close()
    return [r for r in rows if not r.get("error")]


def _single_threaded_task(problem, split, seed, max_time, settings, variant) -> dict:
    from .execution import single_threaded

    with single_threaded(import_torch=True):
        return run_nist_task(problem, split, seed, max_time, settings, variant)


def nist_table(rows: list[dict]) -> str:
    """Markdown: per file and variant, the all-rows and held-out verdicts over the seeds."""
    def number(v):
        return float(v) if v not in ("", None) else math.nan

    groups: dict[tuple, dict] = {}
    for r in rows:
        g = groups.setdefault((r["variant"], r["problem"]), {"all": [], "holdout": []})
        g[r["split"]].append(r)
    lines = ["| variant | file | certified form or better (all rows) | RSS / certified | nodes "
             "(certified) | held-out MSE ≤ certified refit | held-out MSE / certified |",
             "|---|---|---|---|---|---|---|"]
    totals: dict[str, list[int]] = {}
    for (variant, name), g in sorted(groups.items()):
        full, held = g["all"], g["holdout"]
        ok_full = sum(str(r["passed"]) == "True" for r in full)
        ok_held = sum(str(r["passed"]) == "True" for r in held)
        t = totals.setdefault(variant, [0, 0, 0, 0])
        t[0] += ok_full
        t[1] += len(full)
        t[2] += ok_held
        t[3] += len(held)
        ratio = np.median([number(r["rss"]) / number(r["certified_rss"]) for r in full]
                          ) if full else math.nan
        held_ratio = np.median([number(r["mse_test"]) / number(r["certified_mse_test"])
                                for r in held]) if held else math.nan
        nodes = ", ".join(str(r["nodes"]) for r in full)
        lines.append(f"| {variant or '—'} | {name} | {ok_full}/{len(full)} | {ratio:.3g} | "
                     f"{nodes} ({full[0]['certified_nodes'] if full else '–'}) | "
                     f"{ok_held}/{len(held)} | {held_ratio:.3g} |")
    for variant, (a, n, b, m) in sorted(totals.items()):
        lines.append(f"| {variant or '—'} | **all** | **{a}/{n}** | | | **{b}/{m}** | |")
    return "\n".join(lines)
