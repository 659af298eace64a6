"""Benchmark suites, the PMLB loader, SRBench metrics and the judge, the runner, ``cadsr bench``."""

from __future__ import annotations

import csv
import gzip
import threading
import time

import numpy as np
import pytest
import sympy
from sympy.polys.polyerrors import HeuristicGCDFailed

from cadsr_sklearn.benchmarks import execution, metrics, results, tasks
from cadsr_sklearn.benchmarks.methods import FitResult, method_unavailable, seconds_to_best
from cadsr_sklearn.benchmarks.metrics import (
    SimplifyTimeout,
    is_symbolic_solution,
    judged_formula,
    model_metrics,
    r2_score,
    round_floats,
    simplified_complexity,
    time_limit,
)
from cadsr_sklearn.benchmarks.peer_formulas import gplearn_to_sympy, operon_to_sympy
from cadsr_sklearn.benchmarks.suites import (
    SUITES,
    TableProblem,
    get_problem,
    get_suite,
    load_dataset,
    read_table,
)
from cadsr_sklearn.cli import main
from cadsr_sklearn.expressions.formula_parser import parse_formula
from cadsr_sklearn.expressions.library import Library
from cadsr_sklearn.user_input import UsageError

x, x1, x2 = sympy.symbols("x x1 x2")
TINY = ["batch_size=64", "n_epochs=2", "ff_dim=64", "max_length=12"]


def slow_expression() -> sympy.Expr:
    """An expression ``sympy.simplify`` needs many seconds for."""
    a, b = sympy.symbols("a b")
    return sum(sympy.sin(k * a + b) ** 3 * sympy.cos(a - k * b) ** 2 for k in range(1, 6))


# ---------------------------------------------------------------- suites
def test_suites_have_the_published_sizes():
    assert [len(get_suite(s)) for s in ("nguyen", "constant", "feynman")] == [12, 8, 20]
    assert get_problem("nguyen-7").name == "Nguyen-7"
    assert get_problem("Constant-3").suite == "constant"
    with pytest.raises(ValueError, match="Unknown suite"):
        get_suite("koza")
    with pytest.raises(ValueError, match="Unknown problem"):
        get_problem("Nguyen-13")


@pytest.mark.parametrize("problem", get_suite("feynman"), ids=lambda p: p.name)
def test_every_feynman_law_can_be_written_with_the_suites_operators(problem):
    # A law the suite's operators cannot write measures nothing: asin and tanh are there
    # for I.26.2, I.30.5 and II.35.21.
    library = Library(len(problem.variables), problem.binary_operators,
                      problem.unary_operators, use_constants=problem.use_constants)
    tree = parse_formula(problem.expression, problem.variables, library)
    X = problem.sample(seed=0, n_train=50).X_train
    np.testing.assert_allclose(tree.evaluate(X), problem.evaluate(X), rtol=1e-9)


def test_sample_is_seeded_in_range_and_noiseless_by_default():
    p = get_problem("Nguyen-7")
    a, b, c = p.sample(seed=3), p.sample(seed=3), p.sample(seed=4)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(a.X_train, c.X_train)
    assert a.X_train.shape == (20, 1) and a.X_test.shape == (1000, 1)
    assert a.X_train.min() >= 0 and a.X_train.max() <= 2
    np.testing.assert_allclose(
        a.y_train, np.log(a.X_train[:, 0] + 1) + np.log(a.X_train[:, 0] ** 2 + 1)
    )
    assert a.truth == p.expression and a.name == "Nguyen-7"


def test_srbench_noise_scale_and_noiseless_test_set():
    p = get_problem("Nguyen-10")
    clean = p.sample(seed=0, n_train=20_000, n_test=100)
    noisy = p.sample(seed=0, noise=0.1, n_train=20_000, n_test=100)
    np.testing.assert_array_equal(clean.X_train, noisy.X_train)  # the same X for every γ
    np.testing.assert_array_equal(clean.y_test, noisy.y_test)  # test set stays noiseless
    sigma = np.std(noisy.y_train - clean.y_train)
    assert sigma == pytest.approx(0.1 * np.sqrt(np.mean(clean.y_train**2)), rel=0.03)
    with pytest.raises(ValueError):
        p.sample(noise=-0.1)


