"""Safe model files and the learned family against hostile files and mistakes (issue #40):
member names that would write outside OUT, an OUT that cannot be written, a family folder
written whole or not at all, a model bounded by its declared sizes before anything is
inflated, a model named by several members read once, strict JSON (a key twice, `true` for
an integer), a directory or FIFO given as a model, and the net shape the safe format holds."""
from __future__ import annotations

import io
import json
import os
import tempfile
import threading
import tracemalloc
import zipfile

import numpy as np
import pytest

from agents.learned import family as fam
from agents.learned import weights
from agents.learned.family import FILE, main, read_family_file, write_family
from agents.learned.weights import (MAX_HIDDEN_LAYERS, MAX_PARAMS, check_net_shape,
                                    load_weights, weight_files)
from agents.registry import MODELS_DIR, make_agent
from nertz_env import RulesConfig
from tests.learned.test_shipped_models import tiny_meta, tiny_model


def tree(root) -> dict:
    """{relative path: bytes} of every file under root (what a run wrote, byte for byte)."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def rows(n=32, seed=0):
    """Random observations and masks (each row with a legal move): enough to tell nets apart."""
    rng = np.random.default_rng(seed)
    obs = rng.random((n, 791), dtype=np.float32)
    masks = rng.random((n, 322)) < 0.3
    masks[:, 0] = True
    return obs, masks


@pytest.fixture()
def src(tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    tiny_model(folder / "a", seed=31, hidden=(16,))
    tiny_model(folder / "b", seed=32, hidden=(16,))
    return folder


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


# ------------------------------------------------------------ the family writer: names and OUT
@pytest.mark.parametrize("name", ["../escaped", "../../escaped", "sub/escaped", "..", ".",
                                  "x\n", "on\nx", "\x01x", "a" * 33, "/abs", "Caps", ""])
def test_a_member_name_is_a_plain_stem_checked_before_anything_is_written(
        src, tmp_path, monkeypatch, capsys, name):
    """A member name with a path, '..', a newline or a control character, or too long is
    refused by name, and no file appears anywhere (the system temp folder included: the
    writer used to write bad names' models beside its temporary folder first)."""
    work = tmp_path / "work"
    (work / "tmp").mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(work / "tmp"))
    before = tree(tmp_path)
    with pytest.raises(ValueError, match=r"members\[0\]\.name must be") as err:
        write_family(work / "OUT", [(name, src / "a.npz", {})])
    assert "\n" not in str(err.value)
    assert tree(tmp_path) == before and not (work / "OUT").exists()
    if name.strip() == name:                # the command line strips blanks off a name
        with pytest.raises(SystemExit) as ex:         # the command line: exit 2, one line
            main(["OUT", f"{name}={src / 'a.npz'}"])
        assert ex.value.code == 2 and "members[0]" in one_line_error(capsys)
    assert tree(tmp_path) == before and sorted(os.listdir(work)) == ["tmp"]


def test_every_write_is_confined_to_its_folder(tmp_path):
    """The writer's last line of defence: a name that resolves outside the folder is refused."""
    (tmp_path / "d").mkdir()
    assert fam._inside(tmp_path / "d", "x.npz") == (tmp_path / "d" / "x.npz").resolve()
    for bad in ("../x.npz", "a/../../x.npz", "/etc/x.npz"):
        with pytest.raises(ValueError, match="outside"):
            fam._inside(tmp_path / "d", bad)
    os.symlink(tmp_path, tmp_path / "d" / "link")
    with pytest.raises(ValueError, match="outside"):
        fam._inside(tmp_path / "d", "link")


def test_an_out_that_cannot_be_created_is_one_line_exit_1(src, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    before = tree(tmp_path)
    for out in (tmp_path / "file" / "OUT", tmp_path / "file" / "deeper" / "OUT"):
        with pytest.raises(SystemExit) as ex:
            main([str(out), f"a={src / 'a.npz'}"])
        err = one_line_error(capsys)
        assert ex.value.code == 1 and str(out) in err and "nothing was written" in err
        assert "is a file, not a folder" in err
    assert tree(tmp_path) == before
    with pytest.raises(SystemExit) as ex:            # OUT itself a file: bad input
        main([str(tmp_path / "file"), f"a={src / 'a.npz'}"])
    assert ex.value.code == 2 and "is not a folder" in one_line_error(capsys)


def test_a_family_folder_is_written_whole_or_not_at_all(src, tmp_path, monkeypatch, capsys):
    """A write that fails midway (a full disk at the family file) leaves no OUT and no
    staging folder: exit 1 naming OUT."""
    from nertz_env.files import atomic

    def full_disk(path, obj, indent=2):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "write_json", full_disk)
    out = tmp_path / "made" / "OUT"
    with pytest.raises(SystemExit) as ex:
        main([str(out), f"a={src / 'a.npz'}:stacking=false", f"b={src / 'b.npz'}"])
    err = one_line_error(capsys)
    assert ex.value.code == 1 and repr(str(out)) in err and "No space left" in err
    assert not out.exists() and os.listdir(out.parent) == []


