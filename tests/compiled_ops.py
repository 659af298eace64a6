"""The operators' one implementation (the compiled ``operations.apply``), over NumPy arrays."""

import numpy as np

from cadsr_sklearn.expressions import operations


def compiled(tok):
    """A NumPy-broadcasting function computing ``tok``'s value as the fit and ``predict`` do."""
    if tok.arity == 2:
        return np.vectorize(lambda a, b: operations.apply(tok.opcode, a, b), otypes=[np.float64])
    return np.vectorize(lambda a: operations.apply(tok.opcode, a, 0.0), otypes=[np.float64])