def test_every_builtin_problem_samples_finite_data():
    for suite in SUITES.values():
        for p in suite:
            d = p.sample(seed=0, n_train=50, n_test=10)
            assert np.all(np.isfinite(d.y_train)) and np.all(np.isfinite(d.y_test)), p.name
            assert {str(s) for s in d.truth.free_symbols} <= set(d.feature_names), p.name


# ---------------------------------------------------------------- loader
def write_table(path, names, X, y, sep):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", newline="") as fh:
        w = csv.writer(fh, delimiter=sep)
        w.writerow([*names, "target"])
        w.writerows(np.column_stack([X, y]).tolist())


@pytest.mark.parametrize("suffix,sep", [(".tsv.gz", "\t"), (".tsv", "\t"), (".csv", ",")])
def test_loader_reads_pmlb_formats(tmp_path, suffix, sep):
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, (200, 2))
    y = X[:, 0] * X[:, 1] ** 2
    path = tmp_path / f"feynman_toy{suffix}"
    write_table(path, ["E", "beta"], X, y, sep)
    d = load_dataset(path, formula="E*beta**2", seed=1)
    assert d.feature_names == ("E", "beta") and d.name == "feynman_toy"
    assert len(d.y_train) == 150 and len(d.y_test) == 50
    E, beta = sympy.Symbol("E"), sympy.Symbol("beta")  # plain symbols, not Euler's number
    assert d.truth == E * beta**2
    np.testing.assert_allclose(d.X_train[:, 0] * d.X_train[:, 1] ** 2, d.y_train)
    again = load_dataset(path, seed=1)
    np.testing.assert_array_equal(d.X_train, again.X_train)
    assert again.truth is None


def test_loader_caps_training_rows_and_adds_noise_to_train_only(tmp_path):
    X = np.arange(400.0).reshape(200, 2)
    path = tmp_path / "d.csv"
    write_table(path, ["a", "b"], X, X.sum(1), ",")
    d = load_dataset(path, seed=0, max_train_samples=40, noise=0.01)
    assert len(d.y_train) == 40 and len(d.y_test) == 50
    assert not np.allclose(d.y_train, d.X_train.sum(1))
    np.testing.assert_allclose(d.y_test, d.X_test.sum(1))


def test_loader_errors_are_clear(tmp_path):
    path = tmp_path / "d.csv"
    write_table(path, ["a"], np.ones((3, 1)), np.ones(3), ",")
    with pytest.raises(ValueError, match="no such file"):
        read_table(tmp_path / "missing.tsv")
    with pytest.raises(ValueError, match="no column 'y'"):
        read_table(path, target="y")
    with pytest.raises(ValueError, match="not columns"):
        TableProblem.from_file(path, formula="a + z")
    (tmp_path / "bad.csv").write_text("a,target\n1,x\n")
    with pytest.raises(ValueError, match="non-numeric"):
        read_table(tmp_path / "bad.csv")


# --------------------------------------------------------------- metrics
def test_round_floats_follows_srbench():
    e = round_floats(sympy.Float(0.00009) * x + sympy.Float(1.23456) * x**2, exact=False)
    assert e == sympy.Float(1.235) * x**2
    assert round_floats(x ** sympy.Float(2.0000001)) == x**2  # exact: 2.0 is 2


@pytest.mark.parametrize(
    "model,truth,expected",
    [
        ("x*(x**2 + x + 1)", "x**3 + x**2 + x", True),
        ("x**3 + x**2 + x + 2.5", "x**3 + x**2 + x", True),  # additive constant
        ("3*(x**3 + x**2 + x)", "x**3 + x**2 + x", True),  # multiplicative constant
        ("x**3.0000001 + x**2 + x", "x**3 + x**2 + x", True),  # rounded to 3 decimals
        ("x**3 + x**2 + x + 0.00005*x**5", "x**3 + x**2 + x", True),  # |c| < 1e-4 → 0
        ("1.109*sqrt(x)", "sqrt(1.23*x)", True),
        ("exp(log(x)/2)", "sqrt(x)", True),
        ("exp(x2*log(x1))", "x1**x2", True),  # SymPy's definition of x1**x2
        ("exp(x2*log(x1))", "x1**(x2 + 1)", False),
        ("x**3 + x**2", "x**3 + x**2 + x", False),
        ("0", "x", False),  # the model must not be 0
        ("0.00001*x", "x", False),  # … also after rounding
        ("x*oo", "x", False),  # nan/zoo differences are not constants
        ("nan", "x", False),
    ],
)
def test_symbolic_solution(model, truth, expected):
    assert is_symbolic_solution(sympy.sympify(model), sympy.sympify(truth)) is expected


