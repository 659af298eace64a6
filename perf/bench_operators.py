"""Per-element cost of the built-in operators in the interpreter, against libm and NumPy.

For each operator, three loops over the same ``--rows`` numbers (x in [0.5, 5], exponents in
[-3, 3]; enough of them that the microsecond of a call from Python does not count), one core,
the median over ``--repeats`` timings of ``--calls`` calls:

* ``interpreter``: :func:`program.forward` on the one node ``op(x0, x1)``, its children's
  rows already in place (pow, exp, log, sin and cos in :mod:`.vector_math`'s SIMD code; the
  rest inline in a row loop);
* ``libm loop``: a compiled loop calling libm once a row (how the interpreter ran them before
  ``vector_math``);
* ``NumPy``: the ufunc (its own SIMD kernels where it has them).

Prints a table of nanoseconds per element and, as its final line, a JSON object.

    python perf/bench_operators.py [--rows 4096] [--calls 300] [--repeats 7]
    python perf/bench_operators.py --smoke     # 256 rows, 3 calls, once: that it runs
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

from cadsr_sklearn.expressions.opcodes import (ADD, COS, DIV, EXP, LOG, MUL, NO_CUSTOM,  # noqa: E402
                                               POW, SIN, VARIABLE)
from cadsr_sklearn.expressions.program import forward  # noqa: E402


@numba.njit(nogil=True, error_model="numpy")
def _libm_loop(op, a, b, out, n):
    for r in range(n):
        x = a[r]
        if op == EXP:
            out[r] = math.exp(x)
        elif op == LOG:
            out[r] = math.log(x)
        elif op == POW:
            out[r] = x ** b[r]
        elif op == SIN:
            out[r] = math.sin(x)
        elif op == COS:
            out[r] = math.cos(x)


NUMPY = {EXP: lambda a, b, out: np.exp(a, out=out), LOG: lambda a, b, out: np.log(a, out=out),
         POW: lambda a, b, out: np.power(a, b, out=out), SIN: lambda a, b, out: np.sin(a, out=out),
         COS: lambda a, b, out: np.cos(a, out=out), ADD: lambda a, b, out: np.add(a, b, out=out),
         MUL: lambda a, b, out: np.multiply(a, b, out=out),
         DIV: lambda a, b, out: np.divide(a, b, out=out)}
NAMES = {POW: "pow", EXP: "exp", LOG: "log", SIN: "sin", COS: "cos", ADD: "add", MUL: "mul",
         DIV: "div"}


def _ns_per_element(call, rows: int, calls: int, repeats: int) -> float:
    for _ in range(3):
        call()
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        timings.append((time.perf_counter() - start) / calls / rows * 1e9)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, a few seconds: that the script runs (its test)")
    options = parser.parse_args()
    if options.smoke:
        options.rows, options.calls, options.repeats = 256, 3, 1
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 5, options.rows)
    b = rng.uniform(-3, 3, options.rows)
    out = np.empty(options.rows)
    n = options.rows
    X = np.column_stack([a, b])
    results = {}
    print(f"{'operator':>8} {'interpreter':>12} {'libm loop':>10} {'NumPy':>8}   ns per element")
    for op, name in NAMES.items():
        # program op(x0, x1): node 0 alone is evaluated, over rows 1 and 2 of val
        ops = np.array([op, VARIABLE, VARIABLE], dtype=np.int32)
        args = np.array([1, 0, 1], dtype=np.int32)
        val = np.stack([out, a, b])
        only_the_operator = np.zeros(1, dtype=np.int64)
        figures = {"interpreter": _ns_per_element(
                       lambda: forward(ops, args, X, np.zeros(0), val, only_the_operator,
                                       NO_CUSTOM), n, options.calls, options.repeats),
                   "numpy": _ns_per_element(lambda: NUMPY[op](a, b, out), n, options.calls,
                                            options.repeats)}
        if op in (POW, EXP, LOG, SIN, COS):
            figures["libm_loop"] = _ns_per_element(lambda: _libm_loop(op, a, b, out, n), n,
                                                   options.calls, options.repeats)
        results[name] = {k: round(v, 2) for k, v in figures.items()}
        libm = f"{figures['libm_loop']:10.2f}" if "libm_loop" in figures else f"{'':>10}"
        print(f"{name:>8} {figures['interpreter']:12.2f} {libm} {figures['numpy']:8.2f}")
    print(json.dumps({"benchmark": "operators", "rows": n, "ns_per_element": results}))


if __name__ == "__main__":
    main()
