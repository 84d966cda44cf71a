"""The file readers against a hostile tester's files (issue #40, second pass): a JSON depth
check linear in the text (a run of escaped quotes used to take minutes to days), an SB3 zip's
network bounded from its data before anything is built, encrypted or unknown-method zip
members and unhashable fields as one line, provenance checked at write time as the reader
checks it, a model's rules checked, a duplicated .npz member refused, and the family
writer's messages (list values, integers, an SB3 zip, OUT "" or a symbolic link)."""
from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from agents.learned import family as fam
from agents.learned import sb3_zip
from agents.learned.family import parse_member, read_family_file, write_family
from agents.learned.weights import MAX_PARAMS, load_weights, save_weights, weight_files
from agents.registry import MODELS_DIR
from nertz_env.files.bounded import json_depth
from tests.learned.test_shipped_models import tiny_meta, tiny_model

SB3_DIR = MODELS_DIR.parents[2] / "train" / "models"     # the SB3 originals (not shipped)


# ------------------------------------------------------------------ 1. json_depth is linear
def test_json_depth_counts_brackets_outside_strings_only():
    """Escaped quotes and backslash runs, brackets in strings, UTF-16 text: the depth of the
    text json.loads parses."""
    cases = {'[["\\"[[[", "\\\\"], {"a": ["]]"]}]': 3, '"\\\\\\"[["': 0, '[[[]]]': 3,
             '{"k\\\\": [{"\\"": "}"}]}': 3, '': 0, '"unclosed [[[': 0}
    for text, depth in cases.items():
        assert json_depth(text.encode()) == depth, text
    # UTF-16: a backslash and its quote are not adjacent bytes; the depth is still the text's
    hidden = '["\\"", [[[[[[1]]]]]]]'
    assert json_depth(hidden.encode("utf-16")) == json_depth(hidden.encode()) == 7


HOSTILE = ['b\'"\' + b\'\\\\"\' * 2_000_000',           # the 7.9 KB zip's data: days before
           'b\'["\' + b\'\\\\"\' * 1_000_000 + b\'"]\'',
           'b\'"\\\\\\\\"\' * 800_000',
           'b\'[\' * 1_000_000']