@pytest.mark.parametrize(
    "model, truth",
    [
        ("log((x + 1)*(x**2 + 1))", "log(x + 1) + log(x**2 + 1)"),  # Nguyen-7 as one log
        ("log(x**3 + x**2 + x + 1)", "log(x + 1) + log(x**2 + 1)"),
        ("log(x*(x + 1.4)*(x + 1.3/x))", "log(x + 1.4) + log(x**2 + 1.3)"),  # Constant-8
        ("x*(x + 1)*(sqrt(x**4) + 1)", "x**4 + x**3 + x**2 + x"),  # sqrt(x**4) = x**2 for real x
    ],
)
def test_symbolic_solution_over_the_reals(model, truth):
    """Equal as functions of a real x, which SRBench's complex symbols cannot see."""
    model, truth = sympy.sympify(model), sympy.sympify(truth)
    assert is_symbolic_solution(model, truth)
    assert not is_symbolic_solution(model, truth, real=False)


@pytest.mark.parametrize(
    "model, truth",
    [
        ("log(x**2)", "2*log(x)"),  # differ for x < 0, where only the model is defined
        ("sqrt(x**2)", "x"),  # |x|
        ("log(x**3 + x + 1)", "log(x + 1) + log(x**2 + 1)"),
    ],
)
def test_symbolic_solution_over_the_reals_is_still_equality(model, truth):
    assert not is_symbolic_solution(sympy.sympify(model), sympy.sympify(truth))


def test_symbolic_solution_over_the_reals_outside_main_thread():
    """The child process that bounds simplification in threads gets the same judge."""
    out = {}
    model = sympy.sympify("log(x**3 + x**2 + x + 1)")
    truth = sympy.sympify("log(x + 1) + log(x**2 + 1)")

    def work():
        out["real"] = is_symbolic_solution(model, truth, timeout=10)
        out["srbench"] = is_symbolic_solution(model, truth, timeout=10, real=False)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert out == {"real": True, "srbench": False}


def test_symbolic_solution_needs_r2_above_half():
    assert is_symbolic_solution(x, x, r2=0.9)
    assert not is_symbolic_solution(x, x, r2=0.4)
    assert not is_symbolic_solution(x, x, r2=float("-inf"))


def test_r2_and_model_metrics():
    y = np.array([1.0, 2.0, 3.0])
    assert r2_score(y, y) == 1.0
    assert r2_score(y, np.array([1.0, np.nan, 3.0])) == -np.inf
    m = model_metrics(x + 1, y, y, truth=x, timeout=5)
    assert m == {
        "r2_test": 1.0, "accuracy_solution": True, "symbolic_solution": True,
        "solved_srbench": True, "exact_test": True, "complexity": 3, "size": 3,
    }
    assert model_metrics(x, y, y + 0.5)["symbolic_solution"] is None
    assert simplified_complexity(sympy.sympify("x*(x + 1.00001) - x**2")) == 1


def test_simplification_time_limit_in_main_thread():
    start = time.perf_counter()
    assert not is_symbolic_solution(slow_expression(), sympy.Symbol("a"), timeout=0.3)
    assert time.perf_counter() - start < 5
    assert simplified_complexity(slow_expression(), timeout=0.3) > 50  # the unsimplified count
    with pytest.raises(SimplifyTimeout):
        with time_limit(0.05):
            time.sleep(1)


def test_a_time_limit_whose_first_alarm_is_lost_still_ends_the_block():
    lost = []
    with pytest.raises(SimplifyTimeout):
        with time_limit(0.05):
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                try:
                    time.sleep(0.01)
                except SimplifyTimeout:
                    if lost:
                        raise
                    lost.append(True)  # as where a gc callback prints "Exception ignored"
    assert lost


def test_simplification_time_limit_outside_main_thread():
    """Threads (Dask workers, joblib threading) cannot use SIGALRM: a child process is used."""
    out = {}

    def work():
        t0 = time.perf_counter()
        out["slow"] = is_symbolic_solution(slow_expression(), sympy.Symbol("a"), timeout=0.3)
        out["slow_time"] = time.perf_counter() - t0
        out["fast"] = is_symbolic_solution(sympy.sympify("x*(x + 1)"), x**2 + x, timeout=5)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(60)
    assert out["slow"] is False and out["fast"] is True
    assert out["slow_time"] < 15


