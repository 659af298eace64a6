"""The values a sub-tree must take for its whole formula to equal y.

A formula f with a sub-tree s at some place is f = g(s), where g is the path of
operators from the root down to s, the other branches along it held at their values.
Walking that path inverts one operator at a time: under ``add(s, a)`` the target of s is
t − a, under ``div(a, s)`` it is a / t, under ``sqrt(s)`` it is t², … (uDSR's ``poly``
token takes its leaf's target this way). Where g is not one-to-one the principal branch
is taken (``sin``: arcsin, ``square``: the positive root), and a row where the inverse is
undefined (the root of a negative target, the log of one) gets NaN: no value of s there
makes f equal y.

The trees are in preorder, as :mod:`cadsr_sklearn.search.genetic` edits them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .genetic import subtree_end

__all__ = ["INVERSES", "PathStep", "invertible", "output_through", "path_steps", "subtree_target"]

Inverse = Callable[[np.ndarray, np.ndarray | None, int], np.ndarray]


def _nan_where(condition: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.where(condition, values, np.nan)


def _pow_inverse(t: np.ndarray, a: np.ndarray, child: int) -> np.ndarray:
    if child == 0:  # t = s ** a: s = t ** (1/a), on the real branch (t > 0)
        return _nan_where(t > 0, np.abs(t) ** (1.0 / a))
    # t = a ** s: s = log t / log a
    return _nan_where((t > 0) & (a > 0), np.log(np.abs(t)) / np.log(np.abs(a)))


#: For each invertible operator, the target of its child ``child`` (0 or 1) given the
#: operator's target t and the other child's values a (None for a unary operator).
INVERSES: dict[str, Inverse] = {
    "add": lambda t, a, child: t - a,
    "sub": lambda t, a, child: t + a if child == 0 else a - t,
    "mul": lambda t, a, child: t / a,
    "div": lambda t, a, child: t * a if child == 0 else a / t,
    "pow": _pow_inverse,
    "neg": lambda t, a, child: -t,
    "inv": lambda t, a, child: 1.0 / t,
    "sqrt": lambda t, a, child: _nan_where(t >= 0, t * t),
    "square": lambda t, a, child: _nan_where(t >= 0, np.sqrt(np.abs(t))),
    "cube": lambda t, a, child: np.cbrt(t),
    "exp": lambda t, a, child: _nan_where(t > 0, np.log(np.abs(t))),
    "log": lambda t, a, child: np.exp(t),
    "sin": lambda t, a, child: _nan_where(np.abs(t) <= 1, np.arcsin(np.clip(t, -1, 1))),
    "cos": lambda t, a, child: _nan_where(np.abs(t) <= 1, np.arccos(np.clip(t, -1, 1))),
    "tan": lambda t, a, child: np.arctan(t),
    "tanh": lambda t, a, child: _nan_where(np.abs(t) < 1,
                                           np.arctanh(np.where(np.abs(t) < 1, t, 0.0))),
    "sinh": lambda t, a, child: np.arcsinh(t),
    "cosh": lambda t, a, child: _nan_where(t >= 1, np.arccosh(np.maximum(t, 1))),
    "asin": lambda t, a, child: _nan_where(np.abs(t) <= np.pi / 2, np.sin(t)),
    "acos": lambda t, a, child: _nan_where((t >= 0) & (t <= np.pi), np.cos(t)),
    "atan": lambda t, a, child: _nan_where(np.abs(t) < np.pi / 2, np.tan(t)),
    "abs": lambda t, a, child: _nan_where(t >= 0, t),
}


def invertible(names: Sequence[str], prefix: Sequence[int], arity: Sequence[int],
               position: int) -> bool:
    """Whether every operator on the path from the root of ``prefix`` down to
    ``position`` has an inverse (custom operators have none)."""
    return all(names[prefix[node]] in INVERSES
               for node, _ in _path(prefix, arity, position))


@dataclass(frozen=True)
class PathStep:
    """One operator on the path from the root down to a sub-tree: its token, which of
    its children the path goes through, and the other child's values (None for a
    unary operator)."""

    token: int
    child: int
    other: np.ndarray | None


def path_steps(prefix: Sequence[int], arity: Sequence[int], values: Sequence[np.ndarray],
               position: int) -> list[PathStep]:
    """The operators from the root of ``prefix`` down to ``position``, root first.

    ``values[i]`` are the outputs of the sub-tree rooted at ``prefix[i]``.
    """
    steps = []
    for node, child in _path(prefix, arity, position):
        siblings = _children(prefix, arity, node)
        other = values[siblings[1 - child]] if len(siblings) == 2 else None
        steps.append(PathStep(prefix[node], child, other))
    return steps


def subtree_target(steps: Sequence[PathStep], names: Sequence[str],
                   y: np.ndarray) -> np.ndarray:
    """What the sub-tree at the end of the path ``steps`` (:func:`path_steps`) must
    output for its formula to output ``y``, row by row (NaN where no value does).

    ``names[token]`` is the operator's name; every operator on the path must be
    :func:`invertible`.
    """
    target = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        for step in steps:
            target = INVERSES[names[step.token]](target, step.other, step.child)
    return np.where(np.isfinite(target), target, np.nan)


def output_through(steps: Sequence[PathStep], values: np.ndarray,
                   apply: Callable[[int, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """The formula's output when the sub-tree at the end of the path ``steps`` outputs
    ``values``, the other branches held: the way back up :func:`subtree_target`.
    ``apply(token, a, b)`` is the operator's value on rows (``b`` ignored by a unary
    one)."""
    for step in reversed(steps):
        if step.other is None:
            values = apply(step.token, values, values)
        elif step.child == 0:
            values = apply(step.token, values, step.other)
        else:
            values = apply(step.token, step.other, values)
    return values


def _children(prefix: Sequence[int], arity: Sequence[int], node: int) -> list[int]:
    """The preorder positions of the children of ``node``."""
    starts, child = [], node + 1
    for _ in range(arity[prefix[node]]):
        starts.append(child)
        child = subtree_end(prefix, child, arity)
    return starts


def _path(prefix: Sequence[int], arity: Sequence[int], position: int) -> list[tuple[int, int]]:
    """(node, which child) for each operator from the root down to ``position``."""
    path, node = [], 0
    while node != position:
        children = _children(prefix, arity, node)
        child = max(j for j, start in enumerate(children) if start <= position)
        path.append((node, child))
        node = children[child]
    return path
