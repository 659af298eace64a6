"""Hostile files: a seeded fuzzer of formula files and checkpoints (issue 59).

It fits tiny models, writes two formula files and a checkpoint, and loads mutants of them:
bytes flipped, set, inserted, deleted, duplicated, zeroed, files truncated; in a formula
file's JSON, one to three values changed (numbers, types, strings, keys removed or added,
lists cut, grown, swapped or tripled, deep nesting), its checksum then left stale,
recomputed (an edit made on purpose) or removed. Each load must end one of two ways:

* ``consistent``: the model predicts, prints (``cadsr show`` too) and shows its formulas,
  and every row's shown formula (the SymPy form as shown, and the text of ``equations_``)
  predicts what ``predict`` returns for that row on the training rows (to the display's
  1e-3, with room), NaN where it is NaN; a checkpoint holds exactly the search written;
* ``refused``: one ``ValueError`` whose message names the file.

Anything else is a hole: ``inconsistent`` (a shown formula disagrees with ``predict``, or a
checkpoint's search differs from the one written), ``unnamed`` (a ValueError that does not
name the file), ``error`` (another exception type, at load or in use), ``hang`` (over
``--timeout`` seconds), ``crash`` (the process died). Cases run in a worker process, which is
replaced after a hang or a crash.

    python perf/fuzz_files.py --cases 3000 --seed 0    # the full run (under a minute)
    python perf/fuzz_files.py --smoke                  # 12 cases of each kind (seconds)

``--cases`` is the total, ``--checkpoint-share`` of them checkpoints. The last line printed
is a JSON object of the counts; the exit status is 1 if there was a hole.
tests/test_hostile_files.py runs a few hundred cases through :func:`run`.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import re
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

OUTCOMES = ("consistent", "refused", "inconsistent", "unnamed", "error", "hang", "crash")
HOLES = OUTCOMES[2:]
KINDS = ("formula", "checkpoint")

# strings a hostile or corrupted file may hold where a name is expected
HOSTILE_STRINGS = ["", " ", "x", "x0", "x9", "c", "c0", "m", "v", "E", "I", "pi", "oo", "zoo",
                   "nan", "NaN", "Infinity", "-Infinity", "1e999", "sin", "gauss", "print",
                   "exit", "input", "breakpoint", "__import__('os').getcwd()", "x0)+(", "Mul",
                   "Add", "Pow", "Integral", "Derivative", "Piecewise", "factorial", "gamma",
                   "zeta", "Symbol", "Function", "Lambda", "cv", "ünïcødé ∑", "\x00", "a" * 5000]
HOSTILE_NUMBERS = [0, 1, -1, 2, 0.5, -0.0, 1e308, -1e308, 5e-324, 2 ** 63, -2 ** 63, 10 ** 30,
                   10 ** 400, 3.5, 1e-300, 4095, 2 ** 31 - 1]


# --------------------------------------------------------------------------- seeds
@dataclass
class Seed:
    """A valid file to mutate, and the rows the oracle predicts on."""
    kind: str
    path: str
    X: np.ndarray  # training rows: every formula of the file is defined and faithful there


def make_seeds(folder: Path) -> list[Seed]:
    """Fit the tiny models and write their files into ``folder``."""
    from cadsr_sklearn import CADSRRegressor

    tiny = dict(batch_size=64, ff_dim=32, max_length=14, steps_per_epoch=1, device="cpu",
                random_state=0, n_jobs=1)
    rng = np.random.default_rng(0)
    seeds = []
    X = rng.uniform(1, 2, size=(60, 2))
    y = 0.5 * X[:, 0] * X[:, 1] ** 2 + rng.normal(0, 0.01, 60)
    try:
        import pandas as pd
        frame = pd.DataFrame(X, columns=["m", "v"])
        model = CADSRRegressor(**tiny, n_epochs=5, guesses=["0.5*m*v*v"]).fit(
            frame, pd.Series(y, name="E"), X_units={"m": "kg", "v": "m/s"}, y_units="J")
    except ImportError:  # without pandas: the same law on an array
        model = CADSRRegressor(**tiny, n_epochs=5).fit(X, y)
    seeds.append(Seed("formula", str(model.save_formula(folder / "energy.json")), X))
    # two outputs, with unary operators whose domains are not the whole line
    X2 = rng.uniform(0.5, 3, size=(60, 3))
    Y = np.column_stack([X2[:, 1] ** (3.4 - 0.32 * X2[:, 2]), np.log(X2[:, 0]) + X2[:, 1]])
    model = CADSRRegressor(**tiny, n_epochs=4, unary_operators=("log", "sqrt", "exp")).fit(X2, Y)
    seeds.append(Seed("formula", str(model.save_formula(folder / "two.json")), X2))
    path = folder / "search.ckpt"
    CADSRRegressor(**tiny, n_epochs=2, checkpoint=path).fit(X, y)
    seeds.append(Seed("checkpoint", str(path), X))
    return seeds


# ------------------------------------------------------------------------ mutations
def mutate_bytes(data: bytes, rng: np.random.Generator) -> tuple[bytes, str]:
    """``data`` with one random corruption of its bytes, and what it was."""
    data = bytearray(data)
    n = len(data)
    op = rng.choice(["flip", "set", "insert", "delete", "truncate", "duplicate", "zero"])
    at = int(rng.integers(0, max(n, 1)))
    if op == "flip":
        for _ in range(int(rng.integers(1, 9))):
            k = int(rng.integers(0, n))
            data[k] ^= 1 << int(rng.integers(0, 8))
    elif op == "set":
        data[at] = int(rng.integers(0, 256))
    elif op == "insert":
        data[at:at] = rng.integers(0, 256, size=int(rng.integers(1, 17))).astype(np.uint8).tobytes()
    elif op == "delete":
        del data[at:at + int(rng.integers(1, 65))]
    elif op == "truncate":
        del data[at:]
    elif op == "duplicate":
        length = int(rng.integers(1, 65))
        data[at:at] = data[at:at + length]
    else:
        data[at:at + int(rng.integers(1, 65))] = bytes(min(64, n - at))
    return bytes(data), f"bytes:{op}@{at}"


def _paths(node, prefix=()):
    """Every path (keys and indices) into the JSON ``node``, itself first."""
    yield prefix
    items = node.items() if isinstance(node, dict) else (
        enumerate(node) if isinstance(node, list) else ())
    for key, value in items:
        yield from _paths(value, (*prefix, key))


def _strings(node) -> list[str]:
    if isinstance(node, (dict, list)):
        pairs = node.items() if isinstance(node, dict) else ((None, v) for v in node)
        return [s for k, v in pairs for s in ([k] if k is not None else []) + _strings(v)]
    return [node] if isinstance(node, str) else []


_NUMBER_EDITS = [lambda x: x * 3, lambda x: -x, lambda x: x + 1, lambda x: x / 3,
                 lambda x: x * (1 + 1e-6), lambda x: int(x) if math.isfinite(x) else 0,
                 lambda x: float(x) + 0.5, lambda x: x * 1e200]


def _new_value(value, rng: np.random.Generator, strings: list[str]):
    """A replacement for the JSON ``value``: a nearby number, another type, another string,
    a list or object cut, grown, swapped, tripled or nested."""
    def pick(options):
        return options[int(rng.integers(len(options)))]

    choice = rng.random()
    if isinstance(value, bool) or value is None:
        return pick([not value if isinstance(value, bool) else 0, None, 0, 1, "true", [], {}])
    if isinstance(value, (int, float)):
        if choice < 0.6:
            try:
                return pick(_NUMBER_EDITS)(value)
            except OverflowError:
                return 1e308
        return pick(HOSTILE_NUMBERS) if choice < 0.85 else pick(
            [None, "1.5", "NaN", [value], {"x": value}, True])
    if isinstance(value, str):
        if choice < 0.45 and strings:
            return pick(strings)  # another name the file uses
        if choice < 0.8:
            return pick(HOSTILE_STRINGS)
        if choice < 0.9 and value:
            k = int(rng.integers(len(value)))
            return value[:k] + chr(int(rng.integers(32, 127))) + value[k + 1:]
        return pick([None, 0, 1.5, [value], {"symbol": value}])
    if isinstance(value, list):
        if value and choice < 0.2:
            del value[int(rng.integers(len(value)))]
        elif value and choice < 0.35:
            value.append(copy.deepcopy(pick(value)))
        elif len(value) > 1 and choice < 0.45:  # two swapped: features, tokens, rows
            i, j = rng.choice(len(value), 2, replace=False)
            value[i], value[j] = value[j], value[i]
        elif choice < 0.5 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                  for v in value):
            return [3 * v for v in value]  # every constant of a tree tripled
        else:
            return pick([[], value[::-1], "__DEEP__", None, {}, "x", 0,
                         {"node": "Mul", "args": value}])
        return value
    if value and choice < 0.4:  # a dict
        del value[pick(list(value))]
    elif choice < 0.6:
        value[pick(HOSTILE_STRINGS)] = 1
    else:
        return pick([list(value.values()), None, [], "x", 0, {"node": "sin", "args": [value]}])
    return value


def mutate_json(text: str, rng: np.random.Generator) -> tuple[str, str]:
    """A formula file's text with one to three values of its JSON changed, and its
    checksum then left stale, recomputed or removed; and what was done."""
    document = json.loads(text)
    strings = sorted(set(_strings(document)))
    done = []
    for _ in range(int(rng.choice([1, 1, 1, 2, 2, 3]))):
        paths = list(_paths(document))[1:]
        path = paths[int(rng.integers(len(paths)))]
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = _new_value(parent[path[-1]], rng, strings)
        done.append("/".join(map(str, path)))
    seal = rng.choice(["stale", "stale", "resealed", "removed"])
    if isinstance(document, dict) and "checksum" in document:
        if seal == "removed":
            document.pop("checksum")
        elif seal == "resealed":
            document["checksum"] = _checksum(document)
    text = json.dumps(document, indent=1, ensure_ascii=bool(rng.random() < 0.5),
                      allow_nan=True)
    deep = 50_000
    text = text.replace('"__DEEP__"', "[" * deep + "1" + "]" * deep)
    return text, f"json:{seal}:{','.join(done)}"


def _checksum(document) -> str:
    """What the writer would seal ``document`` with (cadsr_sklearn's own function when
    this version has one: a crafted edit, not a corruption)."""
    try:
        from cadsr_sklearn.reporting.formula_checks import checksum
    except ImportError:  # a version without checksums
        return "none"
    return checksum(document)


# --------------------------------------------------------------------------- oracle
class Inconsistent(Exception):
    """A loaded model whose shown formula does not predict what ``predict`` returns."""


def _shown_values(expr, symbols: list[str], X: np.ndarray) -> np.ndarray:
    """``expr`` evaluated with NumPy on the rows of ``X``: only for formulas of plain
    SymPy functions in the features' symbols (anything else is an inconsistency:
    the loader should not have let it through)."""
    import sympy
    from sympy.core.function import AppliedUndef

    names = {s.name for s in expr.free_symbols}
    if not names <= set(symbols):
        raise Inconsistent(f"the formula {expr} holds symbols {sorted(names - set(symbols))} "
                           "that are no features")
    if expr.atoms(AppliedUndef):
        raise Inconsistent(f"the formula {expr} holds undefined functions")
    dummies = [sympy.Dummy(s) for s in symbols]
    f = sympy.lambdify(dummies, expr.xreplace(dict(zip(map(sympy.Symbol, symbols), dummies))),
                       "numpy")
    with np.errstate(all="ignore"):
        values = np.asarray(f(*X.T), dtype=complex)
    values = np.broadcast_to(values, (len(X),))
    return np.where(np.abs(values.imag) > 0, np.nan, values.real)


def _text_values(text: str, symbols: list[str], X: np.ndarray) -> np.ndarray:
    """The text of a formula as SymPy reads it, evaluated (only the names a formula may use)."""
    import sympy

    allowed = {name: getattr(sympy, name) for name in
               ("sin", "cos", "tan", "exp", "log", "sqrt", "Abs", "tanh", "asin", "acos",
                "atan", "sinh", "cosh", "pi", "E", "Max", "Min", "Integer", "Float", "Rational",
                "Symbol", "Function")}
    local = {s: sympy.Symbol(s) for s in symbols}
    if not all(c.isprintable() for c in text) or "__" in text or "lambda" in text:
        raise Inconsistent(f"the text {text!r} is no formula")
    try:
        expr = sympy.parse_expr(text, local_dict=local,
                                global_dict={**allowed, "__builtins__": {}})
    except Exception as err:  # noqa: BLE001 - the text must read as a formula
        raise Inconsistent(f"the text {text!r} does not read as a formula "
                           f"({type(err).__name__})") from None
    return _shown_values(sympy.sympify(expr), symbols, X)


def _agree(shown: np.ndarray, predicted: np.ndarray, what: str) -> None:
    finite = np.isfinite(predicted)
    if not np.array_equal(np.isfinite(shown), finite):
        raise Inconsistent(f"{what} is finite on other rows than predict")
    scale = float(np.max(np.abs(predicted[finite]), initial=0.0))
    error = float(np.max(np.abs(shown[finite] - predicted[finite]), initial=0.0))
    if not error <= 1e-2 * scale:  # the display's 1e-3, with room
        raise Inconsistent(f"{what} differs from predict by {error:.3g} (scale {scale:.3g})")


def check_formula_model(model, X: np.ndarray, path: Path) -> None:
    """Raise :class:`Inconsistent` (or whatever the model raises) unless ``model``, loaded
    from ``path``, predicts, prints (``cadsr show`` too) and shows every row's formula as
    it predicts."""
    import contextlib
    import io
    from types import SimpleNamespace

    from cadsr_sklearn.cli.commands import cmd_show
    from cadsr_sklearn.expressions.notation import DISPLAY_DIGITS
    from cadsr_sklearn.multioutput import outputs_of

    str(model), model.latex(), model.equations_, model.constants_  # each must not raise
    with contextlib.redirect_stdout(io.StringIO()):
        cmd_show(SimpleNamespace(model=str(path)))
    n = int(model.n_features_in_)
    if X.shape[1] != n:  # a file of another width than its seed: rows of its own
        X = np.random.default_rng(0).uniform(1, 2, size=(len(X), n))
    rows = X
    if getattr(model, "feature_names_in_", None) is not None:
        import pandas as pd
        rows = pd.DataFrame(X, columns=list(model.feature_names_in_))
    y, std = model.predict(rows, return_std=True)
    if any(np.asarray(v).dtype != np.float64 or np.isinf(v).any() for v in (y, std)):
        raise Inconsistent("predict returned values that are neither finite nor NaN")
    for output in outputs_of(model):
        symbols = list(output.front.symbols)
        for i, row in enumerate(output.front.rows):
            predicted = output.estimator.predict(rows, index=i)
            if np.isinf(predicted).any():
                raise Inconsistent("predict returned inf")
            shown = _shown_values(output.front.sympy(i, DISPLAY_DIGITS), symbols, X)
            _agree(shown, predicted, f"row {i}'s shown formula")
            _agree(_text_values(row.formula, symbols, X), predicted, f"row {i}'s text")


def check_checkpoint(loaded, original) -> None:
    """Raise :class:`Inconsistent` unless the checkpoint ``loaded`` holds the search written:
    the same objects with the same values, arrays and tensors bit for bit. (Pickling both
    again would not do: a tensor's pickle names its storage by its address.)"""
    where = _difference(loaded, original)
    if where is not None:
        raise Inconsistent(f"the checkpoint loaded differs from the one written at {where}")


def _difference(a, b) -> str | None:
    """Where the object graphs ``a`` and ``b`` first differ, or None."""
    stack, seen = [(a, b, "checkpoint")], {}
    while stack:
        a, b, where = stack.pop()
        if (id(a), id(b)) in seen:
            continue
        seen[id(a), id(b)] = (a, b)  # kept alive, so that no other object takes their ids
        if type(a) is not type(b):
            return where
        leaves = _leaf(a), _leaf(b)
        if leaves[0] is not None:
            if leaves[0] != leaves[1]:
                return where
        elif isinstance(a, (dict, list, tuple)) or (isinstance(a, np.ndarray)):
            pairs = (list(zip(a.items(), b.items())) if isinstance(a, dict)
                     else list(zip(np.ravel(a) if isinstance(a, np.ndarray) else a,
                                   np.ravel(b) if isinstance(b, np.ndarray) else b)))
            if len(a) != len(b) or len(pairs) != len(a):
                return where
            stack.extend((x, y, f"{where}[{i}]") for i, (x, y) in enumerate(pairs))
        elif callable(a) and not hasattr(a, "__dict__"):
            if a is not b and a != b:
                return where
        else:
            state, other = _state(a), _state(b)
            if state is None or other is None:
                if a != b:
                    return where
            else:
                stack.append((state, other, f"{where}.{type(a).__name__}"))
    return None


def _leaf(value):
    """A value compared as a whole (tensors and arrays bit for bit, NaN equal to NaN), or
    None for one compared part by part."""
    import torch

    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()  # the float32 and int64 of a search's tensors
    if isinstance(value, np.ndarray) and value.dtype != object:
        return str(value.dtype), value.shape, value.tobytes()
    if isinstance(value, torch.Generator):
        return value.get_state().numpy().tobytes()
    if isinstance(value, np.random.Generator):
        return repr(value.bit_generator.state)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else value
    if isinstance(value, (str, bytes, int, bool, type(None), set, frozenset)):
        return ("leaf", value)
    return None


def _state(obj):
    """What an object holds: its ``__dict__`` and slots, or None for one without either."""
    state = dict(vars(obj)) if hasattr(obj, "__dict__") else {}
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if isinstance(slot, str) and hasattr(obj, slot) and slot != "__dict__":
                state[slot] = getattr(obj, slot)
    return state if state or hasattr(obj, "__dict__") else None


# --------------------------------------------------------------------------- worker
def run_case(seed: Seed, case: int, master_seed: int, folder: Path, cache: dict) -> dict:
    """Mutate ``seed`` for case number ``case`` and load the mutant; the outcome as a dict."""
    data, what = mutant(seed, case, master_seed)
    path = folder / f"case{case}{Path(seed.path).suffix}"
    path.write_bytes(data)
    outcome, detail = "consistent", ""
    try:
        loaded = _load(seed, path)
    except ValueError as err:
        first = str(err).splitlines()[0] if str(err) else ""
        outcome = "refused" if str(path) in first else "unnamed"
        detail = f"{type(err).__name__}: {first[:300]}"
    except (Exception, RecursionError) as err:  # noqa: BLE001 - the hole being counted
        outcome, detail = "error", f"load {type(err).__name__}: {str(err)[:300]}"
    else:
        try:
            if seed.kind == "formula":
                check_formula_model(loaded, seed.X, path)
            elif data != Path(seed.path).read_bytes():  # a mutation that changed nothing
                if "original" not in cache:
                    cache["original"] = _load(seed, Path(seed.path))
                check_checkpoint(loaded, cache["original"])
        except Inconsistent as err:
            outcome, detail = "inconsistent", str(err)[:300]
        except Exception as err:  # noqa: BLE001 - the loaded model failed in use
            outcome, detail = "error", f"use {type(err).__name__}: {str(err)[:300]}"
    path.unlink(missing_ok=True)
    return {"kind": seed.kind, "case": case, "mutation": what, "outcome": outcome,
            "detail": detail}


def mutant(seed: Seed, case: int, master_seed: int) -> tuple[bytes, str]:
    """The bytes of case ``case``: ``seed``'s file mutated, and what was done."""
    rng = np.random.default_rng([master_seed, case])
    data = Path(seed.path).read_bytes()
    if seed.kind == "formula" and rng.random() < 0.7:
        text, what = mutate_json(data.decode("utf-8"), rng)
        return text.encode("utf-8"), what
    return mutate_bytes(data, rng)


def _load(seed: Seed, path: Path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if seed.kind == "formula":
            from cadsr_sklearn import CADSRRegressor
            return CADSRRegressor.load_formula(path)
        import torch

        from cadsr_sklearn.search import checkpoint
        return checkpoint.read(path, torch.device("cpu"))


def worker(seed_file: str) -> None:
    """Read ``seed_index case master_seed`` lines on stdin, answer each with a JSON line."""
    seeds = [Seed(s["kind"], s["path"], np.array(s["X"]))
             for s in json.loads(Path(seed_file).read_text())]
    caches = [{} for _ in seeds]
    answers, sys.stdout = sys.stdout, sys.stderr  # nothing printed mixes with the answers
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
        for line in sys.stdin:
            index, case, master_seed = map(int, line.split())
            result = run_case(seeds[index], case, master_seed, Path(folder), caches[index])
            answers.write(json.dumps(result) + "\n")
            answers.flush()


class Worker:
    """A worker process, restarted after a hang or a crash."""

    def __init__(self, seed_file: Path):
        self.seed_file = seed_file
        self.process = None

    def ask(self, index: int, case: int, master_seed: int, timeout: float) -> dict:
        if self.process is None:
            self.process = subprocess.Popen(
                [sys.executable, __file__, "--worker", str(self.seed_file)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.process.stdin.write(f"{index} {case} {master_seed}\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else None
        if not line:
            self.stop()
            return ({"outcome": "hang", "detail": f"over {timeout:g} s"} if line is None
                    else {"outcome": "crash", "detail": "the worker died"})
        return json.loads(line)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        self.process = None


# ------------------------------------------------------------------------------ run
@dataclass
class Report:
    """The outcomes of a run: counts per kind, and the holes' first examples."""

    counts: dict[str, Counter] = field(default_factory=lambda: {k: Counter() for k in KINDS})
    holes: list[dict] = field(default_factory=list)
    reasons: Counter = field(default_factory=Counter)  # why files were refused

    @property
    def n_holes(self) -> int:
        return sum(c[o] for c in self.counts.values() for o in HOLES)

    def table(self) -> str:
        lines = [f"{'kind':<11}" + "".join(f"{o:>14}" for o in OUTCOMES) + f"{'total':>8}"]
        for kind, counts in self.counts.items():
            lines.append(f"{kind:<11}" + "".join(f"{counts[o]:>14}" for o in OUTCOMES)
                         + f"{sum(counts.values()):>8}")
        return "\n".join(lines)


def run(n_cases: int, master_seed: int = 0, checkpoint_share: float = 0.25,
        timeout: float = 60.0, verbose: bool = False) -> Report:
    """Fuzz ``n_cases`` mutants (``checkpoint_share`` of them checkpoints) and count outcomes."""
    with tempfile.TemporaryDirectory(prefix="fuzz-seeds-") as scratch:
        folder = Path(scratch)
        seeds = make_seeds(folder)
        seed_file = folder / "seeds.json"
        seed_file.write_text(json.dumps([{"kind": s.kind, "path": s.path, "X": s.X.tolist()}
                                         for s in seeds]))
        formulas = [i for i, s in enumerate(seeds) if s.kind == "formula"]
        checkpoints = [i for i, s in enumerate(seeds) if s.kind == "checkpoint"]
        n_checkpoints = round(n_cases * checkpoint_share)
        plan = ([formulas[c % len(formulas)] for c in range(n_cases - n_checkpoints)]
                + [checkpoints[c % len(checkpoints)] for c in range(n_checkpoints)])
        report, worker_ = Report(), Worker(seed_file)
        try:
            for case, index in enumerate(plan):
                result = worker_.ask(index, case, master_seed, timeout)
                if "mutation" not in result:  # a hang or a crash: what the case was
                    result["mutation"] = mutant(seeds[index], case, master_seed)[1]
                kind = seeds[index].kind
                report.counts[kind][result["outcome"]] += 1
                if result["outcome"] in HOLES:
                    report.holes.append({"kind": kind, "case": case, **result})
                elif result["outcome"] == "refused":
                    report.reasons[f"{kind}: {_reason(result['detail'])}"] += 1
                if verbose and (case + 1) % 250 == 0:
                    print(f"  {case + 1} cases ...", flush=True)
        finally:
            worker_.stop()
    return report


def _reason(detail: str) -> str:
    """A refusal's message without the file's name, numbers and quoted values: its kind."""
    text = detail.split(": ", 2)[-1]
    return re.sub(r"'[^']*'|\"[^\"]*\"|\([^()]*\)|-?\d[\d.e+-]*", "_", text)[:90]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=3000, help="mutants in all (default 3000)")
    parser.add_argument("--seed", type=int, default=0, help="the mutations' seed (default 0)")
    parser.add_argument("--checkpoint-share", type=float, default=0.25,
                        help="the share of the cases that are checkpoints (default 0.25)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds a case may take before it counts as a hang (default 60)")
    parser.add_argument("--smoke", action="store_true", help="12 cases of each kind: seconds")
    parser.add_argument("--show", type=int, default=20,
                        help="holes, and kinds of refusal, to list (default 20)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    n_cases, share = (24, 0.5) if args.smoke else (args.cases, args.checkpoint_share)
    start = time.perf_counter()
    report = run(n_cases, args.seed, share, args.timeout, verbose=not args.smoke)
    seconds = time.perf_counter() - start
    print(f"{n_cases} cases, seed {args.seed}, {seconds:.0f} s")
    print(report.table())
    signatures, first = Counter(), {}
    for hole in report.holes:  # each kind of hole, with its first case
        signature = f"{hole['kind']} {hole['outcome']}: {hole['detail'][:120]}"
        signatures[signature] += 1
        first.setdefault(signature, hole)
    for signature, count in signatures.most_common(args.show):
        print(f"  {count:4d} x {signature}  (case {first[signature]['case']}, "
              f"{first[signature]['mutation']})")
    if not args.smoke:
        print("Refusals, by kind of message:")
        for reason, count in report.reasons.most_common(args.show):
            print(f"  {count:5d} x {reason}")
    print(json.dumps({"cases": n_cases, "seed": args.seed, "seconds": round(seconds),
                      **{kind: dict(counts) for kind, counts in report.counts.items()}}))
    return 1 if report.n_holes else 0


if __name__ == "__main__":
    sys.exit(main())
