"""Formula files: a fitted model as JSON that is data, read back without running code."""

from __future__ import annotations

import json
import pickle

import joblib
import numpy as np
import pytest
import sympy
from budgets import SMALL, TINY

from cadsr_sklearn import CADSRRegressor, register_operator
from cadsr_sklearn.expressions.custom_operators import unregister_operator

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"m": rng.uniform(1, 2, 80), "v": rng.uniform(1, 2, 80)})
    y = pd.Series(0.5 * X.m * X.v ** 2 + rng.normal(0, 0.01, 80), name="E")
    return X, y


@pytest.fixture(scope="module")
def model(data):
    X, y = data
    return CADSRRegressor(**{**TINY, "n_epochs": 5, "batch_size": 64},
                          guesses=["0.5*m*v*v"]).fit(X, y, X_units={"m": "kg", "v": "m/s"},
                                                      y_units="J")


def _round_trip(model, tmp_path):
    path = tmp_path / "model.json"
    assert model.save_formula(path) == path
    return CADSRRegressor.load_formula(path)


def _assert_same(a, b, X):
    (y, std), (y2, std2) = a.predict(X, return_std=True), b.predict(X, return_std=True)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(std, std2)
    assert str(a) == str(b)
    assert a.sympy() == b.sympy() and a.latex() == b.latex()
    assert a.get_params() == b.get_params()


def test_a_loaded_formula_file_predicts_prints_and_exports_as_the_model(model, data, tmp_path):
    X, _ = data
    loaded = _round_trip(model, tmp_path)
    _assert_same(model, loaded, X)
    assert loaded.units_ == model.units_ == "J"
    assert list(loaded.feature_names_in_) == ["m", "v"] and loaded.target_names_ == ["E"]
    # every front row: its formula, tree, constants and their intervals
    for a, b in zip(model.front_rows_, loaded.front_rows_):
        assert (a.equation, a.formula) == (b.equation, b.formula)
        assert a.expression.key == b.expression.key
        assert a.constants.form == b.constants.form
    assert model.constants_.equals(loaded.constants_)
    assert model.equations_.drop(columns=["expression"]).equals(
        loaded.equations_.drop(columns=["expression"]))
    assert [g.record()["guess"] for g in loaded.guesses_] == ["0.5*m*v*v"]
    assert loaded.history_ == model.history_
    np.testing.assert_array_equal(loaded.export("numpy")(X.to_numpy()), model.predict(X))
    assert loaded.export("c") == model.export("c")
    # a rule of model_selection chosen after loading, as after the fit
    for rule in ("accuracy", "score"):
        assert (loaded.set_params(model_selection=rule).expression_
                == model.set_params(model_selection=rule).expression_)
    model.set_params(model_selection="reward")


def test_the_report_of_a_loaded_model(model, data, tmp_path):
    X, y = data
    page = _round_trip(model, tmp_path).report(tmp_path / "report.html", X, y)
    assert "<math" in page.read_text() and "<svg" in page.read_text()


def test_several_outputs_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.uniform(1, 2, size=(50, 2))
    Y = np.column_stack([X[:, 0] * X[:, 1], 2 * X[:, 0]])
    model = CADSRRegressor(**TINY).fit(X, Y)
    loaded = _round_trip(model, tmp_path)
    _assert_same(model, loaded, X)
    assert len(loaded.estimators_) == 2 and loaded.n_outputs_ == 2
    assert loaded.history_ == model.history_


def test_a_fit_with_asin_finds_it_and_its_file_reads_back(tmp_path):
    X = np.random.default_rng(0).uniform(-1.99, 1.99, size=(100, 1))
    y = np.arcsin(X[:, 0] / 2)
    model = CADSRRegressor(**SMALL, n_epochs=40, unary_operators=["asin"]).fit(X, y)
    assert sympy.simplify(model.sympy() - sympy.asin(sympy.Symbol("x0") / 2)) == 0
    loaded = _round_trip(model, tmp_path)
    _assert_same(model, loaded, X)
    beyond = np.array([[-2.5], [-1.5], [0.3], [1.5], [2.5]])  # NaN beyond |x0| = 2
    np.testing.assert_array_equal(loaded.predict(beyond), model.predict(beyond))
    np.testing.assert_allclose(loaded.export("numpy")(beyond),
                               [np.nan, *np.arcsin(beyond[1:4, 0] / 2), np.nan], rtol=1e-14)


