"""render_rgb (nertz_env/envs/render.py) and render_mode="rgb_array" of the environments:
shape and dtype, a constant size per table format, card colours and glyphs where a card lies,
PettingZoo's render_test, the Gymnasium env and the vector env's get_images."""
from __future__ import annotations


import numpy as np
import pytest
from pettingzoo.test import render_test

from nertz_env import RulesConfig, Table, nertz_v0
from nertz_env.envs.gym import NertzGymEnv
from nertz_env.envs.render import (BLACK, CARD_FACE, CARD_H, CARD_W, FELT, GLYPHS, OVERLAP, RED,
                                  SUIT_GLYPHS, card_origin, picture_shape, render_rgb)

LAYOUT = {
    "lake": [["AH", "2H@1"]],
    "teams": [
        {"nertz": ["9D", "3H"], "river": [["KS", "QH"], ["7D"], [], ["3C"]],
         "stream": ["4H", "JD", "2S", "8C"], "waste": 2},
        {"nertz": ["KC"], "river": [[], [], [], []], "stream": [], "waste": 0},
    ]}


def card_pixels(img, kind, num_teams, team=0, index=0, depth=0, scale=1, rows=CARD_H):
    y, x = card_origin(kind, num_teams, team, index, depth)
    return img[y * scale:(y + rows) * scale, x * scale:(x + CARD_W) * scale]


def has_colour(region, colour) -> bool:
    return bool((region == np.array(colour, np.uint8)).all(axis=-1).any())


