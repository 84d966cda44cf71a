"""Deal keys (agents/arena/deals.py): the hand keys are the core's splitmix64 outputs,
bit for bit, and a deal's keys do not depend on how many deals are drawn."""
from __future__ import annotations

import numpy as np
import pytest

from agents.arena.deals import DealKeys, deal_keys, hand_keys

MASK = 2**64 - 1


def splitmix64(state: int, h: int) -> int:
    """The published splitmix64 (Vigna), in Python ints: output h of a generator at state."""
    z = (state + h * 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def test_hand_keys_are_splitmix64_of_the_deal_key_bit_for_bit():
    keys = np.array([0, 1, 2**63 - 1, 2**63, MASK, 0x9E3779B97F4A7C15, 12345678901234567],
                    np.uint64)
    got = hand_keys(keys, 6)
    assert got.dtype == np.uint64 and got.shape == (7, 6)
    for e, k in enumerate(keys.tolist()):
        assert int(got[e, 0]) == k                                # hand 0 keeps the deal key
        assert [int(x) for x in got[e, 1:]] == [splitmix64(k, h) for h in range(1, 6)]
    assert splitmix64(0, 1) == 0xE220A8397B1DCDAF                # the reference's first output


def test_hand_keys_of_one_deal_do_not_depend_on_the_others():
    _, pk = deal_keys(3, 9)
    whole = hand_keys(pk, 4)
    for d in range(9):
        np.testing.assert_array_equal(hand_keys(pk[d:d + 1], 4)[0], whole[d])
    assert hand_keys(pk, 1).tolist() == pk[:, None].tolist()
    assert hand_keys(pk, 0).shape == (9, 0)


@pytest.mark.parametrize("lo, hi", [(0, 5), (3, 8), (7, 8)])
def test_a_block_of_deals_has_the_keys_of_a_whole_run(lo, hi):
    dk, pk = deal_keys(11, 8)
    keys = DealKeys.of(11, lo, hi, 3)
    deals = np.arange(hi - 1, lo - 1, -1)
    got_d, got_h = keys.rows(deals)
    np.testing.assert_array_equal(got_d, dk[deals])
    np.testing.assert_array_equal(got_h, hand_keys(pk, 3)[deals])
    np.testing.assert_array_equal(deal_keys(11, hi)[0], dk[:hi])
