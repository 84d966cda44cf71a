"""Spec hygiene of every agent kind, to the standard of `search:` (tests/search/
test_search_spec_hostile.py): bad spec text is ONE line naming the spec, the option and what
is allowed (ValueError; exit 2 from the CLI), refused before anything plays or is written,
never a raw Python message and never a silent misreading.

- integers ASCII digits only: 'learned:teams=²' reached int() raw; 'heuristic:flip=٣' and
  '５' were read as 3 and 5 (and carried into search:base=heuristic:flip=٣), '1_0' as 10;
  ppo's device=cuda:٣ passed its check;
- an unknown option, kind, style or value named with the nearest one (Teams: teams, stlye:
  style, contraint: constraint, Greedy: greedy, when_useful: when-useful);
- no silent misreading: learned:teams=T with model= (model= was dropped), family= empty
  (read as the folder '.'), ppo constraint= empty (played a constrained model free),
  heuristic flip=3,k_flip=4 (one knob twice, the last won);
- pair: an empty member, three members and a pair inside a pair each said so; a control
  character in a member (or a model path) kept to one line;
- a property per kind: any option text makes an agent or a one-line ValueError naming the
  spec (agents are built, never played).
"""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents.cli import main
from agents.registry import MODELS_DIR, make_agent
from nertz_env.bot_specs import KNOB_NAMES, parse_bot

MODEL = str(MODELS_DIR / "learned_2teams.npz")


def refusal(spec: str) -> str:
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    msg = str(err.value)
    assert "\n" not in msg and repr(spec.strip()) in msg, msg
    return msg


@pytest.mark.parametrize("spec, words", [
    ("learned:teams=²", "teams='²': shipped models are for teams 2, 4"),
    ("learned:teams=٣", "teams='٣': shipped models are for teams"),
    ("heuristic:flip=٣", "knob flip='٣' must be an integer (ASCII digits"),
    ("heuristic:flip=５", "knob flip='５' must be an integer"),
    ("heuristic:flip=²", "knob flip='²' must be an integer"),
    ("heuristic:flip=1_0", "knob flip='1_0' must be an integer"),
    ("heuristic:withhold_river=٠", "knob withhold_river='٠' must be 0 or 1"),
    ("heuristic:withhold_river=true", "knob withhold_river='true' must be 0 or 1"),
    ("heuristic:withhold_stream=٣", "knob withhold_stream='٣' must be always, when-useful"),
    ("search:base=heuristic:flip=٣", "base='heuristic:flip=٣': knob flip='٣' must be an"),
    ("search:opp=heuristic:flip=５", "opp='heuristic:flip=５': knob flip='５' must be an"),
    (f"ppo:{MODEL},device=cuda:٣", "device='cuda:٣' must be cpu, cuda, cuda:N or auto"),
    pytest.param("learned:teams=" + "4" * 5000, "shipped models are for teams 2, 4",
                 id="teams-5000-digits"),                   # int() refuses over 4300, raw
    pytest.param("heuristic:flip=-" + "1" * 5000, "must be an integer from -1000000 to 1000000",
                 id="flip-5000-digits"),
])
def test_integers_are_ascii_digits(spec, words):
    assert words in refusal(spec)


@pytest.mark.parametrize("spec, words", [
    ("learned:Teams=2", "unknown option 'Teams' (did you mean 'teams'?); learned options are"),
    ("learned:modle=stacking", "unknown option 'modle' (did you mean 'model'?)"),
    ("learned:model=GENERALIST", "model='GENERALIST' (did you mean 'generalist'?) must be one"),
    ("heuristic:stlye=cautious", "knob 'stlye' is unknown (did you mean 'style'?); knobs are"),
    ("heuristic:Flip=3", "knob 'Flip' is unknown (did you mean 'flip'?)"),
    ("heuristic:withold_river=1", "knob 'withold_river' is unknown (did you mean "
                                  "'withhold_river'?)"),
    ("heuristic:style=Cautious", "style 'Cautious' is unknown (did you mean 'cautious'?); "
                                 "heuristic styles are"),
    ("heuristic:style=greedy", "style 'greedy' is unknown (greedy is a kind of its own"),
    ("heuristic:withhold_stream=when_useful", "or 0/1/2/3 (did you mean 'when-useful'?)"),
    (f"ppo:{MODEL},contraint=useful-shifts", "unknown option 'contraint' (did you mean "
                                             "'constraint'?); ppo options are"),
    ("ppo:no/such.zip,Deterministic=false", "(did you mean 'deterministic'?)"),
    ("rllib:no/such,polcy=team0", "unknown option 'polcy' (did you mean 'policy'?); rllib"),
    (f"ppo:{MODEL},device=CPU", "device='CPU' must be cpu, cuda, cuda:N or auto (did you "
                                "mean 'cpu'?)"),
    ("Greedy", "unknown kind 'Greedy' (did you mean 'greedy'?); kinds are"),
    ("lerned", "unknown kind 'lerned' (did you mean 'learned'?)"),
])
def test_unknown_names_get_the_nearest(spec, words):
    assert words in refusal(spec)


