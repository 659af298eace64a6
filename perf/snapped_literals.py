"""Every number the answer fixed to a simple one, on small real tables: is it resolved?

Fits the NIST StRD files given (all rows) and five classic small tables that statisticians
model with textbook laws (75 % of the rows, as a new user would hold some out), and prints
one line per fit (the chosen formula, its training R² beside the mean's 0, and whether it
has a sine, cosine or tangent) and one per
fixed number of the chosen formula: the number, the value and standard error it was
fitted with, the gap to its nearest rival simple number, and gap/σ (the resolution rule
asks the data to reject every rival by three standard errors:
``cadsr_sklearn.expressions.simple_numbers.resolves``).

The tables (public data, as R ships them): ``Theoph`` subject 1 (drug concentration against
time), ``BOD`` (biochemical oxygen demand against time), Kepler's third law from the eight
planets (period in years against semi-major axis in AU), ``DNase`` run 1 (optical density
against concentration), ``pressure`` (mercury vapour pressure against temperature),
MASS's ``mammals`` (brain mass in g against body mass in kg, 62 species from 5 g to 6.6 t:
the textbook law is a power, b ≈ 0.75).

    python perf/snapped_literals.py --nist ../shared/benchmarks/nist/*.dat --seeds 0 1
    python perf/snapped_literals.py --smoke     # two tables, two epochs
"""

import argparse
import json
import math
import warnings

import numpy as np
import sympy
from sklearn.model_selection import train_test_split

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.benchmarks.nist import read_nist

_MAMMAL_BODY_KG = [
    3.385, 0.48, 1.35, 465, 36.33, 27.66, 14.83, 1.04, 4.19, 0.425, 0.101, 0.92, 1, 0.005,
    0.06, 3.5, 2, 1.7, 2547, 0.023, 187.1, 521, 0.785, 10, 3.3, 0.2, 1.41, 529, 207, 85, 0.75,
    62, 6654, 3.5, 6.8, 35, 4.05, 0.12, 0.023, 0.01, 1.4, 250, 2.5, 55.5, 100, 52.16, 10.55,
    0.55, 60, 3.6, 4.288, 0.28, 0.075, 0.122, 0.048, 192, 3, 160, 0.9, 1.62, 0.104, 4.235]
_MAMMAL_BRAIN_G = [
    44.5, 15.5, 8.1, 423, 119.5, 115, 98.2, 5.5, 58, 6.4, 4, 5.7, 6.6, 0.14, 1, 10.8, 12.3,
    6.3, 4603, 0.3, 419, 655, 3.5, 115, 25.6, 5, 17.5, 680, 406, 325, 12.3, 1320, 5712, 3.9,
    179, 56, 17, 1, 0.4, 0.25, 12.5, 490, 12.1, 175, 157, 440, 179.5, 2.4, 81, 21, 39.2, 1.9,
    1.2, 3, 0.33, 180, 25, 169, 2.6, 11.4, 2.5, 50.4]

TABLES = {
    "Theoph 1": ([0, 0.25, 0.57, 1.12, 2.02, 3.82, 5.10, 7.03, 9.05, 12.12, 24.37],
                 [0.74, 2.84, 6.57, 10.50, 9.66, 8.58, 8.36, 7.47, 6.89, 5.94, 3.28]),
    "BOD": ([1, 2, 3, 4, 5, 7], [8.3, 10.3, 19.0, 16.0, 15.6, 19.8]),
    "Kepler": ([0.387, 0.723, 1.0, 1.524, 5.203, 9.537, 19.19, 30.07],
               [0.241, 0.615, 1.0, 1.881, 11.86, 29.46, 84.01, 164.8]),
    "DNase 1": ([0.04882812, 0.04882812, 0.1953125, 0.1953125, 0.390625, 0.390625, 0.78125,
                 0.78125, 1.5625, 1.5625, 3.125, 3.125, 6.25, 6.25, 12.5, 12.5],
                [0.017, 0.018, 0.121, 0.124, 0.206, 0.215, 0.377, 0.374, 0.614, 0.609,
                 1.019, 1.001, 1.334, 1.364, 1.730, 1.710]),
    "pressure": (list(range(0, 361, 20)),
                 [0.0002, 0.0012, 0.0060, 0.0300, 0.0900, 0.2700, 0.7500, 1.8500, 4.2000,
                  8.8000, 17.3000, 32.1000, 57.0000, 96.0000, 157.0000, 247.0000, 376.0000,
                  558.0000, 806.0000]),
    "mammals": (_MAMMAL_BODY_KG, _MAMMAL_BRAIN_G),
}


def _report(name: str, seed: int, model: CADSRRegressor, X, y) -> list[dict]:
    lines = [{"table": name, "seed": seed, "rows": len(y),
              "formula": str(model.sympy(precision=4)), "r2_train": round(model.score(X, y), 4),
              "periodic": bool(model.sympy().atoms(sympy.sin, sympy.cos, sympy.tan))}]
    for r in model.constants_.to_dict("records"):
        if r["fixed"] and math.isfinite(r["fitted_value"]):
            error, gap = r["fitted_std_error"], r["gap"]
            lines.append({"table": name, "seed": seed, "number": r["shown"],
                          "fitted": r["fitted_value"], "std_error": error, "gap": gap,
                          "gap_over_error": gap / error if error > 0 else math.inf})
    return lines


def _fit(X, y, seed: int, max_time: float, n_epochs: int | None) -> CADSRRegressor:
    params = dict(max_time=max_time, n_jobs=1, random_state=seed, device="cpu")
    if n_epochs is not None:
        params.update(n_epochs=n_epochs, batch_size=64, ff_dim=32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small-table advice: expected here
        return CADSRRegressor(**params).fit(X, y)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nist", nargs="*", default=[], help="NIST StRD .dat files")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--max-time", type=float, default=20.0)
    parser.add_argument("--smoke", action="store_true", help="two tables, two epochs")
    args = parser.parse_args(argv)
    n_epochs = 2 if args.smoke else None
    tables = dict(list(TABLES.items())[:2]) if args.smoke else TABLES
    seeds = args.seeds[:1] if args.smoke else args.seeds
    for path in args.nist:
        problem = read_nist(path)
        for seed in seeds:
            model = _fit(problem.X, problem.y, seed, args.max_time, n_epochs)
            for line in _report(problem.name, seed, model, problem.X, problem.y):
                print(json.dumps(line), flush=True)
    for name, (x, y) in tables.items():
        X, y = np.asarray(x, float)[:, None], np.asarray(y, float)
        for seed in seeds:
            X_train, _, y_train, _ = train_test_split(X, y, train_size=0.75, random_state=seed)
            model = _fit(X_train, y_train, seed, args.max_time, n_epochs)
            for line in _report(name, seed, model, X_train, y_train):
                print(json.dumps(line), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
