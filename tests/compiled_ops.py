"""The operators' one implementation (the compiled ``program.apply``), over NumPy arrays."""

import numpy as np

from cadsr_sklearn import program


def compiled(tok):
    """A NumPy-broadcasting function computing ``tok``'s value as the fit and ``predict`` do."""
    if tok.arity == 2:
        return np.vectorize(lambda a, b: program.apply(tok.opcode, a, b), otypes=[np.float64])
    return np.vectorize(lambda a: program.apply(tok.opcode, a, 0.0), otypes=[np.float64])