def test_nothing_near_gets_no_guess():
    for spec in ("learned:size=2", "heuristic:speed=3", "ppo:x.zip,foo=1", "minimax"):
        assert "did you mean" not in refusal(spec)


@pytest.mark.parametrize("spec, words", [
    ("learned:teams=4,model=stacking", "teams= plays that team count's model at every table; "
                                       "it takes no model="),
    ("learned:family=", "family= needs the path of a family JSON"),
    (f"ppo:{MODEL},constraint=", "constraint= needs a constraint's name, or none"),
    ("heuristic:flip=3,k_flip=4", "option 'flip' is given twice ('k_flip' names the same"),
])
def test_no_silent_misreading(spec, words):
    assert words in refusal(spec)


def test_plain_values_are_still_read():
    flip = KNOB_NAMES.index("flip")
    assert make_agent("heuristic:flip=-3").knobs[flip] == -3
    assert make_agent("heuristic:flip= 020").knobs[flip] == 20
    assert make_agent("heuristic:flip=+0").knobs[flip] == 0
    assert make_agent("heuristic:k_flip=3").knobs[flip] == 3
    assert make_agent("heuristic:withhold_stream=keep,withhold_river=0").knobs[10:].tolist() \
        == [3, 0]
    assert make_agent("learned:teams=04").by_hand == 4
    assert make_agent(f"ppo:{MODEL},constraint=none").constraint == 0
    assert make_agent("learned:family=" + str(MODELS_DIR / "learned_family.json")).family


@pytest.mark.parametrize("spec, words", [
    ("pair:greedy&", "two agent specs joined by one '&'"),
    ("pair:greedy&", "found an empty member"),
    ("pair:greedy", "found one member"),
    ("pair:greedy&random&greedy", "found 3 members"),
    ("pair:pair:greedy&random&greedy", "a pair's two members are single agents, not pairs"),
    ("pair:greedy&pair:random", "not pairs"),
])
def test_pair_shapes_are_said(spec, words):
    assert words in refusal(spec)


@pytest.mark.parametrize("spec, words", [
    ("pair:learned:teams=²&greedy", "agent 'learned:teams=²': teams='²': shipped models"),
    ("pair:greedy&heuristic:flip=٣", "agent 'heuristic:flip=٣': knob flip='٣' must be"),
    ("pair:greedy&bo\ngus", "agent 'bo\\ngus': unknown kind"),
])
def test_a_pair_member_fault_names_the_pair_on_one_line(spec, words):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    msg = str(err.value)
    assert "\n" not in msg and words in msg and (spec in msg or repr(spec) in msg), msg


@pytest.mark.parametrize("spec", ["ppo:a\nb.npz", "ppo:a\tb.zip,deterministic=true",
                                  "rllib:a\nb"])
def test_model_paths_with_control_characters_are_one_line(spec):
    assert "does not print" in refusal(spec)