def test_child_process_is_killed_past_its_hard_limit(monkeypatch):
    monkeypatch.setattr(metrics, "_CHILD_GRACE", 0.0)
    assert metrics._in_child("symbolic", x, x, 0.01) is None  # killed before SymPy even loads


# ---------------------------------------------------------------- peers
def test_gplearn_program_to_sympy():
    pytest.importorskip("gplearn")
    from gplearn.functions import _function_map

    program = [
        _function_map["add"], _function_map["mul"], 0, 0.5,
        _function_map["div"], 1, _function_map["sqrt"], 0,
    ]
    assert gplearn_to_sympy(program, [x1, x2]) == 0.5 * x1 + x2 / sympy.sqrt(x1)


def test_operon_string_to_sympy():
    text = "((-0.5) + (2.0 * (v0 ^ 2))) / (sqrt(1 + (v1 ^ 2)) * exp(v1))"
    lam = sympy.Symbol("lambda")
    assert sympy.simplify(
        operon_to_sympy(text, [x, lam])
        - (2 * x**2 - 0.5) / sympy.sqrt(1 + lam**2) / sympy.exp(lam)
    ) == 0


def test_method_availability_messages():
    assert method_unavailable("cadsr") is None
    assert "unknown method" in method_unavailable("pysr")


# ---------------------------------------------------------------- runner
def fake_fit(calls):
    """A fit_method stand-in: the truth itself, instantly, recording each call."""

    def fit(method, data, operators, max_time, seed, params):
        calls.append((data.name, method, seed))
        if params.get("fail"):
            raise RuntimeError("boom")
        if params.get("interrupt") and len(calls) == 2:
            raise KeyboardInterrupt
        return FitResult(data.truth, data.y_train, data.y_test, 0.01, 1, str(data.truth))

    return fit


def tasks_for(n_problems=2, seeds=(0, 1), **params):
    problems = get_suite("nguyen")[:n_problems]
    return tasks.make_tasks(problems, ["cadsr"], seeds, [0.0], 1.0, {"cadsr": params})


def test_runner_appends_rows_and_resumes(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(execution, "fit_method", fake_fit(calls))
    out = tmp_path / "r.csv"
    first = execution.run_tasks(tasks_for(), out)
    assert first.new == 4 and len(calls) == 4 and not first.failed
    assert all(r["symbolic_solution"] and r["r2_test"] == 1.0 for r in first.rows)
    again = execution.run_tasks(tasks_for(), out)
    assert again.new == 0 and again.skipped == 4 and len(calls) == 4 and len(again.rows) == 4
    # lose one row and tear the last line, as a crash would
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:-1]) + lines[-1][:15])
    third = execution.run_tasks(tasks_for(), out)
    assert third.new == 1 and len(calls) == 5
    assert len(results.read_results(out)) == 4 and len(third.rows) == 4


