"""agents/constraints.py: each constraint forbids exactly the moves its definition names, checked
against a reference that reads the engine's state (not the observation the kernel decodes)
over thousands of positions of random play; a constrained agent never plays a forbidden
move; bad names are ValueErrors that list the constraints."""
from __future__ import annotations

import numpy as np
import pytest

from agents.constraints import CONSTRAINTS, check_constraint, constrain
from nertz_env.actions import decode
from nertz_env.config import RulesConfig
from nertz_env.encoding import NO_CARD, SRC_NERTZ, SRC_RIVER0, SRC_WASTE
from nertz_env.core.observe import SELF_HOLDS_STREAM
from nertz_env.engine import Engine

RED = {1, 2}


def fits(card, top):
    """R11: card builds on top (one rank lower, opposite colour)."""
    return (top % 13 == card % 13 + 1) and ((top // 13) in RED) != ((card // 13) in RED)


def reference(name, st, e, t, mask, config=None, seat=0):
    """The constrained mask of team t (seat `seat`) at table e, from the engine's state
    arrays."""
    river, n = st.river[e, t], st.river_n[e, t]

    def top(src):                                   # R9's available card of a source
        if src == SRC_NERTZ:
            k = st.nertz_n[e, t]
            return int(st.nertz[e, t, k - 1]) if k else NO_CARD
        if src == SRC_WASTE:
            k = st.waste_n[e, t]
            return int(st.stream[e, t, k - 1]) if k else NO_CARD
        k = n[src - SRC_RIVER0]
        return int(river[src - SRC_RIVER0, k - 1]) if k else NO_CARD

    n_top, w_top = top(SRC_NERTZ), top(SRC_WASTE)
    legal = np.flatnonzero(mask)
    kinds = {a: decode(a) for a in legal}

    def forbidden(a):
        kind, src, dst, index, length = kinds[a]
        if name == "useful-shifts":
            if kind != "shift":
                return False
            if n_top == NO_CARD:
                return True
            if index == 0:
                return n[dst] == 0 or fits(n_top, top(SRC_RIVER0 + dst))
            return not fits(n_top, int(river[src - SRC_RIVER0, index - 1]))
        if name == "never-withhold":
            if not any(kinds[b][0] == "lake" and kinds[b][1] == SRC_WASTE for b in legal):
                return False
            return not ((kind == "lake" and src == SRC_WASTE) or kind == "call")
        if name == "keep-river":
            if n_top == NO_CARD or kind not in ("lake", "stack"):
                return False
            for c in range(len(n)):
                home = top(SRC_RIVER0 + c)
                if home == NO_CARD or not fits(n_top, home):
                    continue
                if kind == "lake" and src == SRC_RIVER0 + c:
                    return True
                if kind == "stack":
                    bottom = top(src)
                    d = home % 13 - bottom % 13
                    if home // 13 == bottom // 13 and 0 <= d < length:
                        return True
            return False
        if name == "split-roles":
            if config.sizes[t] != 2 or kind not in ("lake", "build", "shift", "stack"):
                return False
            first = sum(config.sizes[:t])
            hand = int(st.hand[e])           # R4: the second seat holds the Stream in even hands
            stream = first if (config.alternate_roles and hand % 2 == 1) else first + 1
            if seat == stream:
                return kind in ("shift", "stack") or src != SRC_WASTE
            if src == SRC_WASTE:
                return True
            if kind == "stack" and w_top != NO_CARD:
                bottom = top(src)
                d = w_top % 13 - bottom % 13
                return w_top // 13 == bottom // 13 and 0 <= d < length
            return False
        if name == "own-piles":
            if config.sizes[t] != 2 or kind not in ("lake", "build", "stack"):
                return False
            first = sum(config.sizes[:t])
            hand = int(st.hand[e])
            stream = first if (config.alternate_roles and hand % 2 == 1) else first + 1
            pile, card = (SRC_NERTZ, n_top) if seat == stream else (SRC_WASTE, w_top)
            if src == pile:
                return True
            if kind == "stack" and card != NO_CARD:
                bottom = top(src)
                d = card % 13 - bottom % 13
                return card // 13 == bottom // 13 and 0 <= d < length
            return False
        assert name == "keep-stream"
        if w_top == NO_CARD or n_top == NO_CARD or not fits(n_top, w_top):
            return False
        if not any(kinds[b][0] == "build" and kinds[b][1] == SRC_WASTE for b in legal):
            return False
        if kind == "lake":
            return src == SRC_WASTE
        if kind == "stack":
            bottom = top(src)
            d = w_top % 13 - bottom % 13
            return w_top // 13 == bottom // 13 and 0 <= d < length
        return False

    out = mask.astype(bool).copy()
    for a in legal:
        if forbidden(a):
            out[a] = False
    return out if out.any() else mask.astype(bool)


def positions(config, tables=48, ticks=160, seed=0, seat=0, hands=None):
    """(state copies, observations, masks) of one seat over random play, every 4th tick
    (hands: the tables' hand numbers, R4's roles; default 0)."""
    eng = Engine(config, n_tables=tables, seed=seed, parallel=False)
    eng.reset(seed=seed, hands=hands)
    rng = np.random.default_rng(seed)
    S = config.num_seats
    for tick in range(ticks):
        if tick % 4 == 0:
            obs = eng.observe(seat)[:, 0].copy()
            yield eng.state, obs, eng.masks[:, seat].copy()
        acts = np.zeros((tables, S), np.int64)
        for e in range(tables):
            for s in range(S):
                legal = np.flatnonzero(eng.masks[e, s])
                # lean towards the Lake, then card moves, so the Lake grows, Rivers fill and
                # every constraint's situation comes up
                for pick in (legal[(legal >= 3) & (legal < 10)], legal[legal >= 3], legal):
                    if pick.size and (pick is legal or rng.random() < 0.7):
                        acts[e, s] = rng.choice(pick)
                        break
        eng.step(acts)


TEAM_OF_TWO = ("split-roles", "own-piles")      # what they forbid needs a two-player team


@pytest.mark.parametrize("name", [n for n in CONSTRAINTS if n not in TEAM_OF_TWO])
@pytest.mark.parametrize("config", [RulesConfig(num_teams=2), RulesConfig(num_teams=3,
                                    river_size=5, stacking=True)], ids=["2teams", "river5"])
def test_constraint_matches_its_definition_over_random_play(name, config):
    rows = forbidden = 0
    # keep-river's position (a River top the Nertz top builds on, playable to the Lake) is
    # rare in random play (0 to 3 in 5,000 positions), so it gets three longer runs
    runs = [{"seed": s, "ticks": 400} for s in (1, 3, 5)] if name == "keep-river" else [{}]
    for st, obs, masks in (p for run in runs for p in positions(config, **run)):
        got = constrain(obs, masks, name)
        for e in range(obs.shape[0]):
            want = reference(name, st, e, int(config.seat_team[0]), masks[e])
            np.testing.assert_array_equal(got[e], want, err_msg=f"{name}, table {e}")
            forbidden += int(masks[e].sum() - want.sum())
        rows += obs.shape[0]
        assert got.dtype == np.bool_ and not (got & ~masks.astype(bool)).any()
    assert rows >= 1000
    assert forbidden > 0, f"{name} forbade nothing in {rows} positions: the test is vacuous"


@pytest.mark.parametrize("name", TEAM_OF_TWO)
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_split_roles_matches_its_definition_over_random_play(seat, name):
    """Both roles of a two-player team (R4 alternates them by hand: the positions span hands
    0 and 1) and a solo seat beside them, which the constraint leaves alone."""
    config = RulesConfig(num_teams=2, team_sizes=(2, 1))
    rows = forbidden = 0
    roles = set()
    for st, obs, masks in positions(config, seed=seat, seat=seat, hands=np.arange(48) % 2):
        got = constrain(obs, masks, name)
        t = int(config.seat_team[seat])
        for e in range(obs.shape[0]):
            want = reference(name, st, e, t, masks[e], config, seat)
            np.testing.assert_array_equal(got[e], want, err_msg=f"seat {seat}, table {e}")
            forbidden += int(masks[e].sum() - want.sum())
            roles.add(int(obs[e, SELF_HOLDS_STREAM]))
        rows += obs.shape[0]
    assert rows >= 1000
    if seat == 2:
        assert forbidden == 0
    else:
        assert forbidden > 0 and roles == {0, 1}, (forbidden, roles)


def _team_of_two_moves(layout, name):
    """{seat: (its legal moves, those the constraint keeps)} for seats 0 and 1 of a team of
    two (beside a solo team) laid out in hand 0, as move text."""
    from nertz_env import Table
    table = Table.from_layout(layout, RulesConfig(num_teams=2, team_sizes=(2, 1)))
    eng = table.engine
    moves = {}
    for seat in (0, 1):
        mask = eng.masks[:, seat].copy()
        keep = constrain(eng.observe(seat)[:, 0].copy(), mask, name)[0]
        moves[seat] = ({str(table.decode(int(a))) for a in np.flatnonzero(mask[0])},
                       {str(table.decode(int(a))) for a in np.flatnonzero(keep)})
    return moves


def test_split_roles_from_a_layout():
    """A team of two in hand 0: seat 1 holds the Stream (5H on the waste), seat 0 the Nertz
    pile (4S, which builds on 5H): the Stream holder plays 5H to the Lake or the River but
    shifts no River card; the Nertz holder shifts the River but leaves 5H alone."""
    layout = {"lake": [["AH", "2H", "3H", "4H"]],
              "teams": [{"nertz": ["9D", "4S"], "river": [["6C"], ["KD"], ["QS"], ["JH"]],
                         "stream": ["5H", "8D"], "waste": 1}, OTHER]}
    moves = _team_of_two_moves(layout, "split-roles")
    legal, nertz_holder = moves[0]
    assert {"waste>lake", "waste>river0", "river3:0>river2"} <= legal
    assert legal - nertz_holder == {"waste>lake", "waste>river0"}
    legal, stream_holder = moves[1]
    assert {"flip", "waste>lake", "waste>river0", "river3:0>river2"} <= legal
    assert legal - stream_holder == {m for m in legal if ":" in m}     # every River shift


def test_own_piles_from_a_layout():
    """A team of two in hand 0: seat 0 holds the Nertz pile (4S, which builds on the waste's
    5H and on column 3's 5D), seat 1 the Stream: the Nertz holder leaves 5H alone, the Stream
    holder leaves 4S alone; both may shift the River and play its cards."""
    layout = {"lake": [["AH", "2H", "3H", "4H"]],
              "teams": [{"nertz": ["9D", "4S"], "river": [["6C"], ["KD"], ["QS"], ["5D"]],
                         "stream": ["5H", "8D"], "waste": 1}, OTHER]}
    moves = _team_of_two_moves(layout, "own-piles")
    legal, nertz_holder = moves[0]
    assert {"waste>lake", "waste>river0", "nertz>river3", "river2:0>river1"} <= legal
    assert legal - nertz_holder == {"waste>lake", "waste>river0"}
    legal, stream_holder = moves[1]
    assert {"flip", "waste>lake", "nertz>river3", "river2:0>river1"} <= legal
    assert legal - stream_holder == {"nertz>river3"}


def test_a_constrained_agent_never_plays_a_forbidden_move(tmp_path):
    from agents.learned.weights import FORMAT, VERSION, array_shapes, save_weights
    from agents.registry import make_agent
    meta = {"format": FORMAT, "version": VERSION, "observation_size": 791, "action_size": 322,
            "architecture": {"type": "mlp", "hidden": [16], "activation": "tanh",
                             "action_net": "masked"}}
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    rng = np.random.default_rng(0)
    arrays = {k: rng.normal(size=v).astype(np.float32) for k, v in array_shapes(meta).items()}
    path = save_weights(tmp_path / "tiny", meta, arrays)[0]
    free = make_agent(f"ppo:{path}")
    agent = make_agent(f"ppo:{path},constraint=useful-shifts")
    config = RulesConfig(num_teams=2)
    differs = played = 0
    for _, obs, masks in positions(config, ticks=120, seed=3):
        allowed = constrain(obs, masks, "useful-shifts")
        a = agent.act_batch(obs, masks)
        assert allowed[np.arange(len(a)), a].all()
        differs += int((free.act_batch(obs, masks) != a).sum())
        played += len(a)
    assert played >= 1000 and differs > 0     # the constraint changed some of its moves
    # a model whose file names its constraint plays under it; constraint=none plays it free
    save_weights(tmp_path / "named", {**meta, "constraint": "useful-shifts"}, arrays)
    named = make_agent(f"ppo:{tmp_path / 'named.npz'}")
    unnamed = make_agent(f"ppo:{tmp_path / 'named.npz'},constraint=none")
    assert (named.act_batch(obs, masks) == agent.act_batch(obs, masks)).all()
    assert (unnamed.act_batch(obs, masks) == free.act_batch(obs, masks)).all()
    with pytest.raises(ValueError, match="constraint must be null or one of useful-shifts"):
        save_weights(tmp_path / "bad", {**meta, "constraint": "sometimes"}, arrays)
    with pytest.raises(ValueError, match="keep-stream"):
        make_agent(f"ppo:{path},constraint=maybe")


def test_bad_constraint_names_are_value_errors():
    assert check_constraint(None) == 0 and check_constraint("none") == 0
    with pytest.raises(ValueError, match="useful-shifts"):
        check_constraint("usefull-shifts")
    with pytest.raises(ValueError, match=r"observations \[n, 791\]"):
        constrain(np.zeros((2, 5), np.float32), np.ones((2, 322), bool), "keep-stream")


def _scenario(layout):
    """(observation [1, OBS_DIM], mask [1, N], the Table) of seat 0 in a readable layout."""
    from nertz_env import Table
    table = Table.from_layout(layout)
    obs = table.engine.observe(0)[:, 0].copy()
    return obs, table.action_mask(0)[None].copy(), table


def _allowed(layout, name):
    obs, mask, table = _scenario(layout)
    keep = constrain(obs, mask, name)[0]
    return {str(m) for m in table.legal_moves(0)}, {str(table.decode(int(a))) for a in
                                                    np.flatnonzero(keep)}


OTHER = {"nertz": ["2D", "KC"], "river": [["9D"], ["8S"], ["7H"], ["6C"]], "stream": ["3D"],
         "waste": 0}


def test_keep_stream_from_a_layout():
    """5H on the waste, the Nertz top 4S builds on it, 6C on the River takes it, and the Lake
    takes it too (AH..4H): keep-stream forbids waste>lake, not waste>river."""
    layout = {"lake": [["AH", "2H", "3H", "4H"]],
              "teams": [{"nertz": ["9D", "4S"], "river": [["6C"], ["KD"], ["QS"], ["JH"]],
                         "stream": ["5H", "8D"], "waste": 1}, OTHER]}
    legal, kept = _allowed(layout, "keep-stream")
    assert {"waste>lake", "waste>river0"} <= legal
    assert legal - kept == {"waste>lake"}
    # without a River home for 5H it may go to the Lake
    layout["teams"][0]["river"][0] = ["KH"]
    legal, kept = _allowed(layout, "keep-stream")
    assert "waste>lake" in legal and kept == legal


def test_keep_river_from_a_layout():
    """5H tops River column 0 and the Nertz top 4S builds on it; the Lake takes 5H (AH..4H)
    and 6C tops column 1: keep-river forbids river0>lake only."""
    layout = {"lake": [["AH", "2H", "3H", "4H"], ["AC", "2C", "3C", "4C", "5C"]],
              "teams": [{"nertz": ["9D", "4S"], "river": [["5H"], ["6C"], ["QS"], ["JH"]],
                         "stream": ["8D"], "waste": 0}, OTHER]}
    legal, kept = _allowed(layout, "keep-river")
    assert {"river0>lake", "river1>lake"} <= legal
    assert legal - kept == {"river0>lake"}
    layout["teams"][0]["nertz"] = ["9D", "4D"]        # 4D builds on no River top: all allowed
    legal, kept = _allowed(layout, "keep-river")
    assert "river0>lake" in legal and kept == legal


def test_never_withhold_and_useful_shifts_from_layouts():
    layout = {"lake": [["AH", "2H", "3H", "4H"]],
              "teams": [{"nertz": ["9D", "4S"], "river": [["6C"], ["KD"], ["QS"], ["JH"]],
                         "stream": ["5H", "8D"], "waste": 1}, OTHER]}
    legal, kept = _allowed(layout, "never-withhold")
    assert kept == {"waste>lake"} and len(legal) > 1
    # Nertz top 9C: river0:2>river2 exposes 10H, which 9C builds on; moving all of column 3
    # (7C) onto column 1 (8D) or 0 (8H) frees a column; river0:1 and river0:3 expose JC and
    # 9S, which 9C cannot take
    layout = {"lake": [],
              "teams": [{"nertz": ["2D", "9C"],
                         "river": [["JC", "10H", "9S", "8H"], ["8D"], [], ["7C"]],
                         "stream": ["KS"], "waste": 0}, OTHER]}
    legal, kept = _allowed(layout, "useful-shifts")
    shifts = {m for m in legal if ":" in m}
    assert shifts == {"river0:1>river2", "river0:2>river2", "river0:3>river2",
                      "river3:0>river1", "river3:0>river0"}
    assert shifts & kept == {"river0:2>river2", "river3:0>river1", "river3:0>river0"}
    assert legal - shifts <= kept
    layout["teams"][0]["nertz"] = []                 # an empty Nertz pile: no shift serves it
    legal, kept = _allowed(layout, "useful-shifts")
    assert not {m for m in kept if ":" in m} and {m for m in legal if ":" in m}
    # the whole column 3 (9S) onto 10D would cover the place of the Nertz top 9C: forbidden
    layout["teams"][0]["nertz"] = ["2D", "9C"]
    layout["teams"][0]["river"] = [["JC", "10H"], ["10D"], [], ["9S"]]
    legal, kept = _allowed(layout, "useful-shifts")
    assert {"river3:0>river1", "river3:0>river0"} <= legal
    assert "river3:0>river1" not in kept and "river3:0>river0" not in kept


def test_constraints_combine_with_plus():
    """'a+b' forbids what either forbids: the masks are a's and b's together (where that
    leaves a move), and the bit masks add up."""
    assert check_constraint("useful-shifts+never-withhold") == (
        check_constraint("useful-shifts") | check_constraint("never-withhold"))
    rows = both_bind = 0
    for _, obs, masks in positions(RulesConfig(num_teams=2), seed=5):
        a = constrain(obs, masks, "useful-shifts")
        b = constrain(obs, masks, "never-withhold")
        got = constrain(obs, masks, "useful-shifts+never-withhold")
        want = a & b
        keep = want.any(axis=1)
        np.testing.assert_array_equal(got[keep], want[keep])
        both_bind += int(((a != masks.astype(bool)).any(1) & (b != masks.astype(bool)).any(1)).sum())
        rows += len(obs)
    assert rows >= 1000 and both_bind > 0
    with pytest.raises(ValueError, match="several joined by"):
        check_constraint("useful-shifts+sometimes")


def _kept_by_rule(row, mrow, cid):
    """The moves constraint bits cid keep, the slow way: every legal move asked of the rule
    code one by one (forbidden), all of them where it forbids every one."""
    from agents.constraints import forbidden
    from nertz_env.core.observe import OFF_NERTZ, OFF_WASTE, read_card
    legal = np.flatnonzero(mrow)
    if not cid:
        return legal
    n_top, w_top = read_card(row, OFF_NERTZ), read_card(row, OFF_WASTE)
    kept = [a for a in legal if not forbidden(a, row, mrow, cid, n_top, w_top)]
    return np.array(kept, np.int64) if kept else legal


def test_the_move_list_is_every_legal_move_the_rule_allows():
    """constrained_moves (behind constrain and the learned seats' kernel) lists, in order,
    the legal moves the rule code allows, found by blocks of mask bytes, for no constraint,
    each one and all of them together, in both R4 roles; on masks left with only the moves
    it forbade, every one of them where the constraint reads only the observation
    (useful-shifts, keep-river, split-roles forbid them all again: the fallback); and on
    random masks over every action id (the last, partial block included)."""
    from agents.constraints import constrained_moves
    from nertz_env.actions import N_ACTIONS
    every = [0] + [check_constraint(n) for n in CONSTRAINTS] + [
        check_constraint("+".join(CONSTRAINTS))]
    idx = np.zeros(N_ACTIONS + 1, np.int64)
    rows = fallbacks = 0
    for config, seat in ((RulesConfig(num_teams=2), 0),
                         (RulesConfig(num_teams=2, team_sizes=(2, 1)), 1)):
        for _, obs, masks in positions(config, tables=12, ticks=200, seed=7, seat=seat,
                                       hands=np.arange(12) % 2):
            for cid in every:
                got = constrain(obs, masks, cid)
                for e in range(len(obs)):
                    mrow = np.ascontiguousarray(masks[e])
                    want = _kept_by_rule(obs[e], mrow, cid)
                    n = constrained_moves(obs[e], mrow, cid, idx)
                    np.testing.assert_array_equal(idx[:n], want,
                                                  err_msg=f"constraint bits {cid}, row {e}")
                    np.testing.assert_array_equal(np.flatnonzero(got[e]), want)
                    only = mrow.copy()                            # the forbidden moves alone
                    only[want] = 0
                    if cid and only.any():
                        n = constrained_moves(obs[e], only, cid, idx)
                        np.testing.assert_array_equal(idx[:n], _kept_by_rule(obs[e], only, cid))
                        if not cid & 6:      # never-withhold and keep-stream read the mask
                            np.testing.assert_array_equal(idx[:n], np.flatnonzero(only))
                            fallbacks += 1
            rows += len(obs)
    assert rows >= 1000 and fallbacks >= 50, (rows, fallbacks)
    rng = np.random.default_rng(0)
    for r in range(400):
        mask = (rng.random(N_ACTIONS) < rng.choice([0.01, 0.1, 0.5])).astype(masks.dtype)
        mask[-1 - r % 3] = 1
        cid = every[r % len(every)]
        n = constrained_moves(obs[r % len(obs)], mask, cid, idx)
        np.testing.assert_array_equal(idx[:n], _kept_by_rule(obs[r % len(obs)], mask, cid))


def test_each_constraint_bit_is_named_once():
    """nertz_env/core/constraint_rules.py names each constraint's bit (the kernel tests them by
    name; agents/constraints.py re-exports them): the names are the bits check_constraint
    gives from agents/constraints.py's ids, one per constraint, all distinct; ALL_BITS all."""
    import nertz_env.core.constraint_rules as c
    named = {"useful-shifts": c.USEFUL_SHIFTS, "never-withhold": c.NEVER_WITHHOLD,
             "keep-stream": c.KEEP_STREAM, "split-roles": c.SPLIT_ROLES,
             "keep-river": c.KEEP_RIVER, "own-piles": c.OWN_PILES}
    assert set(named) == set(CONSTRAINTS)
    assert {n: check_constraint(n) for n in named} == named
    assert sorted(named.values()) == [1 << k for k in range(len(CONSTRAINTS))]
    assert c.ALL_BITS == check_constraint("+".join(CONSTRAINTS))