def test_out_must_be_new_or_empty_and_overwrite_replaces_only_a_family(src, tmp_path, capsys):
    """Reruns are byte-identical; an OUT holding files is refused unless --overwrite, which
    replaces a family folder and nothing else."""
    one, two = tmp_path / "one", tmp_path / "two"
    two.mkdir()                                     # an empty folder is fine
    for out in (one, two):
        assert main([str(out), f"a={src / 'a.npz'}:stacking=false", f"b={src / 'b.npz'}",
                     "--note", "n"]) == 0
    assert tree(one) == tree(two) and sorted(tree(one)) == sorted(
        ["a.json", "a.npz", "b.json", "b.npz", FILE])
    assert tree(one)["a.npz"] == (src / "a.npz").read_bytes()
    capsys.readouterr()
    with pytest.raises(SystemExit) as ex:
        main([str(one), f"a={src / 'b.npz'}"])
    assert ex.value.code == 2 and "is not empty" in one_line_error(capsys)
    assert main([str(one), f"x={src / 'b.npz'}", "--overwrite"]) == 0
    assert sorted(tree(one)) == sorted(["x.json", "x.npz", FILE])
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    capsys.readouterr()
    with pytest.raises(SystemExit) as ex:
        main([str(other), f"a={src / 'a.npz'}", "--overwrite"])
    assert ex.value.code == 2 and "replaces only a family folder" in one_line_error(capsys)
    assert tree(other) == {"notes.txt": b"mine"}


# ------------------------------------------------------------------------------------ memory
def test_a_model_is_bounded_by_its_declared_sizes_before_anything_is_read(tmp_path):
    """8 layers of 4096 (122M parameters; a 0.5 MB .npz of zeros inflated to 1.1 GB) is
    refused from the JSON alone: the .npz is never opened."""
    meta = tiny_meta(hidden=[4096] * 8)
    (tmp_path / "big.json").write_text(json.dumps(meta))
    (tmp_path / "big.npz").write_bytes(b"never read")
    with pytest.raises(ValueError, match=r"architecture must be a network of at most "
                                         rf"{MAX_PARAMS:,} parameters") as err:
        make_agent(f"ppo:{tmp_path / 'big.npz'}")
    assert "\n" not in str(err.value) and "big.json" in str(err.value)
    assert MAX_HIDDEN_LAYERS == 8 and MAX_PARAMS >= 40 * 350_000   # the shipped 256x256: 350k


def _npz_with_member(path, name, member: bytes, keep=None):
    """path (a tiny model's .npz) rewritten with member NAME.npy replaced by raw bytes."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members[f"{name}.npy"] = member
    if keep is not None:
        members = {n: b for n, b in members.items() if n in keep}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in members.items():
            z.writestr(n, b)


def _npy_header(shape, descr="<f4") -> bytes:
    """A .npy file's magic and header (version 1.0) claiming `shape`, without its data."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
    return buf.getvalue()


def test_an_arrays_header_is_checked_before_its_data_is_read(tmp_path):
    """A member whose .npy header claims a shape of 2**50 floats (4 PiB) in a few bytes is
    refused by its header, before anything is allocated for it (it was a MemoryError)."""
    npz, _ = tiny_model(tmp_path / "m", hidden=(8,))
    _npz_with_member(npz, "action_bias", _npy_header((1 << 50,)) + b"\0" * 64)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"action_bias is float32 \(1125899906842624,\); "
                                             r"m.json declares float32 \(322,\)") as err:
            load_weights(npz)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "\n" not in str(err.value) and peak < 8 << 20


def test_a_zip_directory_of_many_entries_is_refused_unparsed(tmp_path):
    npz, _ = tiny_model(tmp_path / "m", hidden=(8,))
    with zipfile.ZipFile(npz, "a") as z:
        for i in range(100):
            z.writestr(f"junk{i}.npy", b"")
    with pytest.raises(ValueError, match=r"hold 104 entries .* declares 4 arrays"):
        load_weights(npz)


def test_an_array_with_bytes_past_its_shape_is_refused(tmp_path):
    npz, _ = tiny_model(tmp_path / "m", hidden=(8,))
    buf = io.BytesIO()
    np.save(buf, np.zeros(322, np.float32))
    _npz_with_member(npz, "action_bias", buf.getvalue() + b"\0" * 16)
    with pytest.raises(ValueError, match="bytes past the data"):
        load_weights(npz)


