"""A whole search as bytes or a file: warm starts, checkpoints and resuming.

A :class:`~cadsr_sklearn.search.build.Search` holds the search's pieces (token
library, policy, sampler, scorer with the constant fitter and its caches) and
the loop's state between epochs (optimizer, θ_ref, replay buffer, τ*, hall of
fame, counters). Together with the random generators (the sampler's torch
generator, the constant fitter's NumPy generator) that is everything the next
epoch depends on, so a search written after epoch k and read again runs epoch
k + 1 exactly as the uninterrupted search would have (on the same kind of
device: CPU and CUDA draw different random numbers).

A checkpoint file is a pickled :class:`Checkpoint`; it carries the package
version and a fingerprint of the training data, and is only resumed with the
same version and data. Files are replaced atomically
(written beside the target, flushed to disk, renamed over it): a crash while
writing leaves the previous checkpoint intact.

The pickle is sealed (:func:`dumps`): a header, its length and its SHA-256
come first, and :func:`loads` checks them before it unpickles anything. A
file cut short (a full disk, a copy interrupted) or with bytes changed (a
failing disk, a bad transfer) is refused with one ValueError that says so,
where unpickling it could have raised anything (EOFError, TypeError,
MemoryError, an AssertionError of torch), or loaded a search with corrupted
weights without a word. Bytes without the header, from before it, are
unpickled as they are, any failure a ValueError.

Checkpoints are pickles, and a pickle runs code when it is loaded: the seal
finds corruption, not forgery (anyone can write a sealed pickle of their own),
so load only checkpoints you trust, as you would a script. The data to share
is a formula file (:mod:`cadsr_sklearn.reporting.formula_file`), which is data.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import struct
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .._version import __version__
from ..user_warning import warn_user
from .build import Search

__all__ = ["Checkpoint", "CheckpointWriter", "HEADER", "data_fingerprint", "dumps",
           "dumps_for_warm_start", "loads", "read", "write"]


@dataclass
class Checkpoint:
    """A search in a file, with what says whether it can be resumed here."""

    version: str  # the package version that wrote it
    fingerprint: str  # of the training data (:func:`data_fingerprint`)
    search: Search


def data_fingerprint(X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None) -> str:
    """A digest of the training data: a search is only resumed on the data it ran on."""
    digest = hashlib.sha256()
    for array in (X, y, sample_weight):
        if array is None:
            digest.update(b"none")
            continue
        array = np.ascontiguousarray(array, dtype=np.float64)
        digest.update(repr(array.shape).encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


#: What a sealed checkpoint starts with; the pickle's length and SHA-256 follow.
HEADER = b"cadsr-sklearn checkpoint 1\n"
_SEAL = struct.Struct(">Q32s")  # the pickle's length in bytes, and its SHA-256


def dumps(checkpoint: Checkpoint) -> bytes:
    """The checkpoint as bytes: what a warm start keeps, and what a file holds.

    A plain pickle, sealed: :data:`HEADER`, the pickle's length and SHA-256,
    then the pickle (see the module's docstring). Not :func:`torch.save`,
    which calls back into Python for every object, and a search holds tens of
    thousands (the scorer's cache of fitted formulas): three times slower.
    """
    payload = pickle.dumps(checkpoint, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER + _SEAL.pack(len(payload), hashlib.sha256(payload).digest()) + payload


def dumps_for_warm_start(search: Search, fingerprint: str) -> bytes | None:
    """The search as :func:`dumps` bytes, for ``warm_start`` to continue; None when it
    cannot be written (an object that cannot be pickled), with a warning: the fit that
    ran it keeps its result, and the next fit starts afresh."""
    try:
        return dumps(Checkpoint(__version__, fingerprint, search))
    except Exception as err:  # noqa: BLE001 - the search is done: keep its result
        warn_user(f"warm_start cannot keep this search ({_reason(err)}); the "
                  "result of this fit is kept, and the next fit starts afresh.", RuntimeWarning)
        return None


def loads(data: bytes, device: torch.device, source: str = "The saved search") -> Checkpoint:
    """The checkpoint in ``data`` (from :func:`dumps`), to go on on ``device``.

    Raises ValueError, its message starting with ``source``, for bytes that are
    not a checkpoint (or one cut short or corrupted: their seal does not match),
    not one of this package's version, or a search that ran on another kind of
    device (CPU and CUDA draw different random numbers).
    """
    checkpoint = _unpickled(_payload(data, source), source)
    if not (isinstance(checkpoint, Checkpoint) and isinstance(checkpoint.version, str)
            and isinstance(checkpoint.fingerprint, str)
            and isinstance(checkpoint.search, Search)):
        raise ValueError(f"{source} is not a cadsr-sklearn checkpoint.")
    if checkpoint.version != __version__:
        raise ValueError(f"{source} was written by cadsr-sklearn {checkpoint.version}; this is "
                         f"{__version__}. Go on with it in that version.")
    ran_on, asked = checkpoint.search.generator.device.type, torch.device(device).type
    if ran_on != asked:
        raise ValueError(f"{source} ran on {ran_on}; it can only go on on {ran_on}, not on "
                         f"{asked} (the random numbers differ). Pass device={ran_on!r}.")
    return checkpoint


def _payload(data: bytes, source: str) -> memoryview:
    """The pickle in sealed ``data``, once its length and SHA-256 are what was written
    (unsealed bytes, from before the seal, as they are); a view, not a copy."""
    view = memoryview(data)
    if not data.startswith(HEADER):
        if data[:1] == b"\x80":  # a pickle of protocol 2 or later, as dumps wrote before
            return view
        raise ValueError(f"{source} is not a readable cadsr-sklearn checkpoint (it does not "
                         "start as one).")
    sealed = view[len(HEADER):len(HEADER) + _SEAL.size]
    payload = view[len(HEADER) + _SEAL.size:]
    if len(sealed) < _SEAL.size:
        raise ValueError(f"{source} is not a readable cadsr-sklearn checkpoint: it is cut "
                         f"short ({len(data)} bytes, and its header alone is longer).")
    length, digest = _SEAL.unpack(sealed)
    if len(payload) != length:
        raise ValueError(f"{source} is not a readable cadsr-sklearn checkpoint: it is "
                         f"{'cut short' if len(payload) < length else 'longer than written'} "
                         f"({len(payload)} bytes of search where {length} were written).")
    if hashlib.sha256(payload).digest() != digest:
        raise ValueError(f"{source} is not a readable cadsr-sklearn checkpoint: it is "
                         "corrupted (its bytes are not those written: their SHA-256 differs).")
    return payload


def _unpickled(payload: memoryview, source: str):
    try:
        return pickle.loads(payload)
    except Exception as err:  # noqa: BLE001 - a pickle can fail in any way: one message
        raise ValueError(f"{source} is not a readable cadsr-sklearn checkpoint "
                         f"({_reason(err)}).") from None


def write(path: str | os.PathLike, checkpoint: Checkpoint) -> None:
    """Write ``checkpoint`` to ``path`` atomically: the old file stays whole until replaced."""
    write_atomically(path, dumps(checkpoint))


def write_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file renamed over it: a reader (or a
    crash) sees the old file or the new one, never half of one."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                         dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read(path: str | os.PathLike, device: torch.device) -> Checkpoint:
    """The checkpoint in the file ``path``, to go on on ``device`` (see :func:`loads`)."""
    source = f"The checkpoint {os.fspath(path)!r}"
    return loads(Path(path).read_bytes(), device, source)


class CheckpointWriter:
    """Writes a search to ``path`` every ``every`` seconds of a call and when its loop ends.

    ``every=0`` writes after every epoch. At most one interval of work is lost
    to a crash. A write that fails with an :class:`OSError` (a full disk, a lost
    network mount) is reported with a :class:`RuntimeWarning` and tried again
    at the next interval. Any other failure (an object of the search that
    cannot be pickled, :class:`MemoryError`) would fail again: it is reported
    once, and checkpointing stops for this fit. Either way the search goes on
    to its result, and the last checkpoint written stays whole.
    """

    def __init__(self, path: str | os.PathLike, every: float, fingerprint: str) -> None:
        self.path, self.every, self.fingerprint = Path(path), float(every), fingerprint
        self._last = time.monotonic()
        self._given_up = False

    def due(self) -> bool:
        """Whether the interval since the last write is up."""
        return not self._given_up and time.monotonic() - self._last >= self.every

    def after_epoch(self, search: Search) -> None:
        if self.due():
            self.write(search)

    def write(self, search: Search) -> None:
        if self._given_up:
            return
        self._last = time.monotonic()
        try:
            write(self.path, Checkpoint(__version__, self.fingerprint, search))
        except OSError as err:
            warn_user(f"Could not write the checkpoint {os.fspath(self.path)!r} ({err}); "
                      "the search goes on and tries again at the next interval.", RuntimeWarning)
        except Exception as err:  # noqa: BLE001 - hours of search must not end in a failed save
            self._given_up = True
            warn_user(f"Could not write the checkpoint {os.fspath(self.path)!r} "
                      f"({_reason(err)}); the search goes on without "
                      "checkpoints, and its result is kept. The last checkpoint written, "
                      "if any, is whole but older.", RuntimeWarning)


def _reason(error: Exception) -> str:
    """``error`` for a message: its type, and what it says if anything (MemoryError: nothing)."""
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