@pytest.mark.parametrize("expr", HOSTILE)
def test_json_depth_answers_a_hostile_megabyte_at_once(expr):
    """A run of escaped quotes made the old regex quadratic: 4 MB of `\\"` took days, 680 KB
    25 minutes. The linear scan answers in well under a second; the 120 s bound is a hang
    guard (hundreds of times the time taken), not a speed measured."""
    code = ("import time\nfrom nertz_env.files.bounded import json_depth\n"
            f"raw = {expr}\nprint(len(raw), json_depth(raw))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[0]) >= 1_000_000


# ------------------------------------------------------------- 2-4. SB3 zips: data checked
def sb3_copy(tmp_path, name="m.zip", **changes) -> "Path":
    """A copy of the shipped 2-team SB3 zip with its data's fields changed."""
    src = SB3_DIR / "learned_2teams.zip"
    out = tmp_path / name
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            raw = zin.read(info)
            if info.filename == "data":
                data = json.loads(raw)
                for k, v in changes.items():
                    if k == "net_arch":
                        data["policy_kwargs"] = {"net_arch": v}
                    elif k == "module":
                        data["policy_class"]["__module__"] = v
                    else:
                        data[k] = v
                raw = json.dumps(data).encode()
            zout.writestr(info.filename, raw)
    return out


def no_building(monkeypatch):
    """Any import of SB3 or torch by the reader fails the test: the refusal comes first."""
    def boom(*a, **k):
        raise AssertionError("the reader went on to build the network")
    monkeypatch.setattr(sb3_zip, "require", boom)


@pytest.mark.parametrize("arch, said", [([12000, 12000], "each an integer 1..4096"),
                                        ([4096] * 8, "parameters; at most"),
                                        ([64] * 9, "at most 8 layer widths"),
                                        ({"pi": [64], "vf": [5000]}, "each an integer"),
                                        ("big", "got \"big\"")])
def test_an_sb3_network_is_bounded_before_it_is_built(tmp_path, monkeypatch, arch, said):
    """policy_kwargs.net_arch of [12000, 12000] took 93 s and 3.3 GB before a refusal: now it
    is one line naming the file and field, before SB3 or torch is even imported."""
    p = sb3_copy(tmp_path, net_arch=arch)
    no_building(monkeypatch)
    with pytest.raises(ValueError, match="policy_kwargs.net_arch") as ex:
        sb3_zip.load_sb3(p)
    assert said in str(ex.value) and str(p) in str(ex.value) and "\n" not in str(ex.value)


def test_the_shipped_zip_declares_a_network_within_bounds():
    data = sb3_zip.read_data(SB3_DIR / "learned_2teams.zip")
    assert 0 < sb3_zip.check_data(data, "m") < MAX_PARAMS


def test_a_pth_member_larger_than_its_declared_network_is_refused_unread(tmp_path):
    """A policy.pth far larger than the network data declares takes (12 bytes a parameter
    and 1 MiB) is refused before torch reads it."""
    pytest.importorskip("sb3_contrib", reason="needs the [train] extra")
    src = sb3_copy(tmp_path, net_arch=[8])
    p = tmp_path / "padded.zip"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            raw = zin.read(info)
            if info.filename == "policy.pth":
                raw += bytes(8 << 20)
            zout.writestr(info.filename, raw)
    with pytest.raises(ValueError, match="'policy.pth' holds .* refused unread"):
        sb3_zip.load_sb3(p)


@pytest.mark.parametrize("module", [["a", "b"], {"x": 1}])
def test_an_unhashable_policy_module_is_one_line(tmp_path, monkeypatch, module):
    p = sb3_copy(tmp_path, module=module)
    no_building(monkeypatch)
    with pytest.raises(ValueError, match="policy class .*not a stock PPO"):
        sb3_zip.load_sb3(p)


@pytest.mark.parametrize("value", ["abc", 10 ** 40, 1.5, True, -1])
def test_num_timesteps_is_checked_naming_file_and_field(tmp_path, monkeypatch, value):
    """num_timesteps='abc' gave "invalid literal for int()" naming neither; 10**40 was
    exported into a file the reader then refused."""
    p = sb3_copy(tmp_path, num_timesteps=value)
    no_building(monkeypatch)
    with pytest.raises(ValueError, match="num_timesteps must be a whole number") as ex:
        sb3_zip.load_sb3(p)
    assert str(p) in str(ex.value)
    with pytest.raises(ValueError, match="'M.zip'.*num_timesteps"):
        sb3_zip.timesteps(value, "model 'M.zip'")


def test_the_writer_refuses_what_its_reader_would(tmp_path):
    """save_weights checks the description by the reader's rules (an integer of over 30
    digits, a description over the reader's cap) before writing anything."""
    meta = tiny_meta()
    arrays = {k: np.zeros(v, np.float32) for k, v in meta["arrays"].items()}
    for prov, said in (({"num_timesteps": 10 ** 40}, "integer of 41 digits"),
                       ({"note": "x" * (1 << 20)}, "the reader holds at most")):
        with pytest.raises(ValueError, match=said):
            save_weights(tmp_path / "m", dict(meta, provenance=prov), arrays)
        assert not list(tmp_path.iterdir())
    npz, js = save_weights(tmp_path / "m", meta, arrays)
    assert load_weights(npz)[0] == meta
    assert js.read_text() == json.dumps(meta, indent=2) + "\n"      # write_json's bytes


# ------------------------------------------------------------------- 3, 5. the .npz reader
def copy_model(tmp_path, npz_bytes=None, **meta_changes):
    """A copy of a tiny safe model, its .npz replaced or its JSON's fields changed."""
    npz, js = tiny_model(tmp_path / "m")
    if npz_bytes is not None:
        npz.write_bytes(npz_bytes)
    if meta_changes:
        js.write_text(json.dumps(dict(json.loads(js.read_text()), **meta_changes)))
    return npz


def patched(npz: bytes, local_at: int, central_at: int, value: int) -> bytes:
    """Every member's local and central header field (2 bytes) set to value."""
    b = bytearray(npz)
    for sig, at in ((b"PK\x03\x04", local_at), (b"PK\x01\x02", central_at)):
        i = b.find(sig)
        while i >= 0:
            b[i + at:i + at + 2] = struct.pack("<H", value)
            i = b.find(sig, i + 4)
    return bytes(b)


@pytest.mark.parametrize("field, said", [((6, 8, 1), "it is encrypted"),
                                         ((8, 10, 99), "compression method")])
def test_an_encrypted_or_unknown_method_member_is_one_line(tmp_path, field, said):
    """RuntimeError 'is encrypted' and NotImplementedError used to escape as tracebacks."""
    raw = tiny_model(tmp_path / "src")[0].read_bytes()
    npz = copy_model(tmp_path, patched(raw, *field))
    with pytest.raises(ValueError, match=said) as ex:
        load_weights(npz)
    text = str(ex.value)
    assert str(npz) in text and ".npy" in text and "\n" not in text


def test_a_member_stored_twice_is_refused(tmp_path):
    npz = tiny_model(tmp_path / "src")[0]
    with zipfile.ZipFile(npz) as z:
        members = [(n, z.read(n)) for n in z.namelist()]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z, pytest.warns(UserWarning, match="Duplicate"):
        for n, raw in members + [members[0]]:
            z.writestr(n, raw)
    with pytest.raises(ValueError, match=f"the member '{members[0][0]}' twice"):
        load_weights(copy_model(tmp_path, buf.getvalue()))


@pytest.mark.parametrize("rules, field", [({"zzz": 1}, "rules.zzz"),
                                          ({"team_sizes": "abc"}, "rules.team_sizes"),
                                          ({"stacking": "maybe"}, "rules.stacking"),
                                          ({"num_teams": 2, "num_seats": 3}, "rules.num_seats"),
                                          ([1], "rules")])
def test_a_models_rules_are_checked(tmp_path, rules, field):
    npz = copy_model(tmp_path, rules=rules)
    with pytest.raises(ValueError, match=f"model '.*m.json': {field} must be") as ex:
        load_weights(npz)
    assert "\n" not in str(ex.value)


def test_rules_a_table_can_have_load(tmp_path):
    rules = json.loads((MODELS_DIR / "learned_4teams.json").read_text())["rules"]
    assert load_weights(copy_model(tmp_path, rules=rules))[0]["rules"] == rules


# ------------------------------------------------------------------------ 5. the family
def test_a_member_rule_may_be_a_list():
    """parse_member's docstring promised `[1, 2]`; the commas inside split the rules."""
    assert parse_member("a=m.npz:team_sizes=[2, 2],num_teams=2,stacking=false")[2] == \
        {"team_sizes": [2, 2], "num_teams": 2, "stacking": False}
    with pytest.raises(ValueError, match="not closed"):
        parse_member("a=m.npz:team_sizes=[2,2")


def family_of(tmp_path, **rules):
    tiny_model(tmp_path / "m")
    obj = {"format": "nertz-family", "version": 1,
           "members": [{"name": "a", "model": "m", "rules": rules},
                       {"name": "b", "model": "m", "rules": {}}]}
    p = tmp_path / "f.json"
    p.write_text(json.dumps(obj))
    return p


@pytest.mark.parametrize("rules, said", [({"num_teams": 1.5}, "num_teams must be an integer"),
                                         ({"stacking": 1}, "stacking must be true or false"),
                                         ({"move_ticks": {}}, "move_ticks must be not a rule")])
def test_a_rule_of_the_wrong_type_says_what_it_must_be(tmp_path, rules, said):
    with pytest.raises(ValueError, match=said):
        read_family_file(family_of(tmp_path, **rules))


def test_a_list_rule_is_written_and_read(tmp_path):
    tiny_model(tmp_path / "m", teams=2)
    path = write_family(tmp_path / "out", [("a", tmp_path / "m.npz", {"team_sizes": [2, 2]}),
                                           ("b", tmp_path / "m.npz", {})])
    assert read_family_file(path)[0].rules == {"team_sizes": (2, 2)}


def test_an_oversized_family_file_is_named_once(tmp_path):
    p = tmp_path / "big.json"
    p.write_text(" " * (fam.MAX_BYTES + 1))
    with pytest.raises(ValueError) as ex:
        read_family_file(p)
    assert str(ex.value).count(str(p)) == 1


def test_the_writer_given_an_sb3_zip_says_to_export_it(tmp_path):
    z = tmp_path / "ok.zip"
    shutil.copy(SB3_DIR / "learned_2teams.zip", z)
    with pytest.raises(ValueError, match=r"is an SB3 zip.*nertz export"):
        write_family(tmp_path / "out", [("a", z, {})])
    assert not (tmp_path / "out").exists()


def test_the_writer_given_out_empty_or_a_link_says_so(tmp_path, monkeypatch):
    tiny_model(tmp_path / "m")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="OUT '' names no folder"):
        write_family("", [("a", tmp_path / "m.npz", {})])
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ValueError, match="is a symbolic link"):
        write_family(tmp_path / "link", [("a", tmp_path / "m.npz", {})])
    assert not any((tmp_path / "real").iterdir())
    assert weight_files(tmp_path / "m.npz")[1].is_file()