def test_the_file_is_strict_json_with_a_schema_version(model, tmp_path):
    path = model.save_formula(tmp_path / "model.json")
    def refuse(name):
        raise ValueError(name)
    document = json.loads(path.read_text(), parse_constant=refuse)  # no NaN or Infinity
    assert document["format"] == "cadsr-formula" and document["schema_version"] == 2
    row = document["outputs"][0]["front"][0]
    assert {"formula", "tree", "constants", "uncertainty", "complexity", "loss",
            "criterion", "probes"} <= set(row)
    assert document["checksum"].startswith("sha256:")
    # every row is checked where its tree, SymPy form and text agree
    assert all(len(r["probes"]) == 4 for r in document["outputs"][0]["front"])
    assert document["outputs"][0]["units"]["target_label"] == "J"


def test_a_custom_operator_is_loaded_by_its_registered_name_only(tmp_path):
    gauss = register_operator("gauss", lambda a: np.exp(-a * a),
                              lambda a: -2 * a * np.exp(-a * a), lambda a: sympy.exp(-a**2))
    try:
        rng = np.random.default_rng(2)
        X = rng.uniform(-2, 2, size=(60, 1))
        model = CADSRRegressor(**TINY, unary_operators=("sin", "gauss")).fit(X, np.exp(-X[:, 0]**2))
        path = model.save_formula(tmp_path / "model.json")
        _assert_same(model, CADSRRegressor.load_formula(path), X)
        # an operator given as an object is written by its name
        model.set_params(unary_operators=("sin", gauss)).save_formula(path)
        assert CADSRRegressor.load_formula(path).unary_operators == ("sin", "gauss")
    finally:
        unregister_operator("gauss")
    with pytest.raises(ValueError, match=r"Unknown unary_operators \['gauss'\].*register"):
        CADSRRegressor.load_formula(path)


def test_pickles_and_other_files_are_refused_unread(model, tmp_path):
    joblib.dump(model, tmp_path / "model.joblib")
    joblib.dump(model, tmp_path / "model.joblib.z", compress=3)
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(model))
    for name in ("model.joblib", "model.joblib.z", "model.pkl"):
        with pytest.raises(ValueError, match="not a formula file .*refused unread"):
            CADSRRegressor.load_formula(tmp_path / name)
    deep = '{"node": "exp", "args": [' * 100_000 + '{"symbol": "m"}' + ']}' * 100_000
    (tmp_path / "deep.json").write_text(deep)
    with pytest.raises(ValueError, match="not a formula file"):
        CADSRRegressor.load_formula(tmp_path / "deep.json")
    (tmp_path / "other.json").write_text('{"a": 1}')
    with pytest.raises(ValueError, match="not a formula file"):
        CADSRRegressor.load_formula(tmp_path / "other.json")


def _edited(model, tmp_path, edit, seal: bool = False) -> str:
    """The model's formula file, edited; its checksum removed (as to load an edit made on
    purpose), so that the file's own checks are what refuses it, unless ``seal``."""
    path = model.save_formula(tmp_path / "model.json")
    document = json.loads(path.read_text())
    edit(document)
    if not seal:
        document.pop("checksum")
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(schema_version=3), "reads schema 2 and earlier"),
    (lambda d: d["outputs"][0].pop("front"), "not a valid formula file .*no field 'front'"),
    (lambda d: d["outputs"][0]["front"][0]["tree"].update(tokens=["add"]),
     "do not form one complete tree"),
    (lambda d: d["outputs"][0]["front"][0].update(
        equation={"node": "__import__", "args": []}), "unknown formula node '__import__'"),
    (lambda d: d["outputs"][0]["front"][0].update(loss="1e-3"), "is not a number"),
    (lambda d: d["settings"].update(no_such_parameter=1), "no_such_parameter"),
    (lambda d: d["settings"].update(model_selection="best"), "settings are not this version"),
    (lambda d: d["outputs"][0]["front"][0].update(digits=10**9), "digits is 1000000000"),
    (lambda d: d["outputs"][0]["front"][0].update(equation={"symbol": "__import__('os')"}),
     "row 0: a formula holds the symbol"),
    (lambda d: d["outputs"][0]["front"][0].update(formula="__import__('os').getcwd()"),
     "row 0 .*its formula cannot be evaluated to check it"),
    (lambda d: d["outputs"][0]["front"][1]["constants"]["fixed"][0].update(index=4095)
     if d["outputs"][0]["front"][1]["constants"]["fixed"] else d.update(schema_version=3),
     "index is 4095|reads schema 2"),
    (lambda d: d["outputs"][0]["units"]["features"][1].__setitem__(0, 7.0),
     "units do not fit its formula"),
    (lambda d: d["outputs"][0]["front"][0].pop("probes"), "row 0: it has no field 'probes'"),
])
def test_a_malformed_file_is_a_clear_error(model, tmp_path, edit, message):
    path = _edited(model, tmp_path, edit)
    with pytest.raises(ValueError, match=message) as refused:
        CADSRRegressor.load_formula(path)
    assert str(refused.value).startswith(f"{path}: ")