def test_the_cli_refuses_before_playing_or_writing(tmp_path, capsys):
    out = tmp_path / "o"
    for spec in ("heuristic:flip=٣", "learned:teams=²", "pair:greedy&heuristic:stlye=x"):
        assert main(["judge", "h2h", spec, "greedy", "--deals", "2", "--out", str(out),
                     "--quiet"]) == 2
        cap = capsys.readouterr()
        err = cap.err.strip()
        assert "\n" not in err and spec in err and "invalid literal" not in err, err
        assert "minus" not in cap.out and not out.exists()
    assert main(["tournament", "--agents", "learned:teams=²,greedy", "--deals", "2",
                 "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "'learned:teams=²'" in err, err
    assert not out.exists() and not (tmp_path / "o.partial").exists()


# ---- a property per kind: any option text is an agent or one line naming the spec ----

VALUES = ["", "0", "1", "2", "4", "20", "-1", "+3", "1.5", "1e3", "nan", "true", "FALSE", "yes",
          "no", "none", "cpu", "cuda", "cuda:0", "cuda:٣", "²", "٣", "５", " 5", "1_0",
          str(10**30), "cautious", "Cautious", "greedy", "when-useful", "keep", "stacking",
          "generalist", "per-table", "family", "useful-shifts", "bogus", "a\nb", "x.json",
          "9" * 4400]
KEYS = {
    "heuristic": ["style", *KNOB_NAMES, "k_flip", "Flip", "stlye", "", " flip"],
    "learned": ["teams", "deterministic", "device", "model", "family", "Teams", "team", ""],
    "ppo": ["deterministic", "device", "trust", "constraint", "Device", "contraint", ""],
    "rllib": ["policy", "deterministic", "device", "polcy", ""],
}


def options(keys):
    one = st.tuples(st.sampled_from(keys), st.sampled_from(["="] * 6 + ["", "=="]),
                    st.sampled_from(VALUES) | st.text(max_size=5))
    return st.lists(one, min_size=1, max_size=3).map(
        lambda opts: ",".join(k + eq + v for k, eq, v in opts)) | st.text(max_size=10)


def agent_or_one_line(spec: str):
    try:
        return make_agent(spec)
    except ValueError as err:
        msg = str(err)
        assert "\n" not in msg, msg
        assert repr(spec.strip()) in msg or spec.strip() in msg, msg
        return None


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(st.sampled_from(["random", "greedy"]), st.text(max_size=8) | options(["x", "flip"]))
def test_random_and_greedy(kind, rest):
    agent_or_one_line(f"{kind}:{rest}")


@PROPERTY
@given(options(KEYS["heuristic"]))
@example("flip=٣")
@example("style=cautious,withhold_stream=٣")
def test_heuristic(rest):
    agent = agent_or_one_line(f"heuristic:{rest}")
    if agent is not None:                    # what was read is what was written
        for key, value in parse_bot(f"heuristic:{rest}").knobs.items():
            key = key.removeprefix("k_")
            names = {"always": 0, "when-useful": 1, "never": 2, "keep": 3}
            want = names.get(value) if key == "withhold_stream" else None
            if want is None:
                assert re.fullmatch(r"[+-]?[0-9]+", value), (rest, value)
                want = int(value)
            assert agent.knobs[KNOB_NAMES.index(key)] == want


@PROPERTY
@given(options(KEYS["learned"]))
@example("teams=²")
@example("teams=" + "2" * 4400)
@example("family=a\nb.json")
def test_learned(rest):
    agent_or_one_line(f"learned:{rest}")


@PROPERTY
@given(options(KEYS["ppo"]), st.sampled_from([MODEL, "no/such.zip", "a\nb.npz"]))
@example(",deterministic=false", "a\nb.npz")
def test_ppo(rest, path):
    agent_or_one_line(f"ppo:{path},{rest}")


@PROPERTY
@given(options(KEYS["rllib"]))
def test_rllib(rest):
    agent_or_one_line(f"rllib:no/such/checkpoint,{rest}")


MEMBERS = st.sampled_from(["greedy", "learned", "heuristic:flip=2", "learned:teams=²",
                           "heuristic:flip=٣", "pair:greedy", "", " ", "bo\ngus", "random:x"])


@PROPERTY
@given(st.lists(MEMBERS | st.text(max_size=6), min_size=1, max_size=3).map("&".join))
@example("learned:teams=²&greedy")
@example("greedy&bo\ngus")
def test_pair(rest):
    agent_or_one_line(f"pair:{rest}")


@pytest.mark.parametrize("text, words", [
    ("a=m.npz:stacking=false,stacking=true", "rule 'stacking' is given twice"),
    ("a=m.npz:stackng=false", "rule 'stackng' is not a RulesConfig field (did you mean "
                              "'stacking'?); fields are num_teams"),
    ("a=m.npz:Num_Teams=2", "(did you mean 'num_teams'?)"),
])
def test_family_members_on_the_command_line(text, words, tmp_path, capsys):
    from agents.learned.family import main as family_main
    from agents.learned.family import parse_member
    with pytest.raises(ValueError) as err:
        parse_member(text)
    assert "\n" not in str(err.value) and repr(text) in str(err.value) and words in str(err.value)
    assert parse_member("a=m.npz:stacking=false, num_teams = 2")[2] == {"stacking": False,
                                                                       "num_teams": 2}
    with pytest.raises(SystemExit) as code:                   # refused before any folder
        family_main([str(tmp_path / "out"), text, "b=m.npz"])
    assert code.value.code == 2 and not (tmp_path / "out").exists()
    assert words in capsys.readouterr().err
