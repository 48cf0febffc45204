import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("suite", max_examples=60, deadline=None)
settings.load_profile("suite")


@pytest.fixture
def rng():
    # One explicit stream per test: reruns give the same numbers.
    return np.random.default_rng(np.random.SeedSequence(20261201))
