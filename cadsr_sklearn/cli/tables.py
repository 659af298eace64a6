"""Reading the user's CSV files into numeric tables, every mistake a one-line usage error.

:func:`read_table` reads a file (its delimiter guessed) and refuses what would
silently mislead a fit: a missing, empty or header-only file, repeated column
names. Numbers written with a decimal comma (``1,5``: what spreadsheets write
in much of Europe, with semicolons between columns, or quoted) are read as
such. :func:`numeric` then refuses non-numeric and non-finite values, naming
where they are and how to get past them.
"""

from __future__ import annotations

from pathlib import Path

import re

import numpy as np

from ..user_input import UsageError

__all__ = ["read_table", "numeric"]


def read_table(path: str):
    """The CSV file at ``path`` as a pandas DataFrame, its header as written."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        raise UsageError(
            "reading CSV files needs pandas: pip install 'cadsr-sklearn[pandas]'"
        ) from None
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{path}: no such file")
    if p.is_dir():
        raise UsageError(f"{path}: is a folder, not a CSV file")
    if p.stat().st_size == 0:
        raise UsageError(f"{path}: the file is empty")
    sep = _delimiter(p)
    try:
        df = pd.read_csv(p, sep=sep)
        # The header as written: pandas renames a repeated name "a" to "a.1" and an
        # empty one to "Unnamed: 0", which would hide both mistakes.
        header = pd.read_csv(p, sep=sep, header=None, nrows=1, dtype=str,
                             keep_default_na=False).iloc[0]
    except pd.errors.EmptyDataError:
        raise UsageError(f"{path}: the file is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UsageError(f"{path}: cannot be read as CSV ({first})") from None
    if df.empty:
        raise UsageError(f"{path}: the file has a header but no data rows")
    commas = _decimal_comma_columns(df)
    ambiguous = [c for c in commas if df[c].dropna().astype(str).str.match(_THOUSANDS).all()]
    if ambiguous:  # 1,250 is 1250 in some countries and 1.25 in others: never guess
        raise UsageError(
            f"{path}: column(s) {ambiguous} hold numbers such as "
            f"{df[ambiguous[0]].dropna().iloc[0]!r}, which could be thousands or decimals; "
            "write them without thousands separators, or with a decimal point")
    if commas:
        df = pd.read_csv(p, sep=sep, decimal=",")
    names = [str(c).strip() for c in header]
    repeated = sorted({c for c in names if names.count(c) > 1 and c})
    if repeated:
        raise UsageError(f"{path}: repeated column name(s) {repeated}")
    df.columns = names
    return df


def _delimiter(path: Path) -> str:
    """The file's delimiter among comma, semicolon, tab and bar (comma when unsure)."""
    import csv

    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            sample = f.read(65536)
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except (csv.Error, OSError):
        return ","


_THOUSANDS = re.compile(r"^\s*[-+]?\d{1,3}(?:,\d{3})+\s*$")  # also a decimal comma's form
_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d+,\d*(?:[eE][-+]?\d+)?\s*$")


def _decimal_comma_columns(df) -> list[str]:
    """The text columns whose every value is a number written with a decimal comma."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    return [c for c in df.columns
            if (is_object_dtype(df[c]) or is_string_dtype(df[c]))
            and df[c].dropna().astype(str).str.match(_DECIMAL_COMMA).all()
            and df[c].notna().any()]


def numeric(df, path: str):
    """``df`` itself, once every column is numeric and every value finite.

    The error names the first few bad cells by data row, file line and column.
    """
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    bad = [c for c in df.columns if not (is_numeric_dtype(df[c]) or is_bool_dtype(df[c]))]
    if bad:
        raise UsageError(
            f"{path}: non-numeric column(s) {bad}; leave them out with --drop "
            f"{' '.join(map(_quoted, bad))}, or encode them as numbers")
    values = df.to_numpy(dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        rows, cols = np.nonzero(~finite)
        where = ", ".join(
            f"data row {r + 1} (line {r + 2} of the file) column {df.columns[c]!r}"
            for r, c in list(zip(rows, cols, strict=True))[:3]
        )
        more = " …" if len(rows) > 3 else ""
        raise UsageError(
            f"{path}: missing, NaN or infinite values ({where}{more}); clean or drop them"
        )
    return df


def _quoted(name: str) -> str:
    """A column name as a shell argument."""
    import shlex

    return shlex.quote(str(name))
