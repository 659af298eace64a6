import os

# scikit-learn's check_array_api_input needs SciPy's array API mode, which must be
# switched on before SciPy is first imported; with it, check_estimator runs every check.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
