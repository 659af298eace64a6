"""A warning reported at the user's own line: :func:`warn_user`.

A warning should point at the line that called the package (``model.fit(X, y)``),
not at the package's inside, so that the user sees which of their calls it is
about and a warnings filter by module works. A fixed ``stacklevel`` cannot do
that: the frames between the warning and the user's call differ by path (a 2-D
``y`` passes through :mod:`cadsr_sklearn.multioutput`, a pipeline adds
scikit-learn's frames, ``cross_val_score`` joblib's), and each change of the
code between them would move it. :func:`warn_user` counts them when it warns,
walking out of the frames of the package and of the libraries that call it
(Python 3.12's ``skip_file_prefixes`` does this, but the package supports 3.10).
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["warn_user", "user_stacklevel"]

# Modules whose frames lie between a user's call and a warning: the package's own, and
# those of the libraries that call into it for the user (scikit-learn's fit wrappers,
# pipelines and model selection, joblib's dispatch, context managers and decorators).
_LIBRARY_MODULES = ("cadsr_sklearn", "sklearn", "joblib", "contextlib", "threadpoolctl")


def _in_library(frame) -> bool:
    name = frame.f_globals.get("__name__") or ""
    return any(name == module or name.startswith(module + ".") for module in _LIBRARY_MODULES)


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a ``warnings.warn`` in the caller of this function
    point at the first frame outside the package and the libraries that call it.

    Where every frame is theirs (a fit in a joblib worker process), it points at the
    outermost.
    """
    frame = sys._getframe(1)  # the function that is about to warn: stacklevel 1
    level = 1
    while _in_library(frame) and frame.f_back is not None:
        frame = frame.f_back
        level += 1
    return level


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)``, reported at the user's line that called the
    package (:func:`user_stacklevel`), whatever the frames between."""
    # user_stacklevel counts from this frame; warnings.warn is called here too
    warnings.warn(message, category, stacklevel=user_stacklevel())