def test_the_shipped_models_load_byte_identically(tmp_path):
    """What the reader returns is what np.load (allow_pickle=False) reads, byte for byte and
    C-ordered; a Fortran-ordered array is read as its values."""
    shipped = sorted(MODELS_DIR.glob("*.npz"))
    assert len(shipped) >= 3
    for path in shipped:
        _, arrays = load_weights(path)
        with np.load(path, allow_pickle=False) as z:
            assert sorted(z.files) == sorted(arrays)
            for k in z.files:
                assert arrays[k].tobytes() == z[k].tobytes() and arrays[k].shape == z[k].shape
                assert arrays[k].flags.c_contiguous and arrays[k].dtype == np.dtype("<f4")
    npz, _ = tiny_model(tmp_path / "m", hidden=(8,))
    _, want = load_weights(npz)
    np.savez(npz, **{k: np.asfortranarray(v) for k, v in want.items()})
    _, got = load_weights(npz)
    assert all(np.array_equal(got[k], want[k]) for k in want)


def test_members_naming_one_model_share_it(src, tmp_path, monkeypatch):
    """A family whose members all name one model file reads it once and plays one set of
    arrays (deterministic: one policy; sampling: a generator each, arrays shared)."""
    import shutil
    for ext in (".npz", ".json"):
        shutil.copy(src / f"a{ext}", tmp_path / f"a{ext}")
    members = [{"name": n, "model": "a", "rules": r}
               for n, r in (("x", {"stacking": False}), ("y", {"river_size": 5}), ("z", {}))]
    (tmp_path / FILE).write_text(json.dumps({"format": "nertz-family", "version": 1,
                                             "members": members}))
    calls = []
    real = weights.load_weights
    monkeypatch.setattr(weights, "load_weights", lambda p: calls.append(p) or real(p))
    bot = make_agent(f"learned:family={tmp_path / FILE}")
    assert len(calls) == 1
    p = bot.policies
    assert p[0] is p[1] is p[2]
    obs, masks = rows()
    one = make_agent(f"ppo:{tmp_path / 'a.npz'}")
    for config in (RulesConfig(num_teams=2, stacking=False), RulesConfig(num_teams=2)):
        np.testing.assert_array_equal(bot.for_table(config).act_batch(obs, masks),
                                      one.act_batch(obs, masks))
    calls.clear()
    drawn = make_agent(f"learned:family={tmp_path / FILE},deterministic=false", seed=5)
    q = drawn.policies
    assert len(calls) == 1 and q[0] is not q[1]
    assert q[0].hidden_layers[0][0] is q[1].hidden_layers[0][0] is q[2].hidden_layers[0][0]
    assert q[0]._rng is not q[1]._rng


def test_the_writer_copies_a_model_several_members_name_once(src, tmp_path):
    out = tmp_path / "OUT"
    write_family(out, [("x", src / "a.npz", {"stacking": False}), ("y", src / "a.npz", {})])
    assert sorted(tree(out)) == sorted(["x.json", "x.npz", FILE])
    assert [m.path.name for m in read_family_file(out / FILE)] == ["x.npz", "x.npz"]


# ------------------------------------------------------------------------------- strict JSON
def _family(folder, text):
    tiny_model(folder / "on", seed=12, hidden=(16,))
    (folder / FILE).write_text(text)
    return folder / FILE


GOOD = ('{"format": "nertz-family", "version": 1, "members": '
        '[{"name": "on", "model": "on", "rules": {}}]}')