def test_runner_keeps_rows_on_interrupt_and_retries_failures(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(execution, "fit_method", fake_fit(calls))
    out = tmp_path / "r.csv"
    stopped = execution.run_tasks(tasks_for(interrupt=True), out)
    assert stopped.interrupted and stopped.new == 1 and len(results.read_results(out)) == 1
    failed = execution.run_tasks(tasks_for(n_problems=1, seeds=(5,), fail=True), out)
    assert len(failed.failed) == 1 and "boom" in failed.failed[0]["error"]
    resumed = execution.run_tasks(tasks_for() + tasks_for(n_problems=1, seeds=(5,)), out)
    assert resumed.new == 4 and resumed.skipped == 1 and not resumed.failed


def test_parse_seeds():
    assert tasks.parse_seeds(["0-2", "5", "7,9"]) == [0, 1, 2, 5, 7, 9]
    for bad in (["a"], ["3-1"], ["-1"], ["0-"]):
        with pytest.raises(UsageError):
            tasks.parse_seeds(bad)


# ------------------------------------------------------------------- CLI
def test_cli_bench_runs_resumes_and_plots(tmp_path, capsys):
    out = tmp_path / "res.csv"
    argv = [
        "bench", "--problems", "Nguyen-1", "--max-time", "2", "--params", *TINY, "--out", str(out),
    ]
    assert main(argv) == 0
    rows = results.read_results(out)
    assert len(rows) == 1 and rows[0]["method"] == "cadsr" and rows[0]["error"] is None
    assert rows[0]["n_train"] == 20 and rows[0]["truth"] == "x**3 + x**2 + x"
    text = capsys.readouterr().out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in text
    else:
        assert out.with_suffix(".png").stat().st_size > 1000
    assert "symbolic solution %" in text and "Nguyen-1" in text
    assert main([*argv, "--no-plot"]) == 0
    assert "skipped 1 task(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,message",
    [
        (["--suite", "koza"], "unknown suite"),
        (["--problems", "Nguyen-99"], "unknown problem"),
        (["--seeds", "1-x"], "bad --seeds"),
        (["--max-time", "0"], "--max-time"),
        (["--params", "no_such_param=1"], "not a CADSRRegressor parameter"),
        (["--params", "pysr.x=1"], "bad --params"),
        (["--method", "pysr"], "unknown method"),
        (["--backend", "ray"], "unknown --backend"),
        (["--data", "missing.tsv"], "no such file"),
        (["--formula", "x"], "exactly one --data"),
    ],
)
def test_cli_bench_bad_input_is_one_line_and_status_2(tmp_path, capsys, args, message):
    assert main(["bench", *args, "--out", str(tmp_path / "r.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("cadsr: error:") and message in err and "\n" not in err


def test_cli_bench_on_a_data_file(tmp_path, capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(execution, "fit_method", fake_fit(calls))
    X = np.random.default_rng(0).uniform(1, 2, (40, 2))
    path = tmp_path / "toy.tsv"
    write_table(path, ["a", "b"], X, X[:, 0] + X[:, 1], "\t")
    out = tmp_path / "r.csv"
    argv = [
        "bench", "--data", str(path), "--formula", "a + b", "--seeds", "0-1",
        "--out", str(out), "--no-plot",
    ]
    assert main(argv) == 0
    rows = results.read_results(out)
    assert ([r["suite"] for r in rows] == ["file", "file"]
            and all(r["symbolic_solution"] for r in rows))
    assert rows[0]["n_train"] == 30 and rows[0]["n_test"] == 10


# ------------------------------------------------------------- the judge
def test_judged_formula_is_the_formula_the_user_is_shown():
    from cadsr_sklearn import CADSRRegressor

    data = get_problem("Nguyen-8").sample(seed=0)  # sqrt(x): found in the first epoch
    est = CADSRRegressor(batch_size=64, n_epochs=2, ff_dim=64, max_length=12, random_state=0,
                         n_jobs=1).fit(data.X_train, data.y_train)
    shown = est.expression_.xreplace({sympy.Symbol("x0"): x})
    assert judged_formula(est, ["x"]) == shown
    assert judged_formula(est, [x], unsnapped=True, X=data.X_train).free_symbols <= {x}
    with pytest.raises(ValueError, match="pass X"):
        judged_formula(est, [x], unsnapped=True)
    assert judged_formula("x + 1", [x]) == x + 1  # a formula read back from a results file


def test_judged_formula_of_a_peer_is_its_own_export():
    pytest.importorskip("gplearn")
    from gplearn.genetic import SymbolicRegressor

    X = np.random.default_rng(0).uniform(1, 2, (30, 2))
    est = SymbolicRegressor(population_size=50, generations=2, random_state=0).fit(X, X[:, 0])
    assert judged_formula(est, [x1, x2]) == gplearn_to_sympy(est._program.program, [x1, x2])


def test_one_verdict_for_a_run_and_its_rescore(tmp_path):
    """A run and --rescore judge the same formula, so they reach the same verdicts."""
    from cadsr_sklearn.benchmarks.rescore import rescore_results

    out = tmp_path / "r.csv"
    todo = tasks.make_tasks([get_problem("Nguyen-8")], ["cadsr"], [0], [0.0], 2.0,
                            {"cadsr": dict(batch_size=64, n_epochs=2, ff_dim=64, max_length=12)})
    ran = execution.run_tasks(todo, out).rows[0]
    assert ran["error"] is None and ran["model"] and ran["k"] >= 1 and ran["epochs"] >= 1
    rescored = rescore_results(todo, out).rows[0]
    for column in ("symbolic_solution", "solved_srbench", "solved_srbench_unsnapped",
                   "complexity", "accuracy_solution"):
        assert rescored[column] == ran[column], column
    assert results.read_results(out)[0]["model"] == ran["model"]


# --------------------------------------------------------------- presets
def test_recovery_preset_runs_reports_and_resumes(tmp_path, capsys):
    import json

    out = tmp_path / "recovery.csv"
    argv = ["bench", "--preset", "recovery", "--problems", "Nguyen-8", "--seeds", "0",
            "--max-time", "2", "--n-jobs", "1", "--param", "batch_size=64",
            "--params", "n_epochs=2", "ff_dim=64", "max_length=12", "--out", str(out),
            "--no-plot"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    (row,) = results.read_results(out)
    assert row["method"] == "cadsr" and row["error"] is None
    for column in ("solved_srbench", "exact_test", "size", "k", "time_to_best_s", "epochs",
                   "stop", "r2_test_unsnapped", "solved_srbench_unsnapped", "size_unsnapped",
                   "model_unsnapped"):
        assert row[column] is not None, column
    assert "| problem | solved | SRBench | unsnapped | exact |" in text
    summary = json.loads(text.strip().splitlines()[-1])
    assert summary["benchmark"] == "recovery" and summary["max_time"] == 2.0
    assert summary["dsr_published_nguyen_mean"] == 83.6 and "constant_mean_recovery" in summary
    assert main(argv) == 0
    assert "skipped 1 task(s)" in capsys.readouterr().out


def test_variance_preset_sweeps_the_bic_variance(tmp_path, capsys, monkeypatch):
    import json

    calls = []

    def fit(method, data, operators, max_time, seed, params):
        calls.append((params["bic_variance"], operators))
        return FitResult(data.truth, data.y_train, data.y_test, 0.01, 1, "", {"k": 3})

    monkeypatch.setattr(execution, "fit_method", fit)
    out = tmp_path / "variance.csv"
    argv = ["bench", "--preset", "variance", "--problems", "Nguyen-1", "--noise", "0",
            "--out", str(out), "--no-plot"]
    assert main(argv) == 0
    assert sorted(calls) == [("mle", None), ("target", None)]  # CADSR's default operators
    rows = results.read_results(out)
    assert sorted(r["variant"] for r in rows) == ["bic_variance=mle", "bic_variance=target"]
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["benchmark"] == "bic_variance"
    assert summary["mle@0.0"] == {"solved": 1.0, "accurate": 1.0, "median_k": 3, "runs": 1}
    assert main(argv) == 0 and len(calls) == 2  # both variants resumed


def test_plain_params_set_both_cadsr_methods_and_a_named_one_overrides():
    # a plain KEY=VALUE used to reach `cadsr` only: `--method cadsr-units` ran without it
    params = tasks.method_params(["genetic_generations=5", "alpha=2", "cadsr-units.alpha=3"],
                                 ["cadsr", "cadsr-units"])
    assert params["cadsr"] == {"genetic_generations": 5, "alpha": 2}
    assert params["cadsr-units"] == {"genetic_generations": 5, "alpha": 3}
    assert params["gplearn"] == params["operon"] == {}
    with pytest.raises(UsageError, match="not a CADSRRegressor parameter"):
        tasks.method_params(["cadsr-units.no_such=1"])


def test_sweep_variants_multiply_keys():
    variants = tasks.sweep_variants(["a=1", "a=2", "b=x"], lambda items: {"cadsr": items})
    assert variants == {"a=1 b=x": {"cadsr": ["a=1", "b=x"]}, "a=2 b=x": {"cadsr": ["a=2", "b=x"]}}
    made = tasks.make_tasks(get_suite("nguyen")[:1], ["cadsr"], [0], [0.0], 1.0,
                            {"cadsr": {"a": 0, "c": 1}},
                            variants={"a=1": {"cadsr": {"a": 1}}, "a=2": {"cadsr": {"a": 2}}})
    assert [(t.variant, t.params) for t in made] == [("a=1", {"a": 1, "c": 1}),
                                                     ("a=2", {"a": 2, "c": 1})]
    assert len({t.key for t in made}) == 2


# -------------------------------------------------- results files of old versions
OLD_RECOVERY = [
    "problem,seed,solved,solved_srbench,exact_test,r2_test,complexity,time_s,time_to_best_s,"
    "epochs,stop,formula,size,solved_srbench_unsnapped,r2_test_unsnapped,size_unsnapped,"
    "formula_unsnapped",
    "Nguyen-7,0,1,0,1,1.0,16,60.2,30.0,40,max_time,log((x + 1)*(x**2 + 1)),9,0,1.0,9,"
    "log((x + 1)*(x**2 + 1))",
    "Nguyen-7,1,0,0,0,0.99,20,60.0,50.0,42,max_time,x**2,3,0,0.99,3,x**2",
    "Constant-3,0,1,1,1,1.0,11,20.5,20.0,25,tol,sin(3*x1/2)*cos(x2/2),11,0,0.9999,13,"
    "sin(1.4842*x1)*cos(0.47835*x2)",
]


def test_an_old_bench_recovery_file_is_read_and_reported(tmp_path, capsys):
    import importlib.util
    import json
    from pathlib import Path

    path = tmp_path / "recovery.csv"
    path.write_text("\n".join(OLD_RECOVERY) + "\n")
    rows = results.read_results(path)
    assert [(r["suite"], r["method"], r["k"], r["model"]) for r in rows][2] == (
        "constant", "cadsr", 11, "sin(3*x1/2)*cos(x2/2)"
    )
    assert rows[0]["symbolic_solution"] and not rows[0]["solved_srbench"]
    assert rows[0]["accuracy_solution"] and rows[0]["noise"] is None
    assert main(["bench", "--report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "reported as the recovery preset" in text
    assert "| Nguyen-7 | 1/2 | 0/2 | 0/2 | 1/2 | 0.9950 | 18 | 40.0 | max_time 2 | 40–42 |" in text
    summary = json.loads(text.strip().splitlines()[-1])
    assert summary["nguyen_mean_recovery"] == 50.0 and summary["constant_mean_recovery"] == 100.0
    assert summary["dsr_always_problems_at_4_of_5"] == "0/0"
    # perf/compare_snapping.py reads the same files through the same reader
    script = Path(__file__).resolve().parents[1] / "perf" / "compare_snapping.py"
    spec = importlib.util.spec_from_file_location("compare_snapping", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    snapping = module.summary(path)
    assert snapping["fits"] == 3 and snapping["changed"] == [("Constant-3", 0, 0, 1)]
    # a new run does not append to it
    assert main(["bench", "--problems", "Nguyen-1", "--out", str(path)]) == 2
    assert "bench_recovery.py" in capsys.readouterr().err


def test_an_old_bench_variance_file_is_reported(tmp_path, capsys):
    path = tmp_path / "variance.csv"
    path.write_text("problem,seed,noise,variance,solved,r2_test,complexity,epochs,formula\n"
                    "Nguyen-1,0,0.0,mle,1,1.0,11,12,x**3 + x**2 + x\n"
                    "Nguyen-1,0,0.0,target,0,0.58,4,30,sin(x)\n")
    assert main(["bench", "--report", str(path)]) == 0
    text = capsys.readouterr().out
    assert "| 0 | cadsr [bic_variance=target] | 1 | 0 | 0 | 4 |" in text
    assert '"mle@0.0": {"solved": 1.0, "accurate": 1.0, "median_k": 11, "runs": 1}' in text


def test_an_older_bench_file_is_upgraded_when_resumed(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(execution, "fit_method", fake_fit(calls))
    out = tmp_path / "old.csv"
    old_columns = [c for c in results.COLUMNS
                   if c not in ("variant", "solved_srbench", "exact_test", "size", "k")]
    first = tasks_for(n_problems=1, seeds=(0,))
    execution.run_tasks(first, out)
    rows = results.read_results(out)
    with out.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(old_columns)
        writer.writerow(["" if rows[0][c] is None else rows[0][c] for c in old_columns])
    outcome = execution.run_tasks(tasks_for(n_problems=1, seeds=(0, 1)), out)
    assert outcome.skipped == 1 and outcome.new == 1 and len(calls) == 2
    assert out.read_text().splitlines()[0] == ",".join(results.COLUMNS)
    assert len(results.read_results(out)) == 2


# ------------------------------------------------------------------ NIST StRD tables
_DANWOOD = """NIST/ITL StRD
Dataset Name:  DanWood           (DanWood.dat)

Model:         Miscellaneous Class
               2 Parameters (b1 and b2)

               y  = b1*x**b2  +  e


          Starting values                  Certified Values

        Start 1     Start 2           Parameter     Standard Deviation
  b1 =   1           0.7           7.6886226176E-01  1.8281973860E-02
  b2 =   5           4             3.8604055871E+00  5.1726610913E-02

Residual Sum of Squares:                    4.3173084083E-03
Residual Standard Deviation:                3.2853114039E-02

Data:  y              x
      2.138E0        1.309E0
      3.421E0        1.471E0
      3.597E0        1.490E0
      4.340E0        1.565E0
      4.882E0        1.611E0
      5.660E0        1.680E0
"""


@pytest.fixture
def danwood(tmp_path):
    path = tmp_path / "DanWood.dat"
    path.write_text(_DANWOOD)
    return path


def test_a_nist_file_is_read_and_its_certified_fit_reproduced(danwood):
    from cadsr_sklearn.benchmarks.nist import read_nist, refit_certified

    problem = read_nist(danwood)
    assert problem.name == "DanWood" and problem.X.shape == (6, 1)
    assert str(problem.model) == "b1*x**b2" and problem.certified_nodes == 5
    np.testing.assert_allclose(problem.certified, [0.76886226176, 3.8604055871])
    rss = np.sum((problem.predict(problem.certified, problem.X) - problem.y) ** 2)
    np.testing.assert_allclose(rss, problem.certified_rss, rtol=1e-6)
    # from the file's starting values, least squares lands on the certified values
    np.testing.assert_allclose(refit_certified(problem, np.arange(6)), problem.certified,
                               rtol=1e-6)


def test_a_nist_task_runs_end_to_end_and_is_judged(danwood):
    from cadsr_sklearn.benchmarks.nist import read_nist, run_nist_task

    problem = read_nist(danwood)
    params = dict(batch_size=64, n_epochs=2, ff_dim=64, max_length=12, max_time=None)
    row = run_nist_task(problem, "all", seed=0, max_time=30.0, params=params)
    assert row["error"] == "" and row["n_train"] == 6 and row["stop"] == "n_epochs"
    assert row["rss"] == pytest.approx(
        np.sum((sympy.lambdify("x0", row["formula"])(problem.X[:, 0]) - problem.y) ** 2),
        rel=1e-2)
    assert row["passed"] == (row["rss"] <= 1.05 * problem.certified_rss
                             and row["nodes"] <= row["certified_nodes"] + 2)
    held_out = run_nist_task(problem, "holdout", seed=0, max_time=30.0, params=params)
    assert held_out["error"] == "" and held_out["n_train"] + held_out["n_test"] == 6
    assert np.isfinite(held_out["certified_mse_test"])


def test_the_nist_preset_says_which_file_is_missing(tmp_path, capsys):
    missing = str(tmp_path / "Missing.dat")
    assert main(["bench", "--preset", "nist", "--data", missing]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"cadsr: error: {missing}: no such file"


@pytest.mark.parametrize("error", [TypeError("Invalid NaN comparison"), ValueError("too long"),
                                   HeuristicGCDFailed("no luck")])
def test_a_formula_sympy_fails_on_is_judged_as_on_a_time_out(monkeypatch, error):
    # SymPy raises its own exceptions deep in simplify (a NaN comparison in exptrigsimp);
    # the judge must answer "not solved", not abort a benchmark of hundreds of fits
    def fails(*args, **kwargs):
        raise error

    if not metrics.alarm_available():
        pytest.skip("the judge runs in a child process here")
    x = sympy.Symbol("x")
    monkeypatch.setattr(metrics, "symbolic_solution_unbounded", fails)
    monkeypatch.setattr(metrics, "simplified_complexity_unbounded", fails)
    assert metrics.is_symbolic_solution(x + 1, x, timeout=1.0) is False
    assert metrics.simplified_complexity(x + 1, timeout=1.0) == 3


def test_seconds_to_best_is_when_the_final_formula_was_first_written():
    """A refit that moves τ*'s loss in the ninth digit is no new find; a formula of another
    complexity, or a real gain in loss, is."""
    def epoch(time, k, loss):
        return {"time": time, "best_complexity": k, "best_loss": loss}

    refit = 1.1497e-4 * (1 - 1e-9)
    history = [epoch(1.0, 12, 2.0e-4), epoch(2.0, 9, 1.1497e-4), epoch(3.0, 9, refit),
               epoch(4.0, 9, refit)]
    assert seconds_to_best(history, 5.0) == 2.0
    history += [epoch(5.0, 9, 1.14e-4)]  # the same size, a better fit: another formula
    assert seconds_to_best(history, 6.0) == 5.0
    history += [epoch(6.0, 8, 1.14e-4)]  # as close, one node fewer
    assert seconds_to_best(history, 7.0) == 6.0
    assert seconds_to_best([], 7.0) == 7.0
