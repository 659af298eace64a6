"""What a search returns on fixed seeds, to check that a refactor leaves it unchanged.

Runs a handful of seeded fits (fixed epochs, no time limit, one job), each on a
small table of its own, and writes per fit: the front (text, reward, loss,
criterion), the chosen formula, its constants and every epoch's rewards. Run it
once per version, then compare::

    PYTHONPATH=/tmp/before python perf/search_fingerprint.py --dump before.json
    python perf/search_fingerprint.py --dump after.json
    python perf/search_fingerprint.py --compare before.json after.json

``--params genetic_generations=0`` runs every case with those parameters (here: the
paper's loop, without the genetic stage, against a version that had none).

Numbers are compared exactly (``repr`` of the float), so "unchanged" means bit for
bit; the cases cover built-in operators, a user operator numba compiles, one it
cannot (a SciPy function), sample weights, two outputs, a six-row table and
physical units.

``--round-trip`` also writes each fitted model to a formula file
(``save_formula``), loads it (its custom operators registered by name, as a user
who receives the file would) and checks that the loaded model predicts the same
values and standard errors, bit for bit, and shows the same formulas.

``--smoke`` runs three cases (default, two outputs, the six-row table) for two epochs,
with the round trip, dumps them and compares the dump with itself: that the script runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np


def _cases():
    import scipy.special

    from cadsr_sklearn import Operator

    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, size=(200, 2))
    y = 1.7 * X[:, 0] ** 2 / X[:, 1] + 0.3 * np.sin(X[:, 0])
    gauss = Operator("gauss", lambda a: np.exp(-a * a), lambda a: -2 * a * np.exp(-a * a),
                     sympy_function=lambda a: __import__("sympy").exp(-a**2))
    erf = Operator("erf", scipy.special.erf,
                   lambda a: 2 / np.sqrt(np.pi) * np.exp(-a * a),
                   sympy_function=lambda a: __import__("sympy").erf(a))
    small = dict(n_epochs=8, batch_size=64, random_state=0, n_jobs=1)
    w = rng.uniform(0.5, 2.0, size=200)
    kepler_a = np.array([0.387, 0.723, 1.0, 1.524, 5.203, 9.537])
    kepler_p = np.array([87.97, 224.70, 365.26, 686.98, 4332.6, 10759.2])
    return {
        "default": (dict(small), X, y, {}),
        "seed3": (dict(small, random_state=3), X, y, {}),
        "compiled-operator": (dict(small, unary_operators=("sin", gauss)), X, y, {}),
        "numpy-operator": (dict(small, unary_operators=("exp", erf)), X[:60],
                           scipy.special.erf(X[:60, 0]) * X[:60, 1], {}),
        "weights": (dict(small), X, y, dict(sample_weight=w)),
        "two-outputs": (dict(small), X, np.column_stack([y, X[:, 0] * X[:, 1]]), {}),
        "kepler": (dict(small, n_epochs=12), kepler_a[:, None], kepler_p, {}),
        "units": (dict(small, n_epochs=12), X, 0.5 * X[:, 0] * X[:, 1] ** 2,
                  dict(X_units=["kg/s^2", "m"], y_units="kg*m^2/s^2")),
    }


def _run(params, X, y, fit_params) -> dict:
    from cadsr_sklearn import CADSRRegressor

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CADSRRegressor(**params).fit(X, y, **fit_params)
    models = getattr(model, "estimators_", None) or [model]
    out = []
    for m in models:
        front = m.equations_
        rows = front.to_dict("records") if hasattr(front, "to_dict") else list(front)
        out.append({
            "front": [{k: repr(v) for k, v in r.items() if k in
                       ("complexity", "equation", "reward", "loss", "criterion")} for r in rows],
            "formula": str(m.sympy()),
            "constants": [repr(float(c)) for c in m.best_expression_.constants],
            "rewards": [[repr(h.get(k)) for k in ("best_reward", "batch_mean_reward",
                                                   "best_criterion")] for h in m.history_],
        })
    return {"models": out, "prediction": [repr(float(v)) for v in np.ravel(model.predict(X))[:5]],
            "model": model}


def round_trip(model, params: dict, X) -> list[str]:
    """What differs between ``model`` and its formula file's model (nothing, ideally)."""
    import tempfile
    from pathlib import Path

    from cadsr_sklearn import CADSRRegressor, Operator, register_operator

    operators = params.get("unary_operators", ())
    for operator in operators:
        if isinstance(operator, Operator):
            register_operator(operator.name, operator.function, operator.derivative,
                              sympy_function=operator.sympy_function)
    if operators:  # the file names them, as the receiver's registry does
        model.set_params(unary_operators=tuple(getattr(op, "name", op) for op in operators))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.json"
        model.save_formula(path)
        loaded = CADSRRegressor.load_formula(path)
    problems = []
    (y, std), (y2, std2) = model.predict(X, return_std=True), loaded.predict(X, return_std=True)
    if not (np.array_equal(y, y2, equal_nan=True) and np.array_equal(std, std2, equal_nan=True)):
        problems.append("predictions differ")
    if str(model) != str(loaded):
        problems.append("print() differs")
    if model.sympy() != loaded.sympy() or model.latex() != loaded.latex():
        problems.append("the formula differs")
    return problems


def dump(path: str | None, only: list[str] | None, check_round_trip: bool,
         extra: dict | None = None) -> int:
    results, failures = {}, 0
    for name, (params, X, y, fit_params) in _cases().items():
        if only and name not in only:
            continue
        params = dict(params, **(extra or {}))
        results[name] = _run(params, X, y, fit_params)
        model = results[name].pop("model")
        print(name, results[name]["models"][0]["formula"], flush=True)
        if check_round_trip:
            problems = round_trip(model, params, X)
            failures += bool(problems)
            print(f"  formula file: {'; '.join(problems) or 'the same predictions and formulas'}")
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if failures else 0


def compare(a: str, b: str) -> int:
    with open(a) as f:
        old = json.load(f)
    with open(b) as f:
        new = json.load(f)
    changed = 0
    for name in old:
        if name not in new:
            print(f"{name}: missing in {b}")
            changed += 1
        elif old[name] != new[name]:
            changed += 1
            print(f"{name}: CHANGED")
            for i, (mo, mn) in enumerate(zip(old[name]["models"], new[name]["models"])):
                for key in mo:
                    if mo[key] != mn[key]:
                        print(f"  model {i} {key}: {str(mo[key])[:200]}\n"
                              f"     -> {str(mn[key])[:200]}")
        else:
            print(f"{name}: identical")
    return 1 if changed else 0


def smoke() -> int:
    """Three cases for two epochs with the round trip, dumped and compared with
    themselves, in a scratch folder."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "smoke.json")
        failed = dump(path, ["default", "two-outputs", "kepler"], True, {"n_epochs": 2})
        return failed or compare(path, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", metavar="JSON")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--compare", nargs=2, metavar="JSON")
    parser.add_argument("--round-trip", action="store_true",
                        help="also check each model's formula file round trip")
    parser.add_argument("--params", nargs="*", metavar="KEY=VALUE", default=[],
                        help="estimator parameters for every case (JSON values), e.g. "
                             "genetic_generations=0: the paper's loop, to compare with a "
                             "version before the genetic stage")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    args = parser.parse_args()
    if args.smoke:
        return smoke()
    if args.compare:
        return compare(*args.compare)
    extra = {key: json.loads(value) for key, _, value in (p.partition("=") for p in args.params)}
    return dump(args.dump, args.only, args.round_trip, extra)


if __name__ == "__main__":
    sys.exit(main())