@pytest.mark.parametrize("text, words", [
    (GOOD.replace('"version": 1,', '"version": 1, "version": 1,'), "key 'version' twice"),
    (GOOD.replace('"rules": {}', '"rules": {}, "rules": {"stacking": false}'),
     "key 'rules' twice"),
    (GOOD.replace('"members": [', '"members": [], "members": ['), "key 'members' twice"),
    (GOOD.replace('"version": 1', '"version": true'), "format/version must be"),
    (GOOD.replace('"version": 1', '"version": 1.0'), "format/version must be"),
    (GOOD.replace('"name": "on"', '"name": "on\\n"'), r"members\[0\].name must be .*'on\\n'"),
    (GOOD.replace('"model": "on"', '"model": "on\\n"'), r"members\[0\].model must be"),
    (GOOD.replace('"rules": {}', '"rules": {}, "note": 5'), r"members\[0\].note must be"),
    (GOOD.replace('"version": 1,', '"version": 1, "note": ["x"],'), "note must be"),
    (GOOD.replace('"rules": {}', '"rules": {"river_size": 1e400}'), "too large"),
])
def test_a_family_file_is_read_strictly(tmp_path, text, words):
    path = _family(tmp_path, text)
    with pytest.raises(ValueError, match=words) as err:
        read_family_file(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def _with(d, **kw):
    return {**d, **kw}


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace('"version": 1,', '"version": 1, "version": 1,'), "key 'version' twice"),
    (lambda t: t.replace('"activation": "tanh"', '"activation": "relu", "activation": "tanh"'),
     "key 'activation' twice"),
    (lambda t: t.replace('"version": 1', '"version": true'), "format/version must be"),
    (lambda t: json.dumps(_with(json.loads(t), architecture=_with(
        json.loads(t)["architecture"], activation=["tanh"]))), "architecture.activation"),
    (lambda t: json.dumps(_with(json.loads(t), architecture=_with(
        json.loads(t)["architecture"], action_net={}))), "architecture.action_net"),
    (lambda t: json.dumps(_with(json.loads(t), architecture=_with(
        json.loads(t)["architecture"], hidden=[True]))), "architecture.hidden"),
    (lambda t: json.dumps(_with(json.loads(t), observation_size=791.0)), "observation_size"),
    (lambda t: json.dumps(_with(json.loads(t), arrays=_with(
        json.loads(t)["arrays"], action_bias=[322.0]))), "arrays must be"),
    (lambda t: t.replace('"source": "test"', '"source": 1e400'), "too large"),
    (lambda t: t.replace('"source": "test"', '"source": ' + "9" * 40), "40 digits"),
])
def test_a_model_file_is_read_strictly(tmp_path, edit, words):
    npz, js = tiny_model(tmp_path / "m", hidden=(8,))
    js.write_text(edit(js.read_text()))
    with pytest.raises(ValueError, match=words) as err:
        make_agent(f"ppo:{npz}")
    assert "\n" not in str(err.value) and str(js) in str(err.value)


# ---------------------------------------------------------------- a directory or a FIFO model
def test_a_directory_or_fifo_given_as_a_model_says_so(tmp_path):
    npz, js = tiny_model(tmp_path / "m", hidden=(8,))
    npz.unlink()
    npz.mkdir()
    with pytest.raises(ValueError, match=r"m.npz is a directory") as err:
        make_agent(f"ppo:{npz}")
    assert "not found" not in str(err.value)
    npz.rmdir()
    os.mkfifo(npz)
    got = []

    def load():
        try:
            make_agent(f"ppo:{js}")
        except ValueError as e:
            got.append(str(e))

    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "a FIFO model hung the reader"
    assert len(got) == 1 and "m.npz is not a regular file" in got[0] and "\n" not in got[0]
    tiny_model(tmp_path / "n", hidden=(8,))[1].unlink()
    with pytest.raises(ValueError, match=r"n.json not found"):    # unchanged
        make_agent(f"ppo:{tmp_path / 'n.npz'}")


def test_a_family_with_a_directory_for_a_model_or_file_says_so(tmp_path):
    (tmp_path / "on.npz").mkdir()
    (tmp_path / "on.json").write_text("{}")
    (tmp_path / FILE).write_text(GOOD)
    with pytest.raises(ValueError, match=r"on.npz is a directory"):
        read_family_file(tmp_path / FILE)
    with pytest.raises(ValueError, match=r"is a directory"):
        read_family_file(tmp_path)


# ----------------------------------------------------------------------- the net shape check
def test_check_net_shape_is_what_the_safe_format_holds(tmp_path):
    """check_net_shape (for the training layer, before it trains) accepts exactly the nets the
    safe format saves and loads."""
    for ok in ([128, 128], [256, 256], [64] * MAX_HIDDEN_LAYERS, [1]):
        check_net_shape(ok)
    for bad, words in (([64] * (MAX_HIDDEN_LAYERS + 1), "1 to 8 layer widths"),
                       ([], "1 to 8"), ([4097], "1..4096"), ([True], "1..4096"),
                       ([64.0], "1..4096"), ([4096] * 8, "at most 16,777,216 parameters")):
        with pytest.raises(ValueError, match=words) as err:
            check_net_shape(bad)
        assert "\n" not in str(err.value)
    largest = [2048, 2048]                        # 6.5M parameters: held by both
    check_net_shape(largest)
    meta = tiny_meta(hidden=largest)
    npz, _ = weights.save_weights(tmp_path / "big", meta, {
        k: np.zeros(v, np.float32) for k, v in weights.array_shapes(meta).items()})
    assert load_weights(npz)[0]["architecture"]["hidden"] == largest
    with pytest.raises(ValueError, match="parameters"):       # 21M parameters
        check_net_shape([4096, 4096])
    with pytest.raises(ValueError, match="parameters"):
        weights.check_meta(tiny_meta(hidden=[4096, 4096]), "m")
    assert weight_files(npz)[1].is_file()
