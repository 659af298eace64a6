"""How few nodes a subtree needs to have given units (:class:`ReachCosts`).

The units masks (:mod:`cadsr_sklearn.units.masks`) allow a token at a node only where its
subtree can still have the units the node needs within the length left, and the units
prior prices each token by the nodes it takes beyond the fewest. Both ask one question:
what is the smallest subtree whose units are u? :class:`ReachCosts` answers it for every
u the smallest subtrees reach, once per search, as a table over the variables' units
(a dynamic programme over subtree sizes); :func:`fewest_nodes` looks u up in it inside
the compiled mask kernels, for the units a step meets. Units the table does not hold
cost a lower bound when they are a combination of the variables' units, and are out of
reach (:data:`UNREACHABLE`) when they are not.
"""

from __future__ import annotations

import numpy as np

from ..expressions.opcodes import jit

__all__ = ["ReachCosts", "fewest_nodes", "UNREACHABLE"]

#: Exponents are tracked in quarters (``sqrt`` halves them, twice at most in a
#: short formula); the sizes of the smallest subtrees are tabulated up to this many nodes.
_QUANTUM, _TABULATED_SIZE, _MAX_QUANTA = 4, 9, 48
#: The nodes of a subtree that cannot have the units asked for.
UNREACHABLE = 10**6


