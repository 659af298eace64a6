#!/usr/bin/env bash
# Install CADSR for SRBench into the active environment.
#
# By default the released package comes from PyPI. Set CADSR_SKLEARN_SOURCE to
# install another version instead: a local checkout ("/path/to/cadsr-sklearn"),
# a Git URL ("git+https://…/cadsr-sklearn.git@v0.1.0") or a wheel file.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

python -m pip install --no-cache-dir -r "${here}/requirements.txt"
python -m pip install --no-cache-dir "${CADSR_SKLEARN_SOURCE:-cadsr-sklearn}"

# Smoke test: the submission imports and the estimator can be built.
python -c "import sys; sys.path.insert(0, '${here}'); import regressor; print('CADSR', regressor.est)"
