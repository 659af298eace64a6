"""The HTML report, one self-contained file to share, and the ``cadsr report`` command."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from budgets import TINY  # noqa: E402
from torch.optim.optimizer import register_optimizer_step_pre_hook  # noqa: E402

from cadsr_sklearn import CADSRRegressor  # noqa: E402
from cadsr_sklearn.cli import main  # noqa: E402
from cadsr_sklearn.reporting.html_report import report_html, write_report  # noqa: E402

# Column and target names a browser would run or draw as markup, were they not escaped.
EVIL = "a <script>alert(1)</script>"
TARGET = "T <b>bold</b>"


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0.5, 2.0, size=(n, 2)), columns=[EVIL, "b"])
    y = pd.Series(2.0 * X[EVIL] + X["b"] ** 2, name=TARGET)
    return X, y


@pytest.fixture(scope="module")
def fitted():
    X, y = _data()
    return CADSRRegressor(**TINY).fit(X, y), X, y


@pytest.fixture(scope="module")
def model_file(fitted, tmp_path_factory):
    import joblib

    folder = tmp_path_factory.mktemp("report")
    model, X, y = fitted
    joblib.dump(model, folder / "model.joblib")
    pd.concat([X, y], axis=1).to_csv(folder / "data.csv", index=False)
    return folder / "model.joblib", folder / "data.csv"


class _Page(HTMLParser):
    """A strict reading of the page: every element closed in order; what it holds, collected."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "source", "area", "base"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack, self.tags, self.attrs, self.math = [], [], [], []
        self._in_math = 0
        self.feed(text)
        self.close()
        assert not self.stack, f"unclosed elements: {self.stack}"

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs
        if tag == "math":
            self._in_math += 1
            self.math.append("")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-3:]}"
        self.stack.pop()
        if tag == "math":
            self._in_math -= 1

    def handle_data(self, data):
        if self._in_math:
            self.math[-1] += data


def _rows(table):
    return table if isinstance(table, list) else table.to_dict("records")


def _chosen(model):
    return next(r for r in _rows(model.equations_) if r["selected"])


def _assert_offline(text: str, page: _Page) -> None:
    """Nothing to fetch: no URL at all, no src, only in-page href and url(#…)."""
    assert "http://" not in text and "https://" not in text
    assert "//" not in "".join(v or "" for k, v in page.attrs if k.endswith("href"))
    assert not [k for k, _ in page.attrs if k == "src"]
    assert all((v or "").startswith("#") for k, v in page.attrs if k.endswith("href"))
    assert re.findall(r"url\((?!#)", text) == []
    assert not {"script", "link", "iframe", "img", "object", "embed"} & set(page.tags)
    assert "@import" not in text


# ---------------------------------------------------------------- the page
def test_report_holds_formula_front_constants_and_three_plots(fitted, tmp_path):
    pytest.importorskip("matplotlib")
    model, X, y = fitted
    path = write_report(model, tmp_path / "report.html", X, y, data_name="the training data")
    assert path == tmp_path / "report.html" and path.is_file()
    text = path.read_text(encoding="utf-8")
    page = _Page(text)
    assert text.startswith("<!DOCTYPE html>") and page.tags.index("style") < page.tags.index("body")

    # the chosen formula: typeset (its numbers, the column's own name) and as text
    chosen = _chosen(model)
    assert html.escape(chosen["formula"]) in text
    typeset = page.math[0]
    for number in re.findall(r"\d+\.\d+", chosen["formula"]):
        assert number in typeset, (number, typeset)
    if EVIL in str(model.feature_names_in_) and "a_script" in chosen["formula"]:
        assert EVIL in typeset  # the column name, not its symbol
    # every row of the front, with its loss; one <math> per row besides the chosen one
    rows = _rows(model.equations_)
    for row in rows:
        assert html.escape(row["formula"]) in text
        assert f"{row['loss']:.3e}" in text
    assert len(page.math) == 1 + len(rows)
    # the constants with their intervals
    constants = _rows(model.constants_)
    assert "Constants of the chosen formula" in text
    for c in constants:
        assert f">{c['name']}<" in text and f"{c['value']:.6g}" in text
        if np.isfinite(c["ci_low"]):
            assert f"{c['ci_low']:.6g}" in text and f"{c['ci_high']:.6g}" in text
    # the three plots, inline, and the data they are drawn on named
    assert page.tags.count("svg") == 3 and text.count("<svg") == 3
    assert "on the training data (60 rows)" in text
    # what the search did, and the settings that differ from the defaults
    assert f"<dt>Epochs</dt><dd>{model.n_epochs_}</dd>" in text and model.stop_reason_ in text
    assert text.count('<tr class="changed">') == len(TINY)
    assert text.index(">batch_size<") < text.index(">alpha<")
    _assert_offline(text, page)


