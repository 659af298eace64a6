import os

import pytest

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
