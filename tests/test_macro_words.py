"""The numbers spelt in numbers.tex's macro names (stats.claims.macro_words)."""

import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

from stats.claims.macro_words import number_word


def test_the_widths_are_spelt_as_they_are_said():
    # the names numbers.tex has always carried (an author's \satNoneMeanTenTwentyFour must not move)
    said = {4: "Four", 16: "Sixteen", 32: "ThirtyTwo", 64: "SixtyFour", 128: "OneTwentyEight", 256: "TwoFiftySix",
            512: "FiveTwelve", 1024: "TenTwentyFour"}
    assert {n: number_word(n) for n in said} == said
    assert [number_word(n) for n in (1, 19, 20, 100, 105, 110, 2048, 9999)] == [
        "One", "Nineteen", "Twenty", "OneHundred", "OneOhFive", "OneTen", "TwentyFortyEight", "NinetyNineNinetyNine"]


def test_distinct_numbers_are_spelt_distinctly_in_letters_only():
    words = [number_word(n) for n in range(1, 10000)]
    assert len(set(words)) == len(words)
    assert all(re.fullmatch(r"[A-Z][A-Za-z]*", w) for w in words)


@given(st.integers(1, 9999))
def test_numpy_integers_are_spelt_as_ints(n):
    assert number_word(np.int64(n)) == number_word(n)


@pytest.mark.parametrize("n", [0, -4, 10000])
def test_a_number_past_the_words_is_refused_by_name(n):
    with pytest.raises(ValueError, match=rf"n must lie in \[1, 9999\].*got {n}"):
        number_word(n)


@pytest.mark.parametrize("n", [64.0, "64", True, None])
def test_a_non_integer_is_refused_by_name(n):
    with pytest.raises(TypeError, match="n must be an integer"):
        number_word(n)