def test_the_estimators_report_method_writes_the_same_page(fitted, tmp_path):
    model, X, y = fitted
    by_method = model.report(tmp_path / "a.html", X, y, data_name="the training data")
    by_function = write_report(model, tmp_path / "b.html", X, y, data_name="the training data")
    assert by_method == tmp_path / "a.html"
    # the same page but for the ids the SVG plots draw at random
    def strip(text):
        return re.sub(r'id="[^"]*"|#[0-9a-f]{6,}|url\(#[^)]*\)|href="#[^"]*"', "", text)

    assert strip(by_method.read_text()) == strip(by_function.read_text())


def test_user_text_is_escaped(fitted):
    model, X, y = fitted
    text = report_html(model, X, y, data_name="<i>rows</i>")
    page = _Page(text)
    assert "<script" not in text.lower() and "script" not in page.tags
    assert not {"b", "i"} & set(page.tags)
    for name in (EVIL, TARGET, "<i>rows</i>"):
        assert html.escape(name, quote=False) in text
    assert EVIL in page.math[0]  # escaped in the MathML too, and shown as written


def test_without_data_there_is_no_predicted_vs_true_plot_but_a_note(fitted):
    model, _, _ = fitted
    text = report_html(model)
    _Page(text)
    assert "a model keeps no data" in text
    if "matplotlib" in sys.modules or _has_matplotlib():
        assert text.count("<svg") == 2
    with pytest.raises(ValueError, match="both X and y"):
        report_html(model, X=np.zeros((2, 2)))


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_without_matplotlib_the_report_still_writes(fitted, tmp_path, monkeypatch):
    model, X, y = fitted
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    text = write_report(model, tmp_path / "r.html", X, y).read_text(encoding="utf-8")
    _Page(text)
    assert "<svg" not in text and "matplotlib is not installed" in text
    assert html.escape(_chosen(model)["formula"]) in text


def test_a_model_of_several_outputs_gets_one_section_each():
    pytest.importorskip("matplotlib")
    X, y = _data(40)
    Y = pd.DataFrame({"first": y, "second <2>": X["b"] * 3.0})
    model = CADSRRegressor(**TINY).fit(X, Y)
    text = report_html(model, X, Y)
    page = _Page(text)
    assert "Output 0: first" in text and "Output 1: second &lt;2&gt;" in text
    for estimator in model.estimators_:
        assert html.escape(_chosen(estimator)["formula"]) in text
    assert page.tags.count("svg") == 6
    _assert_offline(text, page)


def test_an_interrupted_search_is_reported():
    steps = []

    def interrupted(optimizer, args, kwargs):  # Ctrl-C in the second epoch's policy update
        steps.append(True)
        if len(steps) == TINY["steps_per_epoch"] + 1:
            raise KeyboardInterrupt

    X, y = _data(40)
    y = y + np.random.default_rng(1).normal(0, 0.1, len(y))  # no formula ends it before
    # torch's hook on every optimizer's step: the policy's, after the epoch's batch was scored
    hook = register_optimizer_step_pre_hook(interrupted)
    try:
        model = CADSRRegressor(**{**TINY, "n_epochs": 5}).fit(X, y)
    finally:
        hook.remove()
    assert model.interrupted_ and model.n_epochs_ == 1
    text = report_html(model, X, y)
    _Page(text)
    assert "Interrupted." in text and "<dd>interrupted (Ctrl-C" in text
    assert "<dt>Epochs</dt><dd>1</dd>" in text


