"""Where the search runs: the torch device, and how many threads torch uses there."""

from __future__ import annotations

from contextlib import contextmanager

import torch

__all__ = ["resolve_device", "torch_threads"]


def resolve_device(device: str | torch.device) -> torch.device:
    """Turn ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"mps"`` into a usable device.

    ``"auto"`` picks CUDA when available, else CPU. A requested device that
    is absent raises ``ValueError``.
    """
    if isinstance(device, torch.device):
        device = str(device)
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(
            f"Unknown device {device!r}; use 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'."
        ) from None
    if dev.type == "cpu":
        return dev
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"device={device!r} was requested but CUDA is not available here.")
        index = 0 if dev.index is None else dev.index
        if index >= torch.cuda.device_count():
            raise ValueError(
                f"device={device!r} was requested but only {torch.cuda.device_count()} "
                "CUDA device(s) exist."
            )
        return torch.device("cuda", index)
    if dev.type == "mps":
        if not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
            raise ValueError("device='mps' was requested but MPS is not available here.")
        return dev
    raise ValueError(
        f"Unsupported device {device!r}; use 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'."
    )


@contextmanager
def torch_threads(n: int | None):
    """Run torch on ``n`` intra-op threads inside the block (``None``: leave as is).

    The policy is tiny (E = 10), so extra threads mostly spin: on 2 cores one
    thread samples as fast as two when idle and several times faster under any
    other load (cross-validation, benchmarks). One thread also makes CPU runs
    independent of the machine's core count, which keeps results reproducible.
    """
    if n is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