def random_position(config, seed, ticks):
    table = Table.deal(config, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(ticks):
        if table.hand_over:
            break
        table.step({s: rng.choice(table.legal_moves(s)) for s in range(config.num_seats)})
    return table


@pytest.mark.parametrize("num_teams", range(2, 9))
@pytest.mark.parametrize("river_size", [4, 5])
def test_shape_dtype_and_constant_size(num_teams, river_size):
    config = RulesConfig(num_teams=num_teams, river_size=river_size)
    shape = picture_shape(num_teams)
    pictures = []
    for seed, ticks in ((0, 0), (1, 40), (2, 120)):
        table = random_position(config, seed, ticks)
        img = render_rgb(table.layout(), scores=table.hand_scores())
        assert img.shape == shape and img.dtype == np.uint8
        pictures.append(img)
    assert not np.array_equal(pictures[0], pictures[1])          # positions differ, pictures too
    big = render_rgb(table.layout(), scale=2)
    assert big.shape == picture_shape(num_teams, scale=2) == (shape[0] * 2, shape[1] * 2, 3)
    assert np.array_equal(big[::2, ::2], render_rgb(table.layout()))
    # a different hand (roles) and a different river size keep the size
    assert render_rgb(Table.deal(config, seed=5, hand=3).layout()).shape == shape
    other = RulesConfig(num_teams=num_teams, river_size=9 - river_size)
    assert render_rgb(Table.deal(other, seed=5).layout()).shape == shape


def test_cards_in_their_places_with_their_colours():
    img = render_rgb(Table.from_layout(LAYOUT).layout(), scores=[-24, -24])
    assert img.shape == picture_shape(2)
    nertz = card_pixels(img, "nertz", 2, 0)               # 3H: red on white
    assert has_colour(nertz, RED) and has_colour(nertz, CARD_FACE) and not has_colour(nertz, BLACK)
    other = card_pixels(img, "nertz", 2, 1)               # KC: black
    assert has_colour(other, BLACK) and not has_colour(other, RED)
    waste = card_pixels(img, "waste", 2, 0)               # JD (2 of 4 flipped)
    assert has_colour(waste, RED)
    # River column 0: KS under QH, each showing its label strip
    ks = card_pixels(img, "river", 2, 0, 0, 0, rows=OVERLAP)
    qh = card_pixels(img, "river", 2, 0, 0, 1)
    assert has_colour(ks, BLACK) and not has_colour(ks, RED)
    assert has_colour(qh, RED) and not has_colour(qh, BLACK)
    # the empty column 2 and team 1's empty waste are felt inside their outlines
    for region in (card_pixels(img, "river", 2, 0, 2), card_pixels(img, "waste", 2, 1)):
        assert (region[1:-1, 1:-1] == np.array(FELT, np.uint8)).all()
    lake = card_pixels(img, "lake", 2, index=0)           # 2H@1 on AH
    assert has_colour(lake, RED)
    assert (card_pixels(img, "lake", 2, index=1)[1:-1, 1:-1] == np.array(FELT, np.uint8)).all()


def test_rank_and_suit_glyphs_are_drawn():
    layout = {"lake": [], "teams": [
        {"nertz": ["10H"], "river": [[], [], [], []], "stream": [], "waste": 0},
        {"nertz": ["QS"], "river": [[], [], [], []], "stream": [], "waste": 0}]}
    img = render_rgb(layout)
    ten = card_pixels(img, "nertz", 2, 0)
    # the label strip: "1", "0" (5x7 each, 1 px apart) from (2, 2), then the suit at x = 14
    for glyph, x in ((GLYPHS["1"], 2), (GLYPHS["0"], 8)):
        cell = ten[2:9, x:x + 5]
        assert (cell[glyph] == np.array(RED, np.uint8)).all()
        assert (cell[~glyph] == np.array(CARD_FACE, np.uint8)).all()
    suit = ten[2:9, 14:21]
    assert (suit[SUIT_GLYPHS[1]] == np.array(RED, np.uint8)).all()
    queen = card_pixels(img, "nertz", 2, 1)
    assert (queen[2:9, 2:7][GLYPHS["Q"]] == np.array(BLACK, np.uint8)).all()
    assert (queen[2:9, 8:15][SUIT_GLYPHS[0]] == np.array(BLACK, np.uint8)).all()
    # the cards differ where their labels differ, and a card is not blank
    assert not np.array_equal(ten, queen)
    assert (ten[1:-1, 1:-1] != np.array(CARD_FACE, np.uint8)).any(axis=-1).sum() > 60


def test_bad_input():
    with pytest.raises(ValueError, match="scale"):
        render_rgb(LAYOUT, scale=0)
    with pytest.raises(ValueError, match="num_teams"):
        picture_shape(9)


def test_pettingzoo_render_test_with_rgb_array():
    env = nertz_v0.parallel_env(num_teams=3)
    assert "rgb_array" in env.metadata["render_modes"] and "render_fps" in env.metadata
    render_test(lambda render_mode=None: nertz_v0.env(render_mode=render_mode, num_teams=3,
                                                       max_ticks=30))
    par = nertz_v0.parallel_env(num_teams=3, render_mode="rgb_array")
    par.reset(seed=0)
    first = par.render()
    assert first.shape == picture_shape(3) and first.dtype == np.uint8
    assert np.array_equal(first, render_rgb(par.table.layout(), scores=par.table.hand_scores()))
    shapes = set()
    for _ in range(30):
        par.step({a: int(np.flatnonzero(par.table.action_mask(i))[-1])
                  for i, a in enumerate(par.agents)})
        shapes.add(par.render().shape)
    assert shapes == {first.shape} and not np.array_equal(par.render(), first)


def test_gym_env_rgb_array():
    env = NertzGymEnv(num_teams=4, render_mode="rgb_array", max_ticks=200, learner_seat=2)
    assert env.metadata["render_fps"] == 4 and "rgb_array" in env.metadata["render_modes"]
    obs, info = env.reset(seed=1)
    first = env.render()
    assert first.shape == picture_shape(4) and first.dtype == np.uint8
    frames = [first]
    for _ in range(60):
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        frames.append(env.render())
        if term or trunc:
            break
    assert {f.shape for f in frames} == {first.shape}
    assert not np.array_equal(frames[0], frames[-1])
    # a layout reset shows the layout's cards
    env2 = NertzGymEnv(num_teams=2, render_mode="rgb_array")
    env2.reset(seed=0, options={"layout": LAYOUT})
    assert np.array_equal(card_pixels(env2.render(), "nertz", 2, 0),
                          card_pixels(render_rgb(LAYOUT), "nertz", 2, 0))


def test_vector_env_get_images():
    pytest.importorskip("stable_baselines3")
    from nertz_env.envs.vector import NertzVecEnv
    venv = NertzVecEnv(num_envs=3, seed=0, num_teams=2, max_ticks=100)
    venv.reset()
    for _ in range(5):
        venv.step(np.zeros(3, np.int64))
    images = venv.get_images()
    assert len(images) == 3 and {im.shape for im in images} == {picture_shape(2)}
    assert not np.array_equal(images[0], images[1])                # different deals