# ---------------------------------------------------------------- the command
def test_cadsr_report_writes_the_page(model_file, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    model, data = model_file
    out = tmp_path / "report.html"
    status = main(["report", str(model), "-o", str(out), "--data", str(data),
                   "--target", TARGET])
    assert status == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip() == f"Wrote the report to {out}"
    text = out.read_text(encoding="utf-8")
    assert text.count("<svg") == 3 and "on data.csv (60 rows)" in text
    assert main(["report", str(model), "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8").count("<svg") == 2
    # the options before the model file: --target takes one column, not the file too
    assert main(["report", "--data", str(data), "--target", TARGET, "-o", str(out),
                 str(model)]) == 0


@pytest.mark.parametrize("args, message", [
    (["report", "{tmp}/missing.joblib"], "missing.joblib: no such file"),
    (["report", "{model}", "--data", "{data}"], "--data and --target go together"),
    (["report", "{model}", "--data", "{data}", "--target", "nope"], "no column 'nope'"),
    (["report", "{model}", "-o", "{tmp}/no/such/folder/r.html"], "does not exist"),
], ids=["missing model", "data without target", "unknown target", "no output folder"])
def test_cadsr_report_errors_are_one_line(model_file, tmp_path, capsys, args, message):
    model, data = model_file
    argv = [a.format(tmp=tmp_path, model=model, data=data) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cadsr: error: ") and message in err[0], err


# ---------------------------------------------------------------- a browser
# Where this is "1" (CI sets it in .ci/run) the browser test must run: without Chromium
# (or matplotlib) it fails instead of skipping, so that CI never passes it unchecked.
REQUIRE_BROWSER = "CADSR_REQUIRE_BROWSER"
INSTALL_CHROMIUM = ".ci/install-chromium"  # as root on Debian or Ubuntu: apt-get install chromium

# Headless, and the network off: every host unresolvable, every request to a dead proxy.
# The browser's own background requests are mostly switched off; those that no flag
# stops are told apart from the page's in _requested_urls.
_CHROMIUM_FLAGS = [
    "--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
    "--hide-scrollbars", "--window-size=1200,2000",
    "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-features=NetworkTimeServiceQuerying",
]
_BROWSER_TIMEOUT = 60  # seconds for each run; one takes about a second

# Run in a copy of the report: what Chromium made of its formulas and plots, written into
# the DOM that --dump-dom prints. Typeset means MathML elements with a size on the page.
_PROBE = """<script>
(() => {
  const drawn = (e) => { const r = e.getBoundingClientRect(); return r.width > 1 && r.height > 1; };
  const math = [...document.getElementsByTagNameNS("http://www.w3.org/1998/Math/MathML", "math")];
  const svg = [...document.getElementsByTagNameNS("http://www.w3.org/2000/svg", "svg")]
    .filter((e) => !e.ownerSVGElement);
  const seen = {
    math: math.length, math_drawn: math.filter(drawn).length,
    math_mathml: math.filter((e) => typeof MathMLElement === "function"
                                    && e instanceof MathMLElement).length,
    svg: svg.length, svg_drawn: svg.filter(drawn).length,
    text: document.body.innerText.trim().length,
  };
  const out = document.createElement("template");
  out.id = "cadsr-probe";
  out.setAttribute("data-seen", JSON.stringify(seen));
  document.documentElement.append(out);
})();
</script>"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium_or_skip() -> str:
    """Chromium's path; without it (or matplotlib) a skip, or a failure where required."""
    missing = None
    if _chromium() is None:
        missing = (f"Chromium is not installed (no chromium on PATH): run {INSTALL_CHROMIUM} "
                   "as root (Debian/Ubuntu), or install it so that chromium is on PATH")
    elif not _has_matplotlib():
        missing = "matplotlib is not installed: the report has no plots to draw"
    if missing is not None:
        if os.environ.get(REQUIRE_BROWSER) == "1":
            pytest.fail(f"{REQUIRE_BROWSER}=1 requires the browser test to run, but {missing}",
                        pytrace=False)
        pytest.skip(missing)
    return _chromium()


def _run_chromium(chromium: str, args: list[str], what: str) -> tuple[str, str]:
    """Run Chromium to the end; its stdout and stderr. A run that hangs fails the test."""
    # its own process group: a browser that hangs (a dialog) is killed with its children
    browser = subprocess.Popen([chromium, *_CHROMIUM_FLAGS, *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = browser.communicate(timeout=_BROWSER_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(browser.pid, signal.SIGKILL)
        browser.communicate()
        pytest.fail(f"Chromium did not finish {what} in {_BROWSER_TIMEOUT} s")
    return out.decode(errors="replace"), err.decode(errors="replace")


# The parameters under which Chromium's net log names a URL asked for.
_URL_PARAMS = ("url", "original_url", "location", "new_url")


def _requested_urls(net_log: Path) -> list[str]:
    """Every URL that Chromium's JSON net log (--log-net-log) shows was asked for by the page.

    Each request (URL_REQUEST_START_JOB, REQUEST_ALIVE, …) and each connection, a
    preconnect's too (HTTP_STREAM_JOB_CONTROLLER), is logged with its URL. Files the page
    reads are not network requests and are not logged. Left out: the browser's own
    background requests that no flag stops (the update check, the account list), which
    no document started (initiator "not an origin") and which belong to no page's network
    partition (no file:// in their network_isolation_key). What a file:// page loads,
    navigates to or fetches has the page's origin "null" as its initiator.
    """
    log = json.loads(net_log.read_text(encoding="utf-8"))
    names = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    urls, browsers_own = set(), set()
    for event in log["events"]:
        params = event.get("params") or {}
        if (names.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params
                and params.get("initiator") == "not an origin"
                and "file://" not in params.get("network_isolation_key", "")):
            browsers_own.add(params["url"])
        urls.update(params[k] for k in _URL_PARAMS if isinstance(params.get(k), str))
    return sorted(urls - browsers_own)


def test_chromium_draws_the_report_with_the_network_off(fitted, tmp_path):
    chromium = _chromium_or_skip()
    from matplotlib import image

    model, X, y = fitted
    page = write_report(model, tmp_path / "report.html", X, y)
    uri = page.resolve().as_uri()
    shot, net_log = tmp_path / "shot.png", tmp_path / "net-log.json"
    _, log = _run_chromium(chromium, [
        f"--user-data-dir={tmp_path / 'profile'}", f"--log-net-log={net_log}",
        f"--screenshot={shot}", uri], "drawing the report")
    assert shot.is_file(), log[-2000:]

    # no request: nothing but the report itself (and data:, about:) was asked for
    assert net_log.is_file(), f"Chromium wrote no net log\n{log[-2000:]}"
    requested = [u for u in _requested_urls(net_log)
                 if u != uri and not u.startswith(("data:", "about:"))]
    assert requested == [], f"the report asked the network for {requested}"

    pixels = image.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1200)
    # not blank: text, tables and plots leave a good share of the page non-white
    inked = float((pixels.min(axis=2) < 0.9).mean())
    assert inked > 0.02 and float(pixels.std()) > 0.05, f"a blank page ({inked:.2%} inked)"
    # the chosen formula's red (its row, the star of the front) is drawn
    red = np.abs(pixels - np.array([0xD6, 0x27, 0x28]) / 255).max(axis=2) < 0.08
    assert red.sum() > 50, f"the chosen formula's red is not drawn ({red.sum()} pixels)"

    # the formulas typeset as MathML and the three plots drawn as SVG, in the DOM as rendered
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE + "\n</body>"),
                     encoding="utf-8")
    dom, log = _run_chromium(chromium, [
        f"--user-data-dir={tmp_path / 'profile-dom'}", "--dump-dom", probe.resolve().as_uri()],
        "rendering the report's DOM")
    found = re.search(r'<template id="cadsr-probe" data-seen="([^"]*)"', dom)
    assert found, f"no DOM from --dump-dom\n{dom[-1000:]}\n{log[-2000:]}"
    seen = json.loads(html.unescape(found[1]))
    n_math = 1 + len(_rows(model.equations_))  # the chosen formula, and each row of the front
    assert seen["math"] == seen["math_mathml"] == seen["math_drawn"] == n_math, \
        f"not {n_math} formulas typeset as MathML: {seen}"
    assert seen["svg"] == seen["svg_drawn"] == 3, f"not 3 plots drawn as SVG: {seen}"
    assert seen["text"] > 500, f"next to no text on the page: {seen}"
