"""cadsr-sklearn: Complexity-Aware Deep Symbolic Regression as a scikit-learn regressor."""

from ._version import __version__
from .expression import Expression
from .library import Library

__all__ = ["__version__", "Expression", "Library"]
