"""Which row of the front the criterion chooses, and whether the law was there to choose.

For each fit (problem × rows S × noise γ × seed) it records the chosen row and, for every
row of the Pareto front, whether that row is the law by SRBench's symbolic-solution test as
SRBench's code judges it (complex symbols, 3-decimal rounding, test R² > 0.5). So a fit that
missed the law is counted as either

* **on the front, not chosen**: some front row is the law, the chosen one is not (the
  criterion's fault), or
* **never found**: no front row is the law (the search's).

Three commands::

    python perf/bench_selection.py fit --suite feynman --rows 200 2000 --noise 0 0.1 \\
        --seeds 0-2 --max-time 60 --n-jobs 2 --out sel/        # fits, one JSON line each
    python perf/bench_selection.py report sel/                  # the tables
    python perf/bench_selection.py reselect sel/                # other criteria, same fronts
    python perf/bench_selection.py --smoke      # all three on one tiny fit: that they run

``fit`` writes ``fits.jsonl`` (one line per fit: the front, each row's verdict, the chosen
row) and, with ``--keep-models``, each fitted model (joblib) beside it. ``reselect``
needs those models: it scores every front row again under the criteria of
``_variant_scores`` (the installed description length, ESR's, the BIC, PySR's rule, rows held
out from the constant fit, ½ ln N per constant) on the same training rows and counts, per
criterion, how often its choice is the law. The searches are shared, so the comparison is
paired: it judges the selection, not the search. Rows whose test R² is at most
:data:`JUDGED_R2` are not judged (not the law), which keeps a fit's judging to seconds.

``--params key=value`` passes estimator parameters (``criterion=reward``). A fit already in
``fits.jsonl`` (same problem, S, γ, seed and parameters) is skipped, so a run can resume.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import sympy

SUITES = ("feynman", "nguyen", "constant")


# ----------------------------------------------------------------------------- fitting
def _parse_seeds(items):
    seeds = []
    for item in items:
        lo, _, hi = str(item).partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def _parse_params(items):
    params = {}
    for item in items or []:
        key, _, value = item.partition("=")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def _fit_key(task) -> str:
    return json.dumps([task["problem"], task["rows"], task["noise"], task["seed"],
                       sorted(task["params"].items())])


def _model_path(out: Path, task) -> Path:
    tag = "_".join(f"{k}={v}" for k, v in sorted(task["params"].items()))
    name = f"{task['problem']}_S{task['rows']}_g{task['noise']}_s{task['seed']}{tag and '_' + tag}"
    return out / "models" / (name.replace("/", "_") + ".joblib")


#: Front rows below this test R² are not judged: the law, with its constants fitted on
#: 200 rows or more, predicts the noise-free test targets better (SRBench's own floor is 0.5).
JUDGED_R2 = 0.99


def _row_verdict(equation, truth, r2_test) -> bool:
    from cadsr_sklearn.benchmarks.metrics import is_symbolic_solution

    if not r2_test > JUDGED_R2:
        return False
    return is_symbolic_solution(equation, truth, timeout=10.0, r2=r2_test, real=False)


def run_fit(task: dict) -> dict:
    """Fit one task and judge every row of its front."""
    from cadsr_sklearn import CADSRRegressor
    from cadsr_sklearn.benchmarks import get_problem
    from cadsr_sklearn.benchmarks.execution import single_threaded
    from cadsr_sklearn.benchmarks.metrics import r2_score

    problem = get_problem(task["problem"])
    with single_threaded(import_torch=True):
        data = problem.sample(seed=task["seed"], noise=task["noise"], n_train=task["rows"])
        model = CADSRRegressor(max_time=task["max_time"], random_state=task["seed"], n_jobs=1,
                               device="cpu", **task["params"])
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(data.X_train, data.y_train)
        seconds = time.perf_counter() - start
        rename = {sympy.Symbol(f"x{i}"): s for i, s in enumerate(problem.symbols)}
        rows = []
        for i, row in enumerate(model.front_rows_):
            with np.errstate(all="ignore"):
                r2_test = r2_score(data.y_test, model.predict(data.X_test, index=i))
            equation = row.equation.xreplace(rename)
            rows.append(dict(complexity=int(row.complexity), loss=float(row.loss),
                             n_fitted=int(row.expression.n_fitted),
                             criterion=float(row.criterion), formula=str(equation),
                             r2_test=float(r2_test),
                             law=bool(_row_verdict(equation, data.truth, r2_test))))
    chosen = next(i for i, row in enumerate(model.front_rows_) if row.selected)
    record = dict(task, seconds=seconds, epochs=int(model.n_epochs_), chosen=chosen,
                  front=rows, truth=str(data.truth))
    if task.get("keep_models"):
        import joblib

        path = _model_path(Path(task["out"]), task)
        path.parent.mkdir(parents=True, exist_ok=True)
        joblib.dump(model, path)
    return record


def command_fit(args) -> None:
    from cadsr_sklearn.benchmarks import get_problem, get_suite

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = list(args.problems or [])
    for suite in args.suite or []:
        names.extend(p.name for p in get_suite(suite))
    params = _parse_params(args.params)
    tasks = [dict(problem=name, rows=rows, noise=noise, seed=seed, max_time=args.max_time,
                  params=params, out=str(out), keep_models=args.keep_models)
             for rows in args.rows for noise in args.noise for seed in _parse_seeds(args.seeds)
             for name in names]
    for name in names:
        get_problem(name)  # an unknown name fails before any fit
    log = out / "fits.jsonl"
    done = set()
    if log.exists():
        done = {_fit_key(json.loads(line)) for line in log.read_text().splitlines() if line}
    tasks = [t for t in tasks if _fit_key(t) not in done]
    print(f"{len(tasks)} fits to run ({len(done)} already in {log})", file=sys.stderr)
    with ProcessPoolExecutor(max_workers=args.n_jobs) as pool, log.open("a") as sink:
        for record in pool.map(run_fit, tasks):
            sink.write(json.dumps(record) + "\n")
            sink.flush()
            front = record["front"]
            status = ("chosen" if front[record["chosen"]]["law"] else
                      "on front" if any(r["law"] for r in front) else "never")
            print(f"{record['problem']:<22} S={record['rows']:<6} γ={record['noise']:<5} "
                  f"seed={record['seed']} {status:<9} {front[record['chosen']]['formula']}",
                  file=sys.stderr)


# ----------------------------------------------------------------------------- reports
def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "fits.jsonl").read_text().splitlines()
            if line]


def _outcome(record: dict, chosen: int | None = None) -> str:
    front = record["front"]
    chosen = record["chosen"] if chosen is None else chosen
    if front[chosen]["law"]:
        return "chosen"
    return "on_front" if any(r["law"] for r in front) else "never"


def _label(record) -> str:
    params = ",".join(f"{k}={v}" for k, v in sorted(record["params"].items()))
    return params or "defaults"


def outcome_table(records: list[dict], chosen_of=lambda r: r["chosen"]) -> str:
    groups = defaultdict(list)
    for r in records:
        groups[(_label(r), r["problem"].split("-")[0], r["rows"], r["noise"])].append(r)
    lines = ["| settings | suite | S | γ | fits | solved (chosen is the law) | on the front, "
             "not chosen | never found | median chosen size |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key in sorted(groups):
        rs = groups[key]
        counts = defaultdict(int)
        for r in rs:
            counts[_outcome(r, chosen_of(r))] += 1
        sizes = [r["front"][chosen_of(r)]["complexity"] for r in rs]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | {len(rs)} | "
                     f"{counts['chosen']} | {counts['on_front']} | {counts['never']} | "
                     f"{statistics.median(sizes):g} |")
    return "\n".join(lines)


def _large_literals(formula: str) -> list[str]:
    """The fractions with more than two digits above or below the line in ``formula``."""
    try:
        expr = sympy.sympify(formula)
    except (sympy.SympifyError, TypeError, SyntaxError):
        return []
    return [str(r) for r in expr.atoms(sympy.Rational) if abs(r.p) > 99 or r.q > 99]


def command_report(args) -> None:
    records = [r for folder in args.folders for r in _records(Path(folder))]
    print(outcome_table(records))
    rows = [row for r in records for row in r["front"]]
    large = [(row["formula"], found) for row in rows if (found := _large_literals(row["formula"]))]
    print(f"\nFront rows shown with a fraction of more than two digits: {len(large)} of "
          f"{len(rows)}")
    for formula, found in large[:20]:
        print(f"- `{formula}` ({', '.join(found)})")
    if args.misses:
        print()
        for r in records:
            if _outcome(r) == "on_front":
                law = next(x for x in r["front"] if x["law"])
                chosen = r["front"][r["chosen"]]
                print(f"- {r['problem']} S={r['rows']} γ={r['noise']} seed={r['seed']}: chose "
                      f"`{chosen['formula']}` (k={chosen['complexity']}), law "
                      f"`{law['formula']}` (k={law['complexity']})")


# ----------------------------------------------------------------------------- reselection
def _description_pieces(expression, X, y):
    """(−ln p at σ̂, nodes·ln V + literals, Jacobian of the fitted constants, σ̂²), or None."""
    from cadsr_sklearn.expressions.simple_numbers import codelength

    with np.errstate(all="ignore"):
        pred = expression.evaluate(X)
    if not np.all(np.isfinite(pred)):
        return None
    S = len(y)
    floor = (1024 * np.finfo(float).eps) ** 2 * float(np.mean(y * y))
    sigma2 = max(float(np.mean((pred - y) ** 2)), floor)
    fit = 0.5 * S * (math.log(2 * math.pi * sigma2) + 1)
    structure = (expression.node_complexity * math.log(len(expression.library))
                 + sum(codelength(v) for v in expression.constants[expression.fixed]))
    fitted = ~expression.fixed
    J = expression.jacobian(X)[fitted] if expression.n_fitted else np.zeros((0, S))
    return fit, structure, J, sigma2


def _precision_cost(J, sigma2, scales):
    """Σ_k max(0, ½ ln(μ_k/3)), μ_k the eigenvalues of D I D with D = diag(scales)."""
    if not len(J):
        return 0.0
    with np.errstate(all="ignore"):
        relative = (J @ J.T) / sigma2 * np.outer(scales, scales)
    if not np.all(np.isfinite(relative)):
        return math.inf
    mu = np.linalg.eigvalsh(relative)
    with np.errstate(all="ignore"):
        cost = 0.5 * np.log(mu / 3)
    return float(np.sum(np.where(cost > 0, cost, 0.0)))


def _variant_scores(model, X, y, n_examined) -> dict[str, list[float]]:
    """Each front row's score (higher is better) under every variant criterion.

    ``mdl`` is the installed library's criterion; ``mdl-esr`` the description length with
    each constant stated within its own magnitude (ESR's, the criterion before issue 39);
    ``+N`` adds ½ ln N per fitted constant, N the formulas the search scored.
    """
    from cadsr_sklearn.scoring import rewards
    from cadsr_sklearn.front.selection import cross_validated_errors, select

    rows = model.front_rows_
    scores = defaultdict(list)
    for row in rows:
        e = row.expression
        with np.errstate(all="ignore"):
            pred = e.evaluate(X)
        scores["bic"].append(rewards.bic(pred, y, e.complexity))
        installed = rewards.mdl(pred, y, e, X)
        pieces = _description_pieces(e, X, y)
        elsewhere = e.n_fitted * math.log(max(n_examined, 1))  # −2 × ½ ln N per constant
        scores["mdl"].append(installed)
        scores["mdl+N"].append(installed - elsewhere)
        if pieces is None or e.n_fitted >= len(y):
            scores["mdl-esr"].append(-math.inf)
            continue
        fit, structure, J, sigma2 = pieces
        esr = fit + structure + _precision_cost(J, sigma2, np.abs(e.constants[~e.fixed]))
        scores["mdl-esr"].append(-2 * esr)
    losses = [r.loss for r in rows]
    pysr = select(losses, [r.complexity for r in rows], "score", 0)
    scores["pysr"] = [1.0 if i == pysr else 0.0 for i in range(len(rows))]
    # rows held out from the constant fit (10 folds above 100 rows), one-standard-error rule
    errors = cross_validated_errors([r.expression for r in rows], X, y, None,
                                    const_fit_samples=1000)
    held_out = select(losses, [r.complexity for r in rows], "cv", 0, errors)
    scores["held-out"] = [1.0 if i == held_out else 0.0 for i in range(len(rows))]
    return scores


def command_reselect(args) -> None:
    import joblib

    from cadsr_sklearn.benchmarks import get_problem

    records = [r for folder in args.folders for r in _records(Path(folder))]
    chosen_by = defaultdict(dict)  # variant → fit key → chosen row
    for r in records:
        path = _model_path(Path(r["out"]), r)
        if not path.exists():
            continue
        model = joblib.load(path)
        data = get_problem(r["problem"]).sample(seed=r["seed"], noise=r["noise"],
                                                n_train=r["rows"])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = _variant_scores(model, data.X_train, data.y_train, model.n_evaluations_)
        for name, values in scores.items():
            values = [v if math.isfinite(v) else -math.inf for v in values]
            chosen_by[name][_fit_key(r)] = int(np.argmax(values))
    judged = [r for r in records if _fit_key(r) in chosen_by.get("bic", {})]
    for name in sorted(chosen_by):
        print(f"\n### {name}\n")
        print(outcome_table(judged, lambda r, n=name: chosen_by[n][_fit_key(r)]))


def smoke() -> None:
    """The three commands on one tiny fit (Nguyen-1, 20 rows, two epochs of a tiny
    search), in a scratch folder: that they run."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        main(["fit", "--problems", "Nguyen-1", "--rows", "20", "--noise", "0", "--seeds", "0",
              "--max-time", "10", "--n-jobs", "1", "--keep-models", "--out", folder,
              "--params", "n_epochs=2", "batch_size=32", "ff_dim=32", "max_length=14"])
        main(["report", "--misses", folder])
        main(["reselect", folder])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    sub = parser.add_subparsers(dest="command")
    fit = sub.add_parser("fit", help="run the fits")
    fit.add_argument("--suite", nargs="*", choices=SUITES)
    fit.add_argument("--problems", nargs="*")
    fit.add_argument("--rows", nargs="+", type=int, default=[2000])
    fit.add_argument("--noise", nargs="+", type=float, default=[0.0, 0.1])
    fit.add_argument("--seeds", nargs="+", default=["0"])
    fit.add_argument("--max-time", type=float, default=60.0)
    fit.add_argument("--n-jobs", type=int, default=max(1, (os.cpu_count() or 2)))
    fit.add_argument("--params", nargs="*")
    fit.add_argument("--keep-models", action="store_true")
    fit.add_argument("--out", required=True)
    report = sub.add_parser("report", help="tables of the recorded fits")
    report.add_argument("folders", nargs="+")
    report.add_argument("--misses", action="store_true",
                        help="list each fit whose law was on the front and not chosen")
    reselect = sub.add_parser("reselect", help="other criteria on the same fronts")
    reselect.add_argument("folders", nargs="+")
    args = parser.parse_args(argv)
    if args.smoke:
        smoke()
        return
    if args.command is None:
        parser.error("give a command: fit, report or reselect")
    {"fit": command_fit, "report": command_report, "reselect": command_reselect}[
        args.command](args)


if __name__ == "__main__":
    main()
