"""Bad input through fit, predict, score and the ``cadsr`` command.

Every case gets scikit-learn's kind of error (``ValueError``, ``TypeError``,
``InvalidParameterError``, ``NotFittedError``) with a message that says what to
fix, and the command exits 2 with one line on stderr. Nothing crashes deeper
down, hangs, or returns silent garbage. One module, so the count is visible.
"""

import contextlib
import io
import re
import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
import torch
from budgets import TINY
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError

from cadsr_sklearn import CADSRRegressor
from cadsr_sklearn.cli import main

N = 30
_rng = np.random.default_rng(0)
X_GOOD = _rng.uniform(1, 2, size=(N, 2))
Y_GOOD = X_GOOD[:, 0] * X_GOOD[:, 1]


def _with(array, index, value):
    out = np.array(array, dtype=object if isinstance(value, dict) else np.result_type(array, value))
    out[index] = value
    return out


def _frame(**columns):
    pd = pytest.importorskip("pandas")
    return pd.DataFrame(columns)


@pytest.fixture(scope="module")
def fitted():
    return CADSRRegressor(**TINY).fit(X_GOOD, Y_GOOD)


# ------------------------------------------------------------------------ fit
FIT_CASES = {
    "nan in X": (
        lambda: _with(X_GOOD, (0, 0), np.nan), lambda: Y_GOOD, ValueError, "Input X contains NaN",
    ),
    "inf in X": (
        lambda: _with(X_GOOD, (3, 1), np.inf), lambda: Y_GOOD, ValueError,
        "Input X contains infinity",
    ),
    "-inf in X": (
        lambda: _with(X_GOOD, (3, 1), -np.inf), lambda: Y_GOOD, ValueError,
        "Input X contains infinity",
    ),
    "nan in y": (
        lambda: X_GOOD, lambda: _with(Y_GOOD, 5, np.nan), ValueError, "Input y contains NaN",
    ),
    "inf in y": (
        lambda: X_GOOD, lambda: _with(Y_GOOD, 5, np.inf), ValueError, "Input y contains infinity",
    ),
    "1-D X": (
        lambda: X_GOOD[:, 0], lambda: Y_GOOD, ValueError,
        "(?s)Expected 2D array.*Reshape your data",
    ),
    "3-D X": (lambda: X_GOOD[:, :, None], lambda: Y_GOOD, ValueError, "Found array with dim 3"),
    "3-D y": (lambda: X_GOOD, lambda: np.zeros((N, 2, 2)), ValueError, "Found array with dim 3"),
    "X and y lengths differ": (
        lambda: X_GOOD, lambda: Y_GOOD[:-1], ValueError, "inconsistent numbers of samples",
    ),
    "zero rows": (lambda: X_GOOD[:0], lambda: Y_GOOD[:0], ValueError, "0 sample"),
    "zero features": (lambda: X_GOOD[:, :0], lambda: Y_GOOD, ValueError, "0 feature"),
    "complex X": (lambda: X_GOOD + 1j, lambda: Y_GOOD, ValueError, "Complex data not supported"),
    "complex y": (lambda: X_GOOD, lambda: Y_GOOD + 1j, ValueError, "Complex data not supported"),
    "text X": (
        lambda: np.full((N, 2), "a"), lambda: Y_GOOD, ValueError, "X is not numeric.*encode",
    ),
    "object X holding a dict": (
        lambda: _with(X_GOOD.astype(object), (0, 0), {"foo": "bar"}), lambda: Y_GOOD, TypeError,
        "must be a string or a .*number, not 'dict'",
    ),
    "text y": (
        lambda: X_GOOD, lambda: np.array(["a"] * N), ValueError,
        "y must be numeric.*'a'.*to_numeric",
    ),
    "numeric text y": (
        lambda: X_GOOD, lambda: Y_GOOD.astype(str), ValueError,
        "y must be numeric.*astype\\(float\\)",
    ),
    "bytes y": (lambda: X_GOOD, lambda: np.array([b"a"] * N), ValueError, "y must be numeric"),
    "object y holding text": (
        lambda: X_GOOD, lambda: np.array(["a"] * N, dtype=object), ValueError, "y must be numeric",
    ),
    "DataFrame with a text column": (
        lambda: _frame(a=X_GOOD[:, 0], colour=["red", "blue"] * (N // 2)),
        lambda: Y_GOOD, ValueError, r"column\(s\) \['colour'\] of X are not numeric.*OneHotEncoder",
    ),
    "DataFrame with a categorical column": (
        lambda: _frame(
            a=X_GOOD[:, 0], kind=__import__("pandas").Categorical(["u", "v"] * (N // 2))
        ),
        lambda: Y_GOOD, ValueError, r"column\(s\) \['kind'\] of X are not numeric",
    ),
    "sparse X": (
        lambda: sp.csr_matrix(X_GOOD), lambda: Y_GOOD, TypeError, "dense data is required.*toarray",
    ),
    "y too large for squared errors": (
        lambda: X_GOOD, lambda: Y_GOOD * 1e300, ValueError, "overflow float64.*Rescale y.*1e300",
    ),
    "y spread too small for squared errors": (
        lambda: X_GOOD, lambda: Y_GOOD * 1e-300, ValueError, "underflow float64.*Rescale y",
    ),
    "negative sample_weight": (
        lambda: X_GOOD, lambda: Y_GOOD, ValueError,
        "Negative values in data passed to `sample_weight`",
    ),
}


@pytest.mark.parametrize("case", list(FIT_CASES), ids=list(FIT_CASES))
def test_fit_rejects(case):
    make_X, make_y, error, match = FIT_CASES[case]
    weight = -np.ones(N) if case == "negative sample_weight" else None
    with pytest.raises(error, match=match):
        CADSRRegressor(**TINY).fit(make_X(), make_y(), sample_weight=weight)


def test_one_row_and_constant_y_give_the_exact_constant():
    # Neither is an error: one row or a constant target is fitted exactly by y = c.
    one = CADSRRegressor(**TINY).fit(X_GOOD[:1], Y_GOOD[:1])
    assert float(one.expression_) == Y_GOOD[0]
    assert one.stop_reason_ == "constant target"
    np.testing.assert_array_equal(one.predict(X_GOOD[:3]), Y_GOOD[0])
    flat = CADSRRegressor(**TINY).fit(X_GOOD, np.full(N, -2.5))
    assert float(flat.expression_) == -2.5 and flat.score(X_GOOD, np.full(N, -2.5)) == 1.0


def test_numeric_objects_booleans_and_lists_are_accepted():
    model = CADSRRegressor(**TINY).fit(X_GOOD.astype(object), list(Y_GOOD.astype(object)))
    assert np.all(np.isfinite(model.predict(X_GOOD.astype(object))))
    model = CADSRRegressor(**TINY).fit(X_GOOD > 1.5, X_GOOD[:, 0] > 1.5)  # booleans are 0/1
    assert np.all(np.isfinite(model.predict(X_GOOD > 1.5)))


# ---------------------------------------------------------------- predict/score
PREDICT_CASES = {
    "nan": (lambda: _with(X_GOOD, (0, 0), np.nan), ValueError, "Input X contains NaN"),
    "inf": (lambda: _with(X_GOOD, (0, 0), np.inf), ValueError, "Input X contains infinity"),
    "more features": (
        lambda: np.c_[X_GOOD, X_GOOD], ValueError,
        "X has 4 features, but CADSRRegressor is expecting 2",
    ),
    "fewer features": (
        lambda: X_GOOD[:, :1], ValueError, "X has 1 features, but CADSRRegressor is expecting 2",
    ),
    "1-D": (lambda: X_GOOD[0], ValueError, "(?s)Expected 2D array.*Reshape your data"),
    "zero rows": (lambda: X_GOOD[:0], ValueError, "0 sample"),
    "complex": (lambda: X_GOOD + 1j, ValueError, "Complex data not supported"),
    "text": (lambda: np.full((N, 2), "a"), ValueError, "X is not numeric"),
    "sparse": (lambda: sp.csr_matrix(X_GOOD), TypeError, "dense data is required"),
}


@pytest.mark.parametrize("case", list(PREDICT_CASES), ids=list(PREDICT_CASES))
def test_predict_and_score_reject(fitted, case):
    make_X, error, match = PREDICT_CASES[case]
    with pytest.raises(error, match=match):
        fitted.predict(make_X())
    with pytest.raises(error, match=match):
        fitted.score(make_X(), Y_GOOD)


def test_score_rejects_bad_y(fitted):
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        fitted.score(X_GOOD, Y_GOOD[:-1])
    with pytest.raises(ValueError, match="contains NaN"):
        fitted.score(X_GOOD, _with(Y_GOOD, 0, np.nan))


def test_feature_names_must_match_at_predict():
    df = _frame(a=X_GOOD[:, 0], b=X_GOOD[:, 1])
    model = CADSRRegressor(**TINY).fit(df, Y_GOOD)
    with pytest.raises(ValueError, match="same order as they were in fit"):
        model.predict(df[["b", "a"]])
    with pytest.raises(ValueError, match="Feature names unseen at fit time"):
        model.predict(df.rename(columns={"a": "z"}))
    with pytest.raises(ValueError, match=r"column\(s\) \['b'\] of X are not numeric"):
        model.predict(df.assign(b=["x"] * N))


@pytest.mark.parametrize("method", ["predict", "score", "sympy", "latex"])
def test_not_fitted(method):
    args = {"predict": (X_GOOD,), "score": (X_GOOD, Y_GOOD)}.get(method, ())
    with pytest.raises(NotFittedError, match="not fitted yet. Call 'fit'"):
        getattr(CADSRRegressor(), method)(*args)


# ------------------------------------------------------------ hyperparameters
PARAM_CASES = {
    "negative batch_size": (
        {"batch_size": -1}, InvalidParameterError, "'batch_size' parameter.*range \\[1, inf\\)",
    ),
    "zero batch_size": ({"batch_size": 0}, InvalidParameterError, "'batch_size' parameter"),
    "float batch_size": (
        {"batch_size": 10.5}, InvalidParameterError, "'batch_size' parameter.*must be an int",
    ),
    "alpha 0": ({"alpha": 0}, InvalidParameterError, "'alpha' parameter.*range \\(0.0, 100.0\\]"),
    "alpha above 100": (
        {"alpha": 100.5}, InvalidParameterError, "'alpha' parameter.*range \\(0.0, 100.0\\]",
    ),
    "negative alpha": ({"alpha": -5}, InvalidParameterError, "'alpha' parameter"),
    "epsilon 1": ({"epsilon": 1.0}, InvalidParameterError, "'epsilon' parameter.*\\(0.0, 1.0\\)"),
    "nan learning_rate": (
        {"learning_rate": float("nan")}, InvalidParameterError, "'learning_rate' parameter",
    ),
    "zero max_time": ({"max_time": 0}, InvalidParameterError, "'max_time' parameter.*or None"),
    "n_jobs 0": (
        {"n_jobs": 0}, InvalidParameterError, "'n_jobs' parameter.*\\(-inf, -1\\].*\\[1, inf\\)",
    ),
    "max_length 1": ({"max_length": 1}, InvalidParameterError, "'max_length' parameter"),
    "unknown reward": ({"reward": "r2"}, InvalidParameterError, "'reward' parameter.*'bic'"),
    "dct_dim > embedding_dim": (
        {"dct_dim": 12, "embedding_dim": 10}, ValueError,
        "dct_dim=12 must not exceed embedding_dim=10",
    ),
    "n_heads not dividing dct_dim": (
        {"n_heads": 3, "dct_dim": 8}, ValueError, "n_heads=3 must divide .* 8 \\(dct_dim\\)",
    ),
    "n_heads not dividing embedding_dim": (
        {"n_heads": 3, "attention": "standard"}, ValueError,
        "n_heads=3 must divide .* 10 \\(embedding_dim\\)",
    ),
    "unknown unary operator": (
        {"unary_operators": ("sin", "sech")}, ValueError,
        "Unknown unary_operators \\['sech'\\]; choose from",
    ),
    "binary operator as unary": (
        {"unary_operators": ("add",)}, ValueError, "Unknown unary_operators \\['add'\\]",
    ),
    "unknown binary operator": (
        {"binary_operators": ("add", "max")}, ValueError, "Unknown binary_operators \\['max'\\]",
    ),
    "operators as one string": (
        {"unary_operators": "sin"}, InvalidParameterError,
        "'unary_operators' parameter.*array-like",
    ),
    "duplicate operator": (
        {"binary_operators": ("add", "add")}, ValueError, "'add' more than once",
    ),
    "no operators": (
        {"binary_operators": (), "unary_operators": ()}, ValueError,
        "At least one binary or unary operator",
    ),
    "unknown device": ({"device": "tpu"}, ValueError, "Unknown device 'tpu'; use 'auto', 'cpu'"),
    "malformed device": ({"device": "cuda:x"}, ValueError, "Unknown device 'cuda:x'"),
    "device of the wrong type": ({"device": 0}, InvalidParameterError, "'device' parameter"),
}


@pytest.mark.parametrize("case", list(PARAM_CASES), ids=list(PARAM_CASES))
def test_invalid_hyperparameters(case):
    params, error, match = PARAM_CASES[case]
    with pytest.raises(error, match=match):
        CADSRRegressor(**{**TINY, **params}).fit(X_GOOD, Y_GOOD)


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_device_without_cuda(device):
    with pytest.raises(ValueError, match="CUDA is not available"):
        CADSRRegressor(**{**TINY, "device": device}).fit(X_GOOD, Y_GOOD)


# ----------------------------------------------------------------- the command
def _csv(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


GOOD_CSV = "a,b,y\n" + "".join(f"{a},{b},{a * b}\n" for a, b in X_GOOD)
CLI_CASES = {
    "NaN": ("a,y\n1,2\nnan,3\n2,4\n", [],
            "NaN or infinite values \\(data row 2 \\(line 3 of the file\\) column 'a'\\)"),
    "empty cell": ("a,y\n1,2\n,3\n2,4\n", [], "missing, NaN or infinite"),
    "inf": ("a,y\n1,2\n2,inf\n2,4\n", [],
            "infinite values \\(data row 2 \\(line 3 of the file\\) column 'y'\\)"),
    "empty file": ("", [], "the file is empty"),
    "header only": ("a,y\n", [], "header but no data rows"),
    "text column": ("a,y\nred,2\nblue,3\n", [], "non-numeric column\\(s\\) \\['a'\\]"),
    "text target": ("a,y\n1,high\n2,low\n", [], "non-numeric column\\(s\\) \\['y'\\]"),
    "complex numbers": ("a,y\n1+2j,2\n2,3\n", [], "non-numeric column\\(s\\) \\['a'\\]"),
    "no features": ("y\n1\n2\n", [], "no feature columns"),
    "missing target": (GOOD_CSV, ["--target", "z"], "no column 'z'"),
    "y too large": ("a,y\n1,1e300\n2,3e300\n3,2e300\n", [], "overflow float64.*Rescale y"),
    "unknown operator": (GOOD_CSV, ["--unary", "sech"], r"Unknown --unary \['sech'\]"),
    "unknown device": (GOOD_CSV, ["--device", "tpu"], "Unknown device 'tpu'"),
    "missing output folder": (GOOD_CSV, ["--out", "/nonexistent-dir/m.joblib"], "does not exist"),
}


def _run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", list(CLI_CASES), ids=list(CLI_CASES))
def test_cli_fit_rejects(tmp_path, case):
    text, extra, match = CLI_CASES[case]
    argv = ["fit", _csv(tmp_path, "data.csv", text), "--target", "y",
            "--out", str(tmp_path / "m.joblib"), "--epochs", "1", "--batch-size", "16"]
    code, _, err = _run_cli(argv + extra)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cadsr: error:"), err
    assert re.search(match, lines[0]), lines[0]
    assert not (tmp_path / "m.joblib").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cli_cuda_without_cuda(tmp_path):
    argv = ["fit", _csv(tmp_path, "d.csv", GOOD_CSV), "--target", "y", "--device", "cuda", "--out",
            str(tmp_path / "m.joblib")]
    code, _, err = _run_cli(argv)
    assert code == 2 and err.strip() == (
        "cadsr: error: device='cuda' was requested but CUDA is not available here."
    )


def test_cli_predict_and_show_reject(tmp_path, fitted):
    import joblib

    model = str(tmp_path / "m.joblib")
    joblib.dump(fitted, model)
    cases = [
        (["predict", model, _csv(tmp_path, "t.csv", "x0,x1\nred,1\n")], "non-numeric column"),
        (["predict", model, _csv(tmp_path, "n.csv", "x0,x1\n1,nan\n")], "NaN or infinite"),
        (["predict", model, _csv(tmp_path, "w.csv", "x0\n1\n")],
         "1 columns, but the model was fitted on 2"),
        (["predict", model, _csv(tmp_path, "e.csv", "")], "the file is empty"),
        (["predict", _csv(tmp_path, "g.csv", GOOD_CSV), _csv(tmp_path, "g2.csv", GOOD_CSV)],
         "not a saved cadsr model"),
        (["predict", str(tmp_path / "nope.joblib"), _csv(tmp_path, "g3.csv", GOOD_CSV)],
         "no such file"),
        (["show", _csv(tmp_path, "g4.csv", GOOD_CSV)], "not a saved cadsr model"),
    ]
    for argv, match in cases:
        code, _, err = _run_cli(argv)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and match in lines[0], (argv, err)


def test_cli_one_row_is_a_clean_fit_of_the_constant(tmp_path):
    # one row is a constant target: y = 2 exactly, without a search
    argv = ["fit", _csv(tmp_path, "one.csv", "a,y\n1,2\n"), "--target", "y",
            "--out", str(tmp_path / "m.joblib"), "--epochs", "1", "--batch-size", "16"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = _run_cli(argv)
    assert not caught, [str(w.message) for w in caught]
    assert (code, err) == (0, "")
    model = joblib.load(tmp_path / "m.joblib")
    assert model.stop_reason_ == "constant target" and model.expression_ == 2
