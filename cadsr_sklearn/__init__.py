"""cadsr-sklearn: Complexity-Aware Deep Symbolic Regression as a scikit-learn regressor."""

from ._version import __version__
from .expressions.custom_operators import Operator, register_operator
from .expressions.expression import Expression
from .expressions.library import Library

__all__ = ["__version__", "CADSRRegressor", "Expression", "Library", "Operator",
           "SmallDataWarning", "register_operator"]


def __getattr__(name: str):
    # Import the estimator (and torch) on first use, so `import cadsr_sklearn` stays light.
    if name == "CADSRRegressor":
        from .estimator import CADSRRegressor

        return CADSRRegressor
    if name == "SmallDataWarning":
        from .validation import SmallDataWarning

        return SmallDataWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
