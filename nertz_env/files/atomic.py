"""Writes that are whole or absent: the bytes go to a temporary file beside the target
(same folder, so same file system), are flushed to disk, and only then renamed over the
target (`os.replace` is atomic on POSIX and Windows). A failure at any point (a full disk,
an interrupt, an exception in the caller's block) removes the temporary file and leaves the
target as it was, so no file that looks complete is ever a cut one."""
from __future__ import annotations

import json
import os
import secrets
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path):
    """Yield a temporary path beside `path`; when the block ends normally the temporary file
    replaces `path`, otherwise it is removed. For writers that want a file name (np.savez,
    Pillow, imageio, torch.save): write to the yielded path."""
    target = Path(path)
    tmp = _new_temporary(target)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:      # the bytes on disk before the name points at them
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _new_temporary(target: Path) -> Path:
    """A new empty file beside target, made with mode 0o666 less the umask, as open() makes
    one (tempfile.mkstemp's 0o600 would leave every result readable by its owner only)."""
    while True:
        tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}.part"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue


def write_bytes(path, data: bytes) -> Path:
    """`data` to `path`, whole or not at all; returns the path."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path, text: str) -> Path:
    """`text` (UTF-8) to `path`, whole or not at all; returns the path."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path, obj, indent: int | None = 2) -> Path:
    """`obj` as JSON to `path` (strict JSON: NaN and infinities refused), whole or not at all."""
    return write_text(path, json.dumps(obj, indent=indent, allow_nan=False) + "\n")


def swap_in_folder(staging, out, replace: bool) -> None:
    """A staged folder renamed to `out` in one step: `out` absent or an empty folder (removed
    first: rename needs it gone), or, with replace, an old folder moved aside, put back if
    the rename fails and removed after it succeeds. Either the staged folder is `out`
    afterwards or `out` is as it was."""
    import shutil
    staging, out = Path(staging), Path(out)
    if not replace:
        if out.is_dir():
            out.rmdir()                              # empty (the callers check): never deletes
        os.rename(staging, out)
        return
    old = out.with_name(f".{out.name}.old-{secrets.token_hex(6)}")
    os.rename(out, old)
    try:
        os.rename(staging, out)
    except BaseException:
        os.rename(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)
