"""bench/round_halves.py: the chance of a disagreement between the halves of a comparison's rounds when
their order carries nothing, and the distribution of the count over comparisons."""

from __future__ import annotations

import importlib.util
import itertools
import math

import numpy as np
import pytest

from conftest import REPO

spec = importlib.util.spec_from_file_location("round_halves", REPO / "bench" / "round_halves.py")
round_halves = importlib.util.module_from_spec(spec)
spec.loader.exec_module(round_halves)


def test_the_count_of_disagreements_is_poisson_binomial_by_enumeration():
    chances = [0.1, 0.5, 0.25]
    pmf = round_halves.poisson_binomial(chances)
    by_hand = np.zeros(4)
    for outcome in itertools.product([0, 1], repeat=3):  # every outcome of the three trials
        by_hand[sum(outcome)] += math.prod(p if o else 1 - p for p, o in zip(chances, outcome))
    assert pmf == pytest.approx(by_hand)
    said = round_halves.chance_summary(2, chances)
    assert said["mean"] == pytest.approx(0.85)
    assert said["p_at_least"] == pytest.approx(by_hand[2] + by_hand[3])


def test_every_split_into_halves_of_the_same_sizes_or_a_sample_of_them():
    rng = np.random.default_rng(1)
    every = round_halves.splits(6, 100, rng)
    assert len(every) == math.comb(6, 3) == 20 and len(set(every)) == 20
    assert round_halves.splits(7, 100, rng)[0] == (0, 1, 2, 3)  # ceil(7 / 2) rounds in the first half
    drawn = round_halves.splits(15, 50, rng)
    assert len(drawn) == len(set(drawn)) == 50 and all(len(first) == 8 for first in drawn)


def test_a_ratio_the_same_in_every_round_never_disagrees_and_a_sign_that_flips_with_the_half_does():
    rng = np.random.default_rng(2)
    base = np.array([100.0, 101, 99, 100, 102, 98])
    steady = base * 1.05 * np.array([1.0, 1.001, 0.999, 1.0, 1.002, 0.998])
    assert round_halves.chance_of_disagreement(steady, base, 100, rng) == 0.0
    # +3 % in three rounds, -3 % in the other three: the halves split by round disagree; of the 20 splits
    # only the two that keep the signs apart do (in the others each half's widest interval holds 1)
    flips = base * np.array([1.03, 1.03, 1.03, 0.97, 0.97, 0.97])
    first = round_halves._half(flips[:3], base[:3])
    second = round_halves._half(flips[3:], base[3:])
    assert not round_halves._agree(first, second)
    assert round_halves.chance_of_disagreement(flips, base, 100, rng) == pytest.approx(2 / 20)
