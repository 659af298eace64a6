#!/usr/bin/env bash
# Install CADSR for SRBench into the active environment.
#
# cadsr-sklearn has no package-index release yet, so by default it is installed
# from the checkout this folder lives in (srbench/cadsr inside cadsr-sklearn),
# with that checkout's pins (constraints.txt). Set CADSR_SKLEARN_SOURCE to install
# from elsewhere: a local checkout ("/path/to/cadsr-sklearn"), a Git URL
# ("git+https://…/cadsr-sklearn.git@v0.1.0") or a wheel file. A copy of this
# folder outside a checkout (SRBench's algorithms/cadsr) needs it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
checkout="$(cd "${here}/../.." && pwd)"

if [[ -n "${CADSR_SKLEARN_SOURCE:-}" ]]; then
    package=("${CADSR_SKLEARN_SOURCE}")
elif [[ -f "${checkout}/pyproject.toml" ]] && grep -q '^name = "cadsr-sklearn"' "${checkout}/pyproject.toml"; then
    package=(-c "${checkout}/constraints.txt" "${checkout}")
else
    echo "install.sh: ${here} is not inside a cadsr-sklearn checkout, and cadsr-sklearn has no" >&2
    echo "package-index release yet: set CADSR_SKLEARN_SOURCE to a checkout, a Git URL or a wheel." >&2
    exit 1
fi

python -m pip install --no-cache-dir -r "${here}/requirements.txt"
python -m pip install --no-cache-dir "${package[@]}"

# Smoke test: the submission imports and the estimator can be built.
python -c "import sys; sys.path.insert(0, '${here}'); import regressor; print('CADSR', regressor.est)"
