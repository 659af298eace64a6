"""A/B of the constant-subtree rule in a library without ``c``: Koza operators plus the literal 1.

Run with the package version to test on the path, e.g. before and after a change of
``constraints.constant_subtree_rule``; writes one tab-separated line per fit (version, problem,
seed, solved by SRBench's judge, seconds, formula):

    PYTHONPATH=/path/to/checkout python docs/experiments/policy_options/ab_mask.py label out.tsv
"""

import os
import sys

from joblib import Parallel, delayed

PROBLEMS = ["Nguyen-5", "Nguyen-7", "Nguyen-8", "Nguyen-12"]


def one(label: str, name: str, seed: int) -> tuple:
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch

    torch.set_num_threads(1)
    from cadsr_sklearn import CADSRRegressor
    from cadsr_sklearn.benchmarks import get_problem
    from cadsr_sklearn.benchmarks.metrics import judged_formula, symbolic_verdicts

    problem = get_problem(name)
    data = problem.sample(seed=seed)
    model = CADSRRegressor(max_time=30, random_state=seed, device="cpu", n_jobs=1,
                           binary_operators=problem.binary_operators,
                           unary_operators=problem.unary_operators,
                           use_constants=False, use_one=True).fit(data.X_train, data.y_train)
    r2 = model.score(data.X_test, data.y_test)
    formula = judged_formula(model, problem.symbols)
    solved = symbolic_verdicts(formula, problem.expression, r2=r2)[1]
    return label, name, seed, int(solved), round(model.history_[-1]["time"], 1), str(formula)


if __name__ == "__main__":
    label, out = sys.argv[1], sys.argv[2]
    tasks = [(n, s) for n in PROBLEMS for s in range(3)]
    with open(out, "w") as fh:
        for row in Parallel(n_jobs=2, return_as="generator_unordered")(
                delayed(one)(label, n, s) for n, s in tasks):
            print(*row, sep="\t", file=fh, flush=True)