def _chosen_row(document) -> tuple[int, dict]:
    output = document["outputs"][0]
    i = output["selections"]["criterion"]
    return i, output["front"][i]


def test_a_file_whose_parts_disagree_is_refused_naming_the_row(model, data, tmp_path):
    X, _ = data
    i, row = _chosen_row(json.loads(model.save_formula(tmp_path / "m.json").read_text()))
    assert row["tree"]["constants"], "the case this test is about: a tree with constants"

    def tripled(document):  # the chosen tree's constants tripled, as corruption might
        _, row = _chosen_row(document)
        row["tree"]["constants"] = [3 * c for c in row["tree"]["constants"]]
        row["uncertainty"]["values"] = row["tree"]["constants"]

    # the tree no longer predicts what its formula shows (checked before the checksum,
    # so that the message names the row; without the checksum, the same)
    for seal in (True, False):
        path = _edited(model, tmp_path, tripled, seal=seal)
        with pytest.raises(ValueError, match=rf"^{path}: output 0, row {i} \(.*\): its parts "
                                             r"disagree at the probe point \(m=.*, v=.*\)"):
            CADSRRegressor.load_formula(path)
    # a change no row's parts show: the checksum
    with pytest.raises(ValueError, match=f"^{path}: its content is not what was written: its "
                                         "checksum does not match"):
        CADSRRegressor.load_formula(_edited(
            model, tmp_path, lambda d: _chosen_row(d)[1].update(loss=1.0), seal=True))
    # so does a text, or a SymPy form, that no longer shows the tree
    for edit in (lambda d: _chosen_row(d)[1].update(formula="0.4*m*v**2"),
                 lambda d: _chosen_row(d)[1].update(equation={"node": "Mul", "args": [
                     {"symbol": "m"}, {"symbol": "v"}]})):
        with pytest.raises(ValueError, match=f"row {i} .*disagree"):
            CADSRRegressor.load_formula(_edited(model, tmp_path, edit))


def test_an_edit_that_keeps_the_parts_agreeing_loads_without_the_checksum(model, data,
                                                                          tmp_path):
    X, _ = data
    rename = lambda d: d["outputs"][0].update(target="kinetic_energy")  # noqa: E731
    with pytest.raises(ValueError, match="checksum does not match.*remove its \"checksum\""):
        CADSRRegressor.load_formula(_edited(model, tmp_path, rename, seal=True))
    loaded = CADSRRegressor.load_formula(_edited(model, tmp_path, rename))
    assert loaded.target_names_ == ["kinetic_energy"]
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_a_file_of_schema_1_is_still_read(model, data, tmp_path):
    X, _ = data

    def schema_1(document):  # as written before probe points and checksums
        document["schema_version"] = 1
        for output in document["outputs"]:
            for row in output["front"] + output["guesses"]:
                del row["probes"]

    loaded = CADSRRegressor.load_formula(_edited(model, tmp_path, schema_1))
    _assert_same(model, loaded, X)


def test_the_command_line_saves_and_reads_formula_files(tmp_path, capsys):
    from cadsr_sklearn.cli import main

    rng = np.random.default_rng(3)
    X = rng.uniform(0.5, 2.0, size=(60, 2))
    data = tmp_path / "data.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": 2.0 * X[:, 0] + X[:, 1] ** 2}).to_csv(
        data, index=False)
    model = tmp_path / "model.json"
    tiny = ["--epochs", "2", "--batch-size", "32", "--device", "cpu"]
    assert main(["fit", str(data), "--target", "y", "--out", str(model), *tiny]) == 0
    assert json.loads(model.read_text())["format"] == "cadsr-formula"
    loaded = CADSRRegressor.load_formula(model)
    capsys.readouterr()
    assert main(["show", str(model)]) == 0
    chosen = loaded.equations_.loc[loaded.equations_["selected"], "formula"].item()
    assert chosen in capsys.readouterr().out
    preds = tmp_path / "preds.csv"
    assert main(["predict", str(model), str(data), "--out", str(preds)]) == 0
    np.testing.assert_array_equal(pd.read_csv(preds)["y"].to_numpy(),
                                  loaded.predict(pd.DataFrame(X, columns=["a", "b"])))
    assert main(["report", str(model), "-o", str(tmp_path / "r.html")]) == 0
    (tmp_path / "bad.json").write_text('{"format": "cadsr-formula", "schema_version": 7}')
    capsys.readouterr()
    assert main(["show", str(tmp_path / "bad.json")]) == 2
    assert "reads schema 2" in capsys.readouterr().err
