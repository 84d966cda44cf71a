"""NertzGymEnv's errors for opponent strings the core does not play (#40): make_agent is
suggested only for the kinds it makes and that the env then takes (models: ppo:, learned,
rllib:), a pair: team is said to need a seat of a team of two, and an unknown kind is called
unknown with the kinds the env takes listed (the old line suggested make_agent('nosuch'),
which fails too)."""
from __future__ import annotations

import pytest

from nertz_env.envs.gym import NertzGymEnv


def error_of(**kwargs) -> str:
    with pytest.raises(ValueError) as err:
        NertzGymEnv(**kwargs)
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("spec", ["nosuch", "greedy+heuristic", "pox:m.npz"])
def test_an_unknown_kind_is_called_unknown_and_the_kinds_listed(spec):
    text = error_of(opponents=spec)
    kind = spec.partition(":")[0]
    assert text.startswith(f"opponents: {spec!r}: unknown kind {kind!r}; this env takes")
    assert "make_agent(" not in text                  # never suggests what fails too
    for kind in ("random", "greedy", "heuristic", "ppo:", "learned", "rllib:", "pair:"):
        assert kind in text


def test_pair_at_a_solo_seat_says_it_needs_a_team_of_two():
    text = error_of(opponents="pair:greedy&random")
    assert text.startswith("opponents: 'pair:greedy&random' is a two-player team (R4) and "
                           "seat 1 is a solo team's; a pair plays only at the seats of a team "
                           "of two")
    assert "make_agent('pair" not in text


def test_pair_at_a_team_of_two_points_to_make_agent():
    text = error_of(opponents={1: "pair:greedy&random"}, team_sizes=(1, 2))
    assert "seat 1 (a team of two)" in text
    assert "agents.registry.make_agent('pair:greedy&random')" in text


@pytest.mark.parametrize("spec", ["ppo:m.npz", "learned", "learned:model=generalist",
                                  "rllib:ckpt"])
def test_a_model_kind_points_to_make_agent(spec):
    text = error_of(opponents=[spec])
    assert text == (f"opponents[0]: {spec!r} is a model, not a bot the core plays; NertzGymEnv "
                    f"takes it as an object: give agents.registry.make_agent({spec!r}) instead")


def test_a_core_bots_bad_options_keep_their_own_line():
    text = error_of(opponents="heuristic:style=zzz")
    assert text.startswith("opponents: agent 'heuristic:style=zzz': style 'zzz' is unknown")
    assert "make_agent" not in text


def test_the_suggested_make_agent_calls_work():
    """Every make_agent the errors suggest builds an agent the env then takes."""
    registry = pytest.importorskip("agents.registry")
    env = NertzGymEnv(opponents={2: registry.make_agent("pair:greedy&random")},
                      team_sizes=(1, 2))
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(ValueError, match="unknown kind 'nosuch'"):
        registry.make_agent("nosuch")                # what the old line suggested
