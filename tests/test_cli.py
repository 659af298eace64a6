"""The ``cadsr`` command line: demo, fit → show → predict, and one-line errors on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy

pd = pytest.importorskip("pandas")

from cadsr_sklearn import __version__  # noqa: E402
from cadsr_sklearn.cli import main, pendulum_data  # noqa: E402
from cadsr_sklearn.cli.demo import in_names, matches_truth  # noqa: E402

# every search in this module: a couple of tiny epochs on the CPU
TINY = ["--epochs", "2", "--batch-size", "32", "--device", "cpu"]


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory) -> Path:
    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.0, size=(60, 2))
    path = tmp_path_factory.mktemp("data") / "data.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": 2.0 * X[:, 0] + X[:, 1] ** 2}).to_csv(
        path, index=False
    )
    return path


@pytest.fixture(scope="module")
def model_file(data_csv, tmp_path_factory) -> Path:
    """What ``cadsr fit`` saves without ``--out``: model.json, a formula file."""
    folder = tmp_path_factory.mktemp("model")
    here = os.getcwd()
    os.chdir(folder)
    try:
        assert main(["fit", str(data_csv), "--target", "y", *TINY]) == 0
    finally:
        os.chdir(here)
    assert [p.name for p in folder.iterdir()] == ["model.json"]
    return folder / "model.json"


def _load(path):
    from cadsr_sklearn import CADSRRegressor

    return CADSRRegressor.load_formula(path)


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("cadsr: error: ")
    return err[0]


# --------------------------------------------------------------------- demo
def test_demo_prints_formula_front_and_writes_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plots = tmp_path / "plots"
    assert main(["demo", "--plots", str(plots), *TINY]) == 0
    out = capsys.readouterr().out
    for text in (
        "Discovered formula",
        "LaTeX:",
        "Test R²:",
        "Complexity:",
        "Pareto front",
        "Recovered:",
    ):
        assert text in out
    assert sorted(p.name for p in plots.iterdir()) == [
        "learning_curve.png",
        "pareto_front.png",
        "predicted_vs_true.png",
    ]


def test_pendulum_data_is_the_pendulum_law():
    X, T_true, T = pendulum_data(n=50, noise=0.01, seed=1)
    assert X.shape == (50, 2) and T.shape == T_true.shape == (50,)
    np.testing.assert_allclose(T_true, 2 * np.pi * np.sqrt(X[:, 0] / X[:, 1]))
    assert 0 < np.std(T - T_true) < 0.05 * np.sqrt(np.mean(T_true**2))


def test_matches_truth_accepts_rounded_constants_only():
    L, g = sympy.symbols("L g")
    truth = 2 * sympy.pi * sympy.sqrt(L / g)
    assert matches_truth(sympy.Float(6.2811) * sympy.sqrt(L / g), truth)
    assert matches_truth(sympy.Float(6.29) * L ** sympy.Float(0.5) / sympy.sqrt(g), truth)
    assert not matches_truth(sympy.Float(6.2832) * sympy.sqrt(L) / g, truth)
    assert not matches_truth(sympy.Float(5.0) * sympy.sqrt(L / g), truth)


# ------------------------------------------------------- fit, show, predict
def test_fit_saves_a_formula_file_unless_told_to_save_a_pickle(model_file, data_csv, tmp_path,
                                                               capsys):
    import joblib

    from cadsr_sklearn import CADSRRegressor

    assert json.loads(model_file.read_text())["format"] == "cadsr-formula"
    # the help says which file is which
    assert main(["--help"]) == 0
    epilog = " ".join(capsys.readouterr().out.split())
    assert "cadsr fit saves a formula file (model.json" in epilog
    assert "ending .joblib or .pkl saves a pickle" in epilog and "runs code" in epilog
    assert main(["fit", "--help"]) == 0
    assert "default model.json" in " ".join(capsys.readouterr().out.split())
    # a pickle when asked for by name: the whole estimator, which every command reads too
    pickled = tmp_path / "m.pkl"
    assert main(["fit", str(data_csv), "--target", "y", "--out", str(pickled), *TINY]) == 0
    assert f"Saved the model to {pickled} (a pickle" in capsys.readouterr().out
    model = joblib.load(pickled)
    assert isinstance(model, CADSRRegressor)
    loaded = _load(model_file)
    for path in (model_file, pickled):
        assert main(["show", str(path)]) == 0
        assert loaded.equations_["formula"].iloc[0] in capsys.readouterr().out
        preds = tmp_path / "p.csv"
        assert main(["predict", str(path), str(data_csv), "--out", str(preds)]) == 0
        X = pd.read_csv(data_csv)[["a", "b"]]
        np.testing.assert_array_equal(pd.read_csv(preds)["y"], loaded.predict(X))
        assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    # a checkpoint is no model: one line that says what to do with it
    checkpoint = tmp_path / "search.ckpt"
    assert main(["fit", str(data_csv), "--target", "y", "--out", str(tmp_path / "m.json"),
                 "--checkpoint", str(checkpoint), *TINY]) == 0
    capsys.readouterr()
    assert main(["show", str(checkpoint)]) == 2
    assert "a checkpoint of a search, not a model" in _error_line(capsys)


def test_a_corrupted_formula_file_is_one_line_naming_it(model_file, data_csv, tmp_path,
                                                        capsys):
    text = model_file.read_text()
    document = json.loads(text)
    document["outputs"][0]["front"][-1]["loss"] *= 3
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(document))
    assert main(["show", str(broken)]) == 2
    assert f"{broken}: its content is not what was written" in _error_line(capsys)
    (tmp_path / "cut.json").write_text(text[:len(text) // 2])
    assert main(["predict", str(tmp_path / "cut.json"), str(data_csv)]) == 2
    assert "cut.json: not a formula file (not JSON" in _error_line(capsys)


def test_fit_show_predict_round_trip(model_file, data_csv, tmp_path, capsys):
    assert main(["show", str(model_file)]) == 0
    out = capsys.readouterr().out
    assert "Discovered formula" in out and "Pareto front" in out and "Features:   a, b" in out

    preds = tmp_path / "preds.csv"
    assert main(["predict", str(model_file), str(data_csv), "--out", str(preds)]) == 0
    got = pd.read_csv(preds)
    assert list(got.columns) == ["y"] and len(got) == 60  # named after the target (--target y)

    # columns in another order, plus extra ones, still work; output to stdout
    df = pd.read_csv(data_csv)[["y", "b", "a"]]
    shuffled = tmp_path / "shuffled.csv"
    df.to_csv(shuffled, index=False)
    capsys.readouterr()
    assert main(["predict", str(model_file), str(shuffled)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "y"
    np.testing.assert_allclose([float(v) for v in lines[1:]], got["y"])


def test_show_numbers_the_front_as_predict_index_takes_it(model_file, data_csv, tmp_path, capsys):
    assert main(["show", str(model_file)]) == 0
    out = capsys.readouterr().out
    table = out[out.index("  row    k"):].splitlines()[1:]
    model = _load(model_file)
    assert [int(line.split()[0]) for line in table] == list(range(len(model.equations_)))
    last = len(table) - 1
    preds = tmp_path / "last.csv"
    assert main(["predict", str(model_file), str(data_csv), "--index", str(last),
                 "--out", str(preds)]) == 0
    X = pd.read_csv(data_csv)[["a", "b"]]
    np.testing.assert_array_equal(pd.read_csv(preds).iloc[:, 0], model.predict(X, index=last))


def test_show_prints_the_chosen_formulas_constants_with_their_intervals(tmp_path, capsys):
    # 1.366*x0 + 2*x1: a fitted constant, with its error and interval, and one snapped to 2,
    # with what the fit said before; as constants_ has them
    import joblib

    from cadsr_sklearn import CADSRRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 2.5, size=(100, 2))
    y = 1.37 * X[:, 0] + 2 * X[:, 1] + rng.normal(0, 0.05, 100)
    model = CADSRRegressor(n_epochs=4, batch_size=48, ff_dim=32, max_length=14, device="cpu",
                           random_state=0, binary_operators=("mul", "add"),
                           unary_operators=("neg",), use_one=False, max_constants=2,
                           linear_terms=0, unary_edits=0).fit(X, y)  # the paper's loop
    c0, s0 = model.constants_.to_dict("records")
    assert not c0["fixed"] and s0["fixed"]  # the case this test is about
    path = tmp_path / "model.joblib"
    joblib.dump(model, path)
    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Constants of the chosen formula" in out
    assert out.index("Constants of the chosen formula") < out.index("Pareto front")
    lines = {line.split()[0]: line for line in out.splitlines()
             if line.startswith(("  c0 ", "  s0 "))}
    assert lines["c0"].split() == ["c0", c0["shown"], f"{c0['value']:.6g}",
                                   f"{c0['std_error']:.3g}", f"[{c0['ci_low']:.6g},",
                                   f"{c0['ci_high']:.6g}]"]
    assert lines["s0"].split() == ["s0", s0["shown"], f"{s0['value']:.6g}", "fixed",
                                   "fitted", f"{s0['fitted_value']:.6g}",
                                   f"[{s0['fitted_ci_low']:.6g},", f"{s0['fitted_ci_high']:.6g}]",
                                   "±", f"{s0['fitted_std_error']:.3g},", "gap",
                                   f"{s0['gap']:.3g}"]


def test_fit_with_operators_and_plots(data_csv, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "m.joblib"
    code = main(
        [
            "fit",
            str(data_csv),
            "--target",
            "y",
            "--binary",
            "add",
            "mul",
            "--unary",
            "--plots",
            str(tmp_path / "p"),
            "--out",
            str(out),
            *TINY,
        ]
    )
    assert code == 0
    import joblib

    model = joblib.load(out)
    assert tuple(model.binary_operators) == ("add", "mul") and tuple(model.unary_operators) == ()
    assert len(list((tmp_path / "p").glob("*.png"))) == 3


# ----------------------------------------------------------------- bad input
def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    "content, extra, message",
    [
        (None, [], "no such file"),
        ("", [], "empty"),
        ("a,b,y\n", [], "no data rows"),
        ("a,b,z\n1,2,3\n2,3,4\n", [], "no column 'y'"),
        ("a,b,y\n1,x,3\n2,z,4\n", [], "non-numeric column(s) ['b']; leave them out with "
                                       "--drop b, or encode them as numbers"),
        ("a,my city,y\n1,x,3\n2,z,4\n", [], "--drop 'my city'"),
        ("a,b,y\n1,,3\n2,3,4\n", [], "NaN"),
        ("a,b,y\n1,inf,3\n2,3,4\n", [], "infinite"),
        ("y\n1\n2\n", [], "no feature columns"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--binary", "add", "plus"], "Unknown --binary ['plus']"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--unary", "sech"], "Unknown --unary ['sech']"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--unary", "add"], "'add' is a binary operator"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--device", "tpu"], "Unknown device 'tpu'"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--device", "cuda:7"], "cuda:7"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--out", "/no/such/folder/m.joblib"], "does not exist"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--out", "."], "is a folder; give a file name"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--plots", "d.csv"], "--plots takes a folder"),
        ("a,b,y\n1,2,3\n2,3,4\n", ["--out", "new_folder/"], "is a folder; give a file name"),
        ("a,a ,y\n1,2,3\n2,3,4\n", [], "repeated column name(s) ['a']"),
        ("a,a,y\n1,2,3\n2,3,4\n", [], "repeated column name(s) ['a']"),
        (",a,y\n0,1,3\n1,2,4\n", [], "column(s) [1] have no name"),
        (" ,a,y\n0,1,3\n1,2,4\n", [], "column(s) [1] have no name"),
    ],
)
def test_fit_bad_input_is_one_line_and_status_2(tmp_path, capsys, content, extra, message,
                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative output paths land here
    path = str(tmp_path / "missing.csv") if content is None else _write(tmp_path, "d.csv", content)
    code = main(["fit", path, "--target", "y", *extra, "--epochs", "1", "--batch-size", "8"])
    assert code == 2
    assert message in _error_line(capsys)


@pytest.mark.parametrize("content", [
    "a;b;y\n1,5;2;3,25\n2,5;3;5,0\n3,0;1;5,75\n",  # a spreadsheet's European CSV
    'a,b,y\n"1,5",2,"3,25"\n"2,5",3,"5,0"\n"3,0",1,"5,75"\n',  # quoted, comma-separated
])
def test_numbers_with_a_decimal_comma_are_read_as_numbers(tmp_path, content):
    from cadsr_sklearn.cli.tables import numeric, read_table

    path = _write(tmp_path, "d.csv", content)
    df = numeric(read_table(path), path)
    np.testing.assert_array_equal(df.to_numpy(), [[1.5, 2, 3.25], [2.5, 3, 5.0], [3.0, 1, 5.75]])


def test_numbers_that_may_have_thousands_separators_are_refused_not_guessed(tmp_path, capsys):
    path = _write(tmp_path, "d.csv", 'x,price\n1,"1,250"\n2,"2,500"\n3,"12,000"\n')
    assert main(["fit", path, "--target", "price", "--epochs", "1"]) == 2
    assert _error_line(capsys) == (
        f"cadsr: error: {path}: column(s) ['price'] hold numbers such as '1,250', which could "
        "be thousands or decimals; write them without thousands separators, or with a "
        "decimal point")


def test_predict_bad_input(model_file, tmp_path, capsys):
    data = _write(tmp_path, "d.csv", "a,b\n1,2\n")
    assert main(["predict", str(tmp_path / "none.joblib"), data]) == 2
    assert "no such file" in _error_line(capsys)

    junk = _write(tmp_path, "junk.joblib", "not a pickle")
    assert main(["predict", junk, data]) == 2
    assert "not a saved cadsr model" in _error_line(capsys)

    import joblib

    joblib.dump({"a": 1}, tmp_path / "dict.joblib")
    assert main(["show", str(tmp_path / "dict.joblib")]) == 2
    assert "not a fitted CADSRRegressor" in _error_line(capsys)

    only_a = _write(tmp_path, "a.csv", "a\n1\n")
    assert main(["predict", str(model_file), only_a]) == 2
    assert "missing column(s) ['b']" in _error_line(capsys)

    text = _write(tmp_path, "t.csv", "a,b\n1,x\n")
    assert main(["predict", str(model_file), text]) == 2
    assert "non-numeric" in _error_line(capsys)

    assert main(["predict", str(model_file), data, "--out", str(tmp_path)]) == 2
    assert "is a folder; give a file name" in _error_line(capsys)

    # a model that needs a module this machine lacks says which
    broken = tmp_path / "needs.joblib"
    joblib.dump({"a": 1}, broken)
    real_load = joblib.load

    def load_needing_pandas(path, *args, **kwargs):
        if str(path) == str(broken):
            raise ModuleNotFoundError("No module named 'pandas'", name="pandas")
        return real_load(path, *args, **kwargs)

    import unittest.mock

    with unittest.mock.patch("joblib.load", load_needing_pandas):
        assert main(["show", str(broken)]) == 2
    assert "needs the module 'pandas'" in _error_line(capsys)


def test_demo_checks_its_output_paths_before_the_search(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    for argv, message in ((["--plots", str(tmp_path / "file")], "--plots takes a folder"),
                          (["--out", str(tmp_path)], "is a folder; give a file name")):
        assert main(["demo", *argv, *TINY]) == 2
        captured = capsys.readouterr()
        assert message in captured.err and "Searching" not in captured.out


def test_a_real_column_named_like_pandas_placeholders_is_kept(tmp_path, capsys):
    data = _write(tmp_path, "d.csv", "Unnamed: 3,y\n1,2\n2,4\n3,6\n")
    assert main(["fit", data, "--target", "y", "--out", str(tmp_path / "m.joblib"), *TINY]) == 0
    assert "Unnamed: 3" in capsys.readouterr().out


def test_demo_judges_a_fit_on_a_bare_array_in_the_names():
    # Without pandas the demo fits on an array, so the formula comes in x0, x1.
    x0, x1 = sympy.symbols("x0 x1", real=True)
    L, g = sympy.symbols("L g")
    found = in_names(sympy.Float(6.2832) * sympy.sqrt(x0 / x1), ["L", "g"])
    assert {s.name for s in found.free_symbols} == {"L", "g"}
    assert matches_truth(found, 2 * sympy.pi * sympy.sqrt(L / g))


@pytest.mark.parametrize("argv", [["fit", "d.csv"], ["demo", "--max-time", "-1"], ["nonsense"]])
def test_usage_errors_return_2(argv, capsys):
    assert main(argv) == 2
    assert "usage: cadsr" in capsys.readouterr().err


def test_ctrl_c_before_the_first_formula_exits_130(data_csv, tmp_path, capsys, monkeypatch):
    from cadsr_sklearn import CADSRRegressor

    def interrupted(self, X, y):
        raise KeyboardInterrupt

    monkeypatch.setattr(CADSRRegressor, "fit", interrupted)
    assert (
        main(["fit", str(data_csv), "--target", "y", "--out", str(tmp_path / "m.joblib"), *TINY])
        == 130
    )
    assert capsys.readouterr().err.strip() == "cadsr: interrupted"
    assert not (tmp_path / "m.joblib").exists()


def test_bench_is_registered(capsys):
    assert main(["bench", "--help"]) == 0
    assert "usage: cadsr bench" in capsys.readouterr().out


# ---------------------------------------------------- entry points (processes)
def test_python_m_and_console_script():
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    done = subprocess.run(
        [sys.executable, "-m", "cadsr_sklearn", "--version"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and __version__ in done.stdout
    script = Path(sys.executable).with_name("cadsr")
    if not script.exists():
        pytest.skip("the cadsr console script is not installed next to this Python")
    done = subprocess.run(
        [str(script), "fit", "no-such.csv", "--target", "y"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == "cadsr: error: no-such.csv: no such file"


# ------------------------------------------------------------- argument order and options
@pytest.mark.parametrize("order", ["file last", "--data", "file first"])
def test_the_data_file_can_follow_an_operator_list(data_csv, tmp_path, capsys, order):
    out = str(tmp_path / "m.joblib")
    ops = ["--unary", "sin", "cos"]
    argv = {"file last": ["fit", *ops, str(data_csv)],
            "--data": ["fit", *ops, "--data", str(data_csv)],
            "file first": ["fit", str(data_csv), *ops]}[order]
    assert main([*argv, "--target", "y", "--out", out, *TINY]) == 0
    import joblib

    assert tuple(joblib.load(out).unary_operators) == ("sin", "cos")


def test_no_data_file_says_where_to_put_it(capsys):
    assert main(["fit", "--unary", "sin", "cos", "--target", "y", *TINY]) == 2
    assert "give it first" in _error_line(capsys)


def test_fit_options_people_reach_for(data_csv, tmp_path, capsys):
    out = str(tmp_path / "m.joblib")
    code = main(["fit", str(data_csv), "--target", "y", "--out", out, "--columns", "a", "b",
                 "--drop", "b", "--n-epochs", "2", "--batch-size", "32", "--patience", "5",
                 "--n-jobs", "1", "--validation", "0.25", "--param", "snap_constants=False",
                 "--param", "alpha=10", "--device", "cpu"])
    assert code == 0
    text = capsys.readouterr().out
    assert "Held-out R²" in text and "15 held out" in text
    import joblib

    model = joblib.load(out)
    assert list(model.feature_names_in_) == ["a"]
    assert (model.n_epochs, model.batch_size, model.patience, model.n_jobs) == (2, 32, 5, 1)
    assert model.snap_constants is False and model.alpha == 10


def test_fit_from_the_papers_settings(data_csv, tmp_path):
    out = str(tmp_path / "m.joblib")
    code = main(["fit", str(data_csv), "--target", "y", "--out", out, "--paper", "--n-epochs",
                 "2", "--batch-size", "32", "--param", "ff_dim=32", "--device", "cpu"])
    assert code == 0
    import joblib

    model = joblib.load(out)
    assert model.learning_rate == 1e-4 and model.prune is False  # the paper's
    assert (model.n_epochs, model.batch_size) == (2, 32)  # the options given win


@pytest.mark.parametrize("extra, message", [
    (["--param", "nope=1"], "not a CADSRRegressor parameter"),
    (["--param", "alpha"], "expected KEY=VALUE"),
    (["--param", "alpha=-1"], "alpha"),
    (["--columns", "zz"], "no column 'zz'"),
    (["--columns", "a", "y"], "is the target"),
])
def test_fit_option_errors_are_one_line(data_csv, capsys, extra, message):
    assert main(["fit", str(data_csv), "--target", "y", *extra, *TINY]) == 2
    assert message in _error_line(capsys)


def test_predict_keeps_the_input_columns_and_takes_a_front_row(model_file, data_csv, tmp_path,
                                                                capsys):
    out = tmp_path / "p.csv"
    assert main(["predict", str(model_file), str(data_csv), "--keep-columns", "--index", "0",
                 "--out", str(out)]) == 0
    table = pd.read_csv(out)
    # the target's own column holds its true values: the predictions go beside it
    assert list(table.columns) == ["a", "b", "y", "y_predicted"]
    model = _load(model_file)
    np.testing.assert_allclose(table["y_predicted"], model.predict(table[["a", "b"]], index=0))


def test_column_names_that_are_no_symbols_are_mapped_and_shown(tmp_path, capsys):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"force [N]": rng.uniform(1, 2, 40), "area [m2]": rng.uniform(1, 2, 40)})
    df["p"] = df["force [N]"] / df["area [m2]"]
    path, out = tmp_path / "u.csv", tmp_path / "u.joblib"
    df.to_csv(path, index=False)
    assert main(["fit", str(path), "--target", "p", "--out", str(out), *TINY]) == 0
    text = capsys.readouterr().out
    assert "force_N = 'force [N]'" in text and "area_m2 = 'area [m2]'" in text
    import joblib

    model = joblib.load(out)
    assert model.symbol_names_ == ["force_N", "area_m2"]
    sympy.sympify(str(model.expression_))  # the text parses back
    assert model.expression_.free_symbols <= set(sympy.symbols("force_N area_m2"))
    for index, equation in enumerate(model.equations_["equation"]):  # each as latex shows it
        latex = model.latex(index=index)
        for symbol, column in (("force_N", r"\text{force [N]}"), ("area_m2", r"\text{area [m2]}")):
            assert (column in latex) == (sympy.Symbol(symbol) in equation.free_symbols), latex


def test_a_nan_names_the_data_row_and_the_file_line(tmp_path, capsys):
    path = _write(tmp_path, "d.csv", "a,b,y\n1,2,3\n2,3,4\n4,,5\n")
    assert main(["fit", path, "--target", "y", *TINY]) == 2
    assert "data row 3 (line 4 of the file) column 'b'" in _error_line(capsys)


@pytest.mark.parametrize("took, said", [(42.0, True), (0.2, False)])
def test_the_one_time_compile_is_counted_apart_and_said_when_it_took_a_while(
        monkeypatch, capsys, took, said):
    from cadsr_sklearn.scoring import levenberg_marquardt
    from cadsr_sklearn.cli import commands

    import itertools

    clock = itertools.chain([100.0], itertools.repeat(100.0 + took))  # before, then after
    monkeypatch.setattr(commands.time, "perf_counter", lambda: next(clock))
    calls = []
    monkeypatch.setattr(levenberg_marquardt, "warm_up", lambda: calls.append(1))
    commands.compile_kernels()
    out = capsys.readouterr().out
    assert calls == [1]
    assert (out == "  Compiled the numerical kernels in 42 s (once per machine; not part of "
                   "the search's time).\n") if said else out == ""


def test_fit_takes_required_features_nesting_limits_and_operator_complexity(data_csv, tmp_path):
    out = str(tmp_path / "m.joblib")
    code = main(["fit", str(data_csv), "--target", "y", "--out", out, "--require", "b",
                 "--nested", "sin:cos=0", "exp:exp=1", "--complexity", "sin=3", "pow=2", *TINY])
    assert code == 0
    import joblib

    model = joblib.load(out)
    assert model.required_features == ["b"]
    assert model.nested_constraints == {"sin": {"cos": 0}, "exp": {"exp": 1}}
    assert model.operator_complexity == {"sin": 3, "pow": 2}
    b = model.feature_names_in_.tolist().index("b")
    for row in model.pareto_front_:
        assert b in {row.expression.library[t].feature for t in row.expression.tokens}


@pytest.mark.parametrize("extra, message", [
    (["--nested", "sin=0"], "OUTER:INNER=N"),
    (["--complexity", "sin=0"], "OP=N"),
    (["--require", "zz"], "'zz' is not a column of X"),
    (["--nested", "sin:nope=0"], "'nope' below 'sin'"),
])
def test_limit_option_errors_are_one_line(data_csv, capsys, extra, message):
    assert main(["fit", str(data_csv), "--target", "y", *extra, *TINY]) == 2
    assert message in _error_line(capsys)


def test_show_a_model_of_several_outputs(tmp_path, capsys):
    import joblib

    from cadsr_sklearn import CADSRRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.uniform(1, 2, 50), "b": rng.uniform(1, 2, 50)})
    Y = pd.DataFrame({"p": X.a * X.b, "q": 2 * X.b})
    model = CADSRRegressor(n_epochs=2, batch_size=32, device="cpu", random_state=0).fit(X, Y)
    for path in (tmp_path / "model.joblib", tmp_path / "model.json"):
        if path.suffix == ".json":
            model.save_formula(path)
        else:
            joblib.dump(model, path)
        capsys.readouterr()
        assert main(["show", str(path)]) == 0
        out = capsys.readouterr().out
        assert "=== Output 0: p ===" in out and "=== Output 1: q ===" in out
        assert out.count("Pareto front") == 2 and out.count("Features:") == 1
