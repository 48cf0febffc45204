r"""Random streams: explicit seeds, stable keys, one independent stream per block.

Every simulation has a *key*, a string spelled out field by field by the simulation
itself (never ``repr`` of an object), for example
``"scores/d_k=64/rho=0.5/entries=gaussian/sigma_q=1.5/sigma_k=0.8/method=direct"``.
The key's SHA-256 digest, cut into four 32-bit words, is appended to the root seed's
spawn key, so a simulation's draws depend on ``(seed, key)`` only: not on which other
simulations run, nor in which order.

Rows are grouped in fixed blocks (:data:`BLOCK_ROWS` unless a simulation says
otherwise).  Block ``b`` owns streams ``(b, 0), (b, 1), ...`` spawned from the
simulation's seed sequence, one per kind of random number it needs (queries, key noise,
...).  Blocks are therefore independent and addressable: any set of workers can compute
any set of blocks, and merging them in block order gives the same bytes.
"""

from __future__ import annotations

import hashlib
import math
import numbers

import numpy as np

from .._validation import check_integer, check_seed_sequence

__all__ = [
    "BIT_GENERATOR",
    "BLOCK_ROWS",
    "as_seed_sequence",
    "block_generator",
    "block_seed_sequence",
    "canonical",
    "key_words",
    "simulation_seed",
    "stream_key",
]

BLOCK_ROWS = 8192
#: The bit generator behind every stream.  SFC64 is the fastest of numpy's generators on
#: these machines (``make bench`` measures it against PCG64, PCG64DXSM, Philox and
#: MT19937) and passes the suite's own calibration (``python -m stats calibrate``).
BIT_GENERATOR = np.random.SFC64


def as_seed_sequence(seed):
    """``seed`` as a :class:`numpy.random.SeedSequence` (a non-negative int or a SeedSequence; never None)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be a non-negative int or a numpy SeedSequence; got {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed}")
    return np.random.SeedSequence(int(seed))


def canonical(value):
    """A value's canonical text in a stream key: ints plainly, floats by their shortest
    round-tripping repr (stable across Python versions), objects by their ``label``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"a stream key's field cannot hold a non-finite number; got {v}")
        return repr(v + 0.0)  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, str):
        return value
    if value is None:
        return "none"
    label = getattr(value, "label", None)
    if isinstance(label, str):
        return label
    raise TypeError(f"no canonical stream-key text for {type(value).__name__}")


def stream_key(kind, **fields):
    """``kind/name=value/...`` with the fields in the order given (the caller fixes it)."""
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"kind must be a non-empty string naming the simulation; got {kind!r}")
    parts = [kind]
    for name, v in fields.items():
        try:
            parts.append(f"{name}={canonical(v)}")
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name}: {exc}") from None
    return "/".join(parts)


def key_words(key):
    """Four 32-bit words of the key's SHA-256 digest."""
    if not isinstance(key, str) or not key:
        raise TypeError(f"a stream key must be a non-empty string; got {key!r}")
    digest = hashlib.sha256(key.encode()).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))


def simulation_seed(seed, key):
    """The seed sequence of the simulation named ``key`` under the root ``seed``."""
    root = as_seed_sequence(seed)
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, *key_words(key)))


def block_seed_sequence(sim_seed, block, stream=0):
    """The SeedSequence of stream ``stream`` of block ``block`` of a simulation (what
    :func:`block_generator` draws from, for a caller that spawns its own streams from it)."""
    check_seed_sequence(sim_seed)
    block = check_integer(block, "block", minimum=0, maximum=(1 << 63) - 1, what="a non-negative integer")
    stream = check_integer(stream, "stream", minimum=0, maximum=(1 << 32) - 1, what="a non-negative integer")
    return np.random.SeedSequence(sim_seed.entropy, spawn_key=(*sim_seed.spawn_key, int(block), int(stream)))


def block_generator(sim_seed, block, stream=0):
    """Generator for stream ``stream`` of block ``block`` of a simulation."""
    return np.random.Generator(BIT_GENERATOR(block_seed_sequence(sim_seed, block, stream)))

