"""What a benchmark runs: tasks, and the problems and seeds they are made of.

A :class:`Task` is one fit: a problem, a method, a seed, a noise level, a time
budget, the method's settings and, for a sweep over settings, the name of its
variant. :func:`make_tasks` builds every combination; :func:`select_problems`,
:func:`parse_seeds` and :func:`method_params` turn ``cadsr bench``'s options into
problems, seeds and each method's settings.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..user_input import UsageError, estimator_params, parse_value
from .methods import METHODS
from .suites import SUITES, Problem, TableProblem, get_problem, get_suite

#: The methods that are CADSRRegressor fits, which a plain ``KEY=VALUE`` sets.
_CADSR_METHODS = ("cadsr", "cadsr-units")

__all__ = [
    "OPERATORS",
    "Task",
    "make_tasks",
    "sweep_variants",
    "method_params",
    "select_problems",
    "parse_seeds",
]

#: Operator sets a task can run with: the problem's own, or CADSR's default token set.
OPERATORS = ("suite", "default")


@dataclass(frozen=True)
class Task:
    """One (problem, method, variant, seed, noise) run; picklable, so it can travel to a worker.

    Parameters
    ----------
    problem : Problem or TableProblem
    method : str
    seed : int
    noise : float
        SRBench's γ on the training targets.
    max_time : float
        Seconds of the fit.
    params : dict
        Constructor parameters of the method's estimator.
    simplify_timeout : float
        Seconds per SymPy simplification of the judge.
    variant : str
        Name of the settings of a sweep (``"bic_variance=mle"``); ``""`` without one.
    operators : {"suite", "default"}
        The problem's operator set, or CADSR's default token set.
    n_train : int, optional
        Training rows drawn from a built-in problem (default: the problem's own).
    """

    problem: Problem | TableProblem
    method: str
    seed: int
    noise: float
    max_time: float
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    simplify_timeout: float = 10.0
    variant: str = ""
    operators: str = "suite"
    n_train: int | None = None

    @property
    def key(self) -> tuple:
        """What identifies the task's row in a results file (see :data:`.results.KEY`)."""
        return (
            self.problem.suite,
            self.problem.name,
            self.method,
            self.variant,
            self.seed,
            float(self.noise),
            float(self.max_time),
        )


def make_tasks(
    problems: Sequence[Problem | TableProblem],
    methods: Sequence[str],
    seeds: Sequence[int],
    noises: Sequence[float],
    max_time: float,
    params: dict[str, dict[str, Any]] | None = None,
    simplify_timeout: float = 10.0,
    *,
    variants: Mapping[str, dict[str, dict[str, Any]]] | None = None,
    operators: str = "suite",
    n_train: int | None = None,
) -> list[Task]:
    """Every combination, grouped by (problem, noise, seed) so methods finish side by side.

    ``params`` maps a method to its settings; ``variants`` maps a variant's name
    to settings (by method, as ``params``) laid over them, one task per variant
    (see :func:`sweep_variants`).
    """
    if operators not in OPERATORS:
        raise UsageError(f"unknown operator set {operators!r}; choose from {', '.join(OPERATORS)}")
    params = params or {}
    variants = variants or {"": {}}
    tasks = []
    for p, g, s, m in itertools.product(problems, noises, seeds, methods):
        for name, extra in variants.items():
            settings = {**params.get(m, {}), **extra.get(m, {})}
            tasks.append(Task(p, m, int(s), float(g), float(max_time), settings,
                              simplify_timeout, name, operators, n_train))
    return tasks


def sweep_variants(items: Sequence[str], parse) -> dict[str, dict[str, dict[str, Any]]]:
    """Variants of a sweep: ``KEY=VALUE`` items, several values of one KEY side by side.

    Different keys multiply: ``a=1 a=2 b=x`` gives ``a=1 b=x`` and ``a=2 b=x``.
    ``parse`` turns a list of ``KEY=VALUE`` texts into settings by method (the
    parser of ``--params``). Returns {variant name: settings by method}.
    """
    by_key: dict[str, list[str]] = {}
    for item in items:
        key = item.partition("=")[0].strip()
        by_key.setdefault(key, [])
        if item not in by_key[key]:
            by_key[key].append(item)
    variants = {}
    for combination in itertools.product(*by_key.values()):
        variants[" ".join(combination)] = parse(list(combination))
    return variants


def method_params(items: Sequence[str], methods: Sequence[str] = METHODS) -> dict[str, dict]:
    """``KEY=VALUE`` (for both CADSR methods) or ``METHOD.KEY=VALUE`` entries → settings by
    method.

    CADSR's entries (``cadsr`` and ``cadsr-units``, the same estimator) go through
    :func:`cadsr_sklearn.user_input.estimator_params`, the parser of ``cadsr fit --param``
    (VALUE a Python literal, ``inf``/``nan``, or text; names checked against
    ``CADSRRegressor``); a ``METHOD.`` entry overrides a plain one. The peers' values are
    read as Python literals, else text, and their names checked against their estimators
    where the method runs.
    """
    params: dict[str, dict[str, Any]] = {m: {} for m in METHODS}
    plain: list[str] = []  # KEY=VALUE: both CADSR methods
    own: dict[str, list[str]] = {m: [] for m in _CADSR_METHODS}
    for item in items:
        name, sep, text = item.partition("=")
        method, dot, key = name.partition(".") if "." in name else ("", "", name)
        if not sep or not key.strip() or (dot and method not in METHODS):
            raise UsageError(
                f"bad --params entry {item!r}; use KEY=VALUE or METHOD.KEY=VALUE "
                f"(METHOD one of {', '.join(METHODS)})"
            )
        if not dot:
            plain.append(item)
        elif method in own:
            own[method].append(f"{key}={text}")
        else:
            params[method][key.strip()] = parse_value(text)
    for method, entries in own.items():
        if plain or entries:
            params[method] = {**estimator_params(plain), **estimator_params(entries)}
    for method in ("gplearn", "operon"):
        if params[method] and method in methods:
            _check_peer_params(method, params[method])
    return params


def _check_peer_params(method: str, values: dict[str, Any]) -> None:
    """A usage error unless every name in ``values`` is a parameter of the peer's estimator."""
    if method == "gplearn":
        from gplearn.genetic import SymbolicRegressor
    else:
        from pyoperon.sklearn import SymbolicRegressor
    unknown = sorted(set(values) - set(SymbolicRegressor().get_params()))
    if unknown:
        raise UsageError(f"--params: {method} has no parameter(s) {unknown}")


def select_problems(
    suites: Sequence[str] | None = None,
    names: Sequence[str] | None = None,
    data: Sequence[str] | None = None,
    *,
    target: str = "target",
    formula: str | None = None,
    test_size: float = 0.25,
    max_train_samples: int | None = 10_000,
) -> list[Problem | TableProblem]:
    """The problems of ``cadsr bench``'s ``--suite``, ``--data`` and ``--problems``.

    Without suites or data files: Nguyen, or, when ``names`` are given, every
    built-in problem of those names. ``names`` then keeps only the problems so
    named (case-insensitive), in the order of the suites.
    """
    if suites is None and not data and names:
        unknown = [n for n in names if not _is_builtin(n)]
        if unknown:
            raise UsageError(f"unknown problem(s) {unknown} in the built-in suites")
        return list(dict.fromkeys(get_problem(n) for n in names))
    problems: list = []
    for name in suites if suites is not None else ([] if data else ["nguyen"]):
        try:
            problems.extend(get_suite(name))
        except ValueError:
            raise UsageError(
                f"unknown suite {name!r}; choose from {', '.join(sorted(SUITES))}"
            ) from None
    if formula is not None and len(data or []) != 1:
        raise UsageError("--formula goes with exactly one --data file")
    for path in data or []:
        try:
            problems.append(
                TableProblem.from_file(
                    path, target=target, formula=formula, test_size=test_size,
                    max_train_samples=max_train_samples or None,
                )
            )
        except ValueError as err:
            raise UsageError(str(err).splitlines()[0]) from None
    if names:
        wanted = {n.lower() for n in names}
        known = {p.name.lower() for p in problems}
        unknown = [n for n in names if n.lower() not in known]
        if unknown:
            raise UsageError(
                f"unknown problem(s) {unknown} in the chosen suite(s) {list(suites or ['--data'])}"
            )
        problems = [p for p in problems if p.name.lower() in wanted]
    keys = [(p.suite, p.name) for p in problems]
    if len(set(keys)) != len(keys):
        raise UsageError(
            "two problems share a name (pass each --data file once, with distinct names)"
        )
    return problems


def _is_builtin(name: str) -> bool:
    try:
        get_problem(name)
    except ValueError:
        return False
    return True


def parse_seeds(items: Sequence[str]) -> list[int]:
    """``["0-4"]``, ``["0,2,5"]`` or ``["0", "1"]`` → sorted unique seeds."""
    seeds: set[int] = set()
    for item in items:
        for part in str(item).replace(",", " ").split():
            lo, dash, hi = part.partition("-")
            if not lo.isdigit() or (dash and not hi.isdigit()) or (dash and int(hi) < int(lo)):
                raise UsageError(f"bad --seeds value {part!r}; use e.g. 0-4, 0,1,2 or 0 1 2")
            seeds.update(range(int(lo), int(hi if dash else lo) + 1))
    if not seeds:
        raise UsageError("--seeds needs non-negative integers, e.g. 0-4")
    return sorted(seeds)