class ReachCosts:
    """The fewest nodes a subtree needs to have given units: a dynamic programme over
    subtree sizes, with the variables' units (and a dimensionless constant) as leaves.

    Sizes up to ``_TABULATED_SIZE`` are exact for the operators ``*``, ``/`` and
    those of ``sqrt``, ``square``, ``cube``, ``inv`` in the library (``scales``,
    the factors they scale units by); units it did not meet cost one node
    more when they are a combination of the variables' units, and cannot be
    reached when they are not. The mask uses these as lower bounds: an
    operator is allowed only where its subtree can close within the length left.
    """

    def __init__(self, variable_units: np.ndarray, scales: tuple[float, ...]) -> None:
        quanta = variable_units * _QUANTUM
        self.D = variable_units.shape[1]
        self.scales = scales  # the factors of the library's scaling operators (sqrt: ½, …)
        self.exact = bool(np.allclose(quanta, np.round(quanta)))
        # An orthonormal basis of the units the variables span: the rest is out of reach.
        basis, singular, _ = np.linalg.svd(variable_units.T, full_matrices=False)
        self.span = basis[:, singular > 1e-9] if variable_units.size else np.zeros((self.D, 0))
        best: dict[tuple, int] = {}
        by_product: dict[tuple, int] = {}
        by_quotient: dict[tuple, int] = {}
        #: What a need the table does not hold costs when the variables span it: past
        #: the table when the table is exact; without a table (exponents that are not
        #: multiples of ¼) only the lower bound 1, so the masks stay loose, never wrong.
        self.untabulated = _TABULATED_SIZE + 1 if self.exact else 1
        #: Fewest nodes of a dimensionless subtree that is not a lone constant (the
        #: argument of a function, which may not be one): from the variables alone.
        self.dimensionless_argument = 1 if self.D == 0 else self.untabulated
        if self.exact and self.D:
            leaves = np.round(quanta).astype(np.int64)
            self._tabulate(leaves, best, by_product, by_quotient, constant_leaf=True)
            without_constants: dict[tuple, int] = {}
            self._tabulate(leaves, without_constants, {}, {}, constant_leaf=False)
            self.dimensionless_argument = without_constants.get((0,) * self.D,
                                                                _TABULATED_SIZE + 1)
        self.keys = sorted(best)
        index = {k: i for i, k in enumerate(self.keys)}
        self.cost = np.array([best[k] for k in self.keys], dtype=np.int64)
        self.cost_mul = np.full(len(self.keys), UNREACHABLE, dtype=np.int64)
        self.cost_div = np.full(len(self.keys), UNREACHABLE, dtype=np.int64)
        for table, out in ((by_product, self.cost_mul), (by_quotient, self.cost_div)):
            for k, c in table.items():
                out[index[k]] = c
        encoded = self._encode(np.array(self.keys, dtype=np.int64).reshape(len(self.keys),
                                                                           self.D))
        #: the tabulated units' codes, sorted, and where each sits in :attr:`keys`
        self.order = np.argsort(encoded)
        self.encoded = encoded[self.order]
        #: each base unit's place value in a code (:func:`fewest_nodes` encodes as
        #: :meth:`_encode` does)
        self.powers = (2 * _MAX_QUANTA + 1) ** np.arange(self.D, dtype=np.int64)

    @staticmethod
    def _encode(q: np.ndarray) -> np.ndarray:
        """One int64 per vector of quanta (each within ±_MAX_QUANTA)."""
        width = 2 * _MAX_QUANTA + 1
        return ((q + _MAX_QUANTA) * width ** np.arange(q.shape[-1])).sum(-1)

    def _tabulate(self, leaves: np.ndarray, best, by_product, by_quotient,
                  constant_leaf: bool) -> None:
        D = self.D
        sizes: dict[int, np.ndarray] = {}

        def admit(vectors: np.ndarray, size: int, table: dict | None = None) -> list:
            fresh = []
            keep = np.all(np.abs(vectors) <= _MAX_QUANTA, axis=1)
            for row in np.unique(vectors[keep], axis=0):
                key = tuple(int(v) for v in row)
                if table is not None and key not in table:
                    table[key] = size
                if key not in best:
                    best[key] = size
                    fresh.append(row)
            return fresh

        zero = np.zeros((1 if constant_leaf else 0, D), dtype=np.int64)
        first = admit(np.vstack([leaves, zero]), 1)
        sizes[1] = np.array(first, dtype=np.int64).reshape(-1, D)
        for size in range(2, _TABULATED_SIZE + 1):
            fresh = []
            below = sizes[size - 1]
            # unary scalings: the value's units from the child's (quanta stay integral)
            # only the library's scaling operators: without sqrt no half powers, and so on
            scaled = [below * int(f) for f in (2, 3, -1) if f in self.scales]
            if 0.5 in self.scales:
                scaled.append(below[np.all(below % 2 == 0, axis=1)] // 2)
            for vectors in scaled:
                if len(vectors):
                    fresh += admit(vectors, size)
            for left in range(1, size - 1):
                a, b = sizes.get(left), sizes.get(size - 1 - left)
                if a is None or b is None or not len(a) or not len(b):
                    continue
                fresh += admit((a[:, None, :] + b[None, :, :]).reshape(-1, D), size, by_product)
                fresh += admit((a[:, None, :] - b[None, :, :]).reshape(-1, D), size, by_quotient)
            sizes[size] = np.array(fresh, dtype=np.int64).reshape(-1, D)


# ------------------------------------------------------------------ compiled lookup

@jit()
def fewest_nodes(tab, u, work):
    """Fewest nodes for units ``u`` (D,): overall, with ``*`` at the top, with ``/``.

    ``tab`` holds a :class:`ReachCosts`' table as the mask kernels read it
    (``encoded``, ``cost``, ``cost_mul`` and ``cost_div`` in the order of ``encoded``,
    ``span``, ``powers``, ``untabulated``). Units not tabulated cost ``untabulated`` if
    the variables span them, else ``UNREACHABLE``. ``work`` holds at least as many
    numbers as the span has columns.
    """
    D = len(u)
    if D == 0:  # every quantity is dimensionless: any leaf, any product of two
        return 1, 3, 3
    inside = True
    code = 0
    for i in range(D):
        q = u[i] * _QUANTUM
        rounded = np.rint(q)  # half to even, as the tables were written
        if not (abs(q - rounded) < 1e-6 and abs(rounded) <= _MAX_QUANTA):
            inside = False
            break
        code += (int(rounded) + _MAX_QUANTA) * tab.powers[i]
    if inside and len(tab.encoded):
        at = min(np.searchsorted(tab.encoded, code), len(tab.encoded) - 1)
        if tab.encoded[at] == code:  # tabulated units are combinations of the variables'
            return (tab.cost[at], min(tab.cost_mul[at], tab.untabulated),
                    min(tab.cost_div[at], tab.untabulated))
    fallback = tab.untabulated if _spanned(tab.span, u, work) else UNREACHABLE
    return fallback, fallback, fallback


@jit(inline="always")
def _spanned(span, u, work):
    """Whether units ``u`` are a combination of the columns of ``span`` (orthonormal)."""
    D, r = span.shape
    for j in range(r):
        work[j] = 0.0
        for k in range(D):
            work[j] += u[k] * span[k, j]
    for i in range(D):
        projection = 0.0
        for j in range(r):
            projection += work[j] * span[i, j]
        if not abs(u[i] - projection) < 1e-9:
            return False
    return True
