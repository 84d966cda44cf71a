"""Readers with a ceiling: a file is read only up to a byte cap, a gzip stream is inflated
only up to a cap (a 2 MB bomb that would inflate to 2 GiB is refused after inflating the
cap, in well under a second), a zip member is read only up to a cap whatever its header
claims, and JSON is parsed only when its nesting is shallow enough for Python's parser (a
deep one is a ValueError, not a RecursionError traceback) and its integers only when short
(a 5,000-digit one is refused naming its field, not Python's int-conversion error). A path
is read only when it names a regular file (`check_regular`: a FIFO, socket or device is
never opened, so nothing hangs). Every refusal is a ValueError naming what was read (`what`)
and the limit. A path that names no file (missing, a directory, through a file) is a
ValueError too: bad input, exit 2; an existing file the system will not let be read
(permission, an I/O error) is an OSError naming the path: exit 1 (`read_fault`)."""
from __future__ import annotations

import errno
import json
import os
import stat
import zipfile
import zlib

import numpy as np

MAX_JSON_DEPTH = 64          # far deeper than any file the project writes (replays: 5)
MAX_INT_DIGITS = 100         # JSON integers: far longer than any file the project writes
                             # (128-bit generator states have 39 digits)
STRICT_INT_DIGITS = 30       # json_loads_strict's default (model and family files)
_CHUNK = 1 << 20
# what a damaged or unreadable zip member raises: an encrypted member (RuntimeError), an
# unknown compression method (NotImplementedError), a bad lzma/bz2 stream (LZMAError, OSError)
try:
    from lzma import LZMAError as _LZMAError
except ImportError:                      # Python built without lzma
    class _LZMAError(Exception):
        pass
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError,
              NotImplementedError, _LZMAError)


def zip_error_text(exc) -> str:
    """One of ZIP_ERRORS as a short reason on one line."""
    if isinstance(exc, RuntimeError) and "encrypted" in str(exc):
        return "it is encrypted; only plain zip members are read"
    if isinstance(exc, NotImplementedError):
        return f"its compression method is not one this reader knows ({exc})"
    return " ".join(str(exc).split())[:300]


def _mb(n: int) -> str:
    return f"{n / 2**20:g} MiB"


# errnos of a path that names no file to read: the user's input, not the system, is at fault
NO_FILE = (errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ELOOP, errno.ENAMETOOLONG)


def read_fault(err: OSError, path, what: str = "file") -> Exception:
    """What a reader raises for `err`, met opening or reading `path` (agents/cli main maps a
    ValueError to exit 2, an OSError to exit 1): a ValueError where the path names no file
    (missing, through a file, a directory, a loop of links, a name too long) or `err` is no
    system error (no errno); an OSError naming the path where an existing file could not be
    read (permission, an I/O error). Both one line naming `what` and the path."""
    why = " ".join(str(err.strerror or err).split())[:200]
    if not system_fault(err):
        return ValueError(f"{what} {str(path)!r}: cannot read it ({why})")
    return OSError(err.errno, f"cannot read the {what} ({why})", str(path))


def system_fault(exc) -> bool:
    """Whether `exc` is the system's refusal of a file that is there (an OSError with an
    errno: permission, an I/O error), not a path naming no file (NO_FILE), a bad argument
    (EINVAL: a seek a damaged archive asked for) or a damaged stream's (zipfile, bz2 and
    lzma raise OSErrors without an errno)."""
    return isinstance(exc, OSError) and exc.errno is not None \
        and exc.errno not in NO_FILE + (errno.EINVAL,)


def zip_fault(exc, text: str) -> Exception:
    """What a zip reader raises for `exc`, one of ZIP_ERRORS met reading a member: the
    system's own OSError as it is (system_fault: exit 1, its reader names the file), else a
    ValueError "TEXT (why)" (a damaged, encrypted or unknown-method member: exit 2)."""
    return exc if system_fault(exc) else ValueError(f"{text} ({zip_error_text(exc)})")


def check_regular(path, what: str = "file") -> None:
    """Refuse `path` unless it names a regular file (symlinks followed): a directory is a
    ValueError "WHAT 'PATH' is a directory", a FIFO, socket or device one "... is not a
    regular file". Only stat()s the path, so a FIFO is never opened (opening one for reading
    waits for a writer: the reader would hang). A missing or unreadable path is left to the
    caller's open (open_regular: a ValueError where it is missing, read_fault)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):           # missing, no permission, a NUL in the name
        return
    if stat.S_ISDIR(mode):
        raise ValueError(f"{what} {str(path)!r} is a directory; a file is needed")
    if not stat.S_ISREG(mode):
        raise ValueError(f"{what} {str(path)!r} is not a regular file (a FIFO, socket or "
                         "device is never opened)")


def open_regular(path, what: str = "file"):
    """`path` opened for binary reading once check_regular passes, opened without blocking
    and checked again on the open file, so a FIFO swapped in between cannot hang it."""
    check_regular(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise read_fault(err, path, what) from None
    except ValueError as err:               # a NUL in the name
        raise ValueError(f"{what} {str(path)!r} is not a path ({err})") from None
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        fh.close()
        raise ValueError(f"{what} {str(path)!r} is not a regular file (a FIFO, socket or "
                         "device is never read)")
    return fh


def read_capped(path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of `path`, refused (ValueError naming `what` and the cap) when over
    `max_bytes`, or when `path` is not a regular file (check_regular: a FIFO is never
    opened); never reads more than max_bytes + 1."""
    with open_regular(path, what) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as err:                  # EIO and its kin: the system's fault
            raise read_fault(err, path, what) from None
    if len(data) > max_bytes:
        raise ValueError(f"{what} {str(path)!r} is larger than {_mb(max_bytes)}, the most "
                         "this reader holds; it is refused unread")
    return data


def gunzip_capped(data: bytes, max_bytes: int, what: str = "gzip data") -> bytes:
    """`data` (one gzip member, or a zlib stream) inflated, refused when it would inflate to
    more than `max_bytes` or is not complete gzip."""
    d = zlib.decompressobj(wbits=47)         # 32 + 15: gzip or zlib header, detected
    out = []
    size = 0
    buf = data
    try:
        while buf:
            piece = d.decompress(buf, max_bytes + 1 - size)
            out.append(piece)
            size += len(piece)
            if size > max_bytes:
                raise ValueError(f"{what} inflates to more than {_mb(max_bytes)}, the most this "
                                 "reader holds; it is refused (a damaged or hostile file?)")
            buf = d.unconsumed_tail
            if d.eof:
                break
        if not d.eof:
            raise ValueError(f"{what} is cut short: the gzip stream does not end")
    except zlib.error as exc:
        raise ValueError(f"{what} is not valid gzip data ({exc})") from None
    return b"".join(out)


def zip_member_capped(zf, name: str, max_bytes: int, what: str = "zip member") -> bytes:
    """Member `name` of the open zipfile `zf`, refused when its header or its actual inflated
    size is over `max_bytes` (a header can lie; the read stops at the cap either way)."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise ValueError(f"{what}: the archive has no {name!r}") from None
    if info.file_size > max_bytes:
        raise ValueError(f"{what} {name!r} would inflate to {_mb(info.file_size)}, over the "
                         f"{_mb(max_bytes)} this reader holds; it is refused")
    try:
        with zf.open(info) as fh:      # zipfile stops at the header's size and checks the CRC
            data = fh.read(max_bytes + 1)
    except ZIP_ERRORS as exc:          # damaged, encrypted, an unknown compression method
        raise zip_fault(exc, f"{what} {name!r} is damaged or unreadable") from None
    if len(data) > max_bytes:
        raise ValueError(f"{what} {name!r} inflates to more than {_mb(max_bytes)}; refused")
    return data


def _utf8(raw: bytes) -> bytes:
    """`raw` as UTF-8 bytes, decoded as json.loads decodes bytes (UTF-8, UTF-16 or UTF-32 by
    its first bytes): in UTF-16 a backslash and the quote it escapes are not adjacent bytes,
    so the depth is measured on the text json.loads will parse, re-encoded. Undecodable
    bytes are left for json.loads to refuse."""
    enc = json.detect_encoding(raw)
    if enc == "utf-8":
        return raw
    try:
        return raw.decode(enc, "surrogatepass").encode("utf-8", "surrogatepass")
    except (UnicodeError, LookupError):
        return raw


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text `raw` (brackets inside strings
    skipped). Linear in len(raw) whatever the text (no backtracking, vectorised): a quote is
    escaped where an odd run of backslashes precedes it, the unescaped quotes open and close
    the strings in turn, and only the brackets outside them count."""
    a = np.frombuffer(_utf8(bytes(raw)), dtype=np.uint8)
    quotes = np.flatnonzero(a == ord('"'))
    slashes = np.flatnonzero(a == ord("\\"))
    if len(quotes) and len(slashes):
        # each backslash's run start: where it does not follow another backslash
        starts = np.where(np.diff(slashes, prepend=-2) != 1, slashes, 0)
        starts = np.maximum.accumulate(starts)
        k = np.searchsorted(slashes, quotes - 1)             # the backslash at q - 1, if any
        hit = (k < len(slashes)) & (slashes[np.minimum(k, len(slashes) - 1)] == quotes - 1)
        run = np.where(hit, quotes - starts[np.minimum(k, len(slashes) - 1)], 0)
        quotes = quotes[run % 2 == 0]                         # the unescaped ones
    brackets = np.flatnonzero((a == ord("[")) | (a == ord("{")) | (a == ord("]"))
                              | (a == ord("}")))
    outside = np.searchsorted(quotes, brackets) % 2 == 0     # an even count of quotes before
    brackets = brackets[outside]
    step = np.where((a[brackets] == ord("[")) | (a[brackets] == ord("{")), 1, -1)
    return int(np.cumsum(step).max(initial=0))


class _LongInt:
    """What an over-long integer parses to until the tree is searched for its field."""
    __slots__ = ("digits",)

    def __init__(self, digits: int):
        self.digits = digits


def _long_int_field(obj, path: str = ""):
    """(field path, digits) of the first _LongInt in a parsed tree (depth-capped already)."""
    if isinstance(obj, _LongInt):
        return path or "the top level", obj.digits
    items = obj.items() if isinstance(obj, dict) else \
        enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        found = _long_int_field(v, f"{path}[{k}]" if isinstance(k, int) else
                                (f"{path}.{k}" if path else str(k))[:200])
        if found:
            return found
    return None


def _parse(raw, what: str, max_depth: int, max_int_digits: int, **hooks):
    """json.loads of `raw` under the depth cap, constants refused, and integers of more than
    `max_int_digits` digits refused by field (a ValueError naming `what` and the field)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    depth = json_depth(raw)
    if depth > max_depth:
        raise ValueError(f"{what} is nested {depth} levels deep; at most {max_depth} are read")

    def no_constant(name):
        raise ValueError(f"{what} holds {name}, which is not JSON")

    long_ints = []

    def whole(text):
        digits = len(text.lstrip("-"))
        if digits > max_int_digits:                # checked before int(): no slow parse and
            long_ints.append(digits)               # no int-conversion limit error
            return _LongInt(digits)
        return int(text)

    try:
        obj = json.loads(raw, parse_constant=no_constant, parse_int=whole, **hooks)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{what} is not valid JSON ({exc})") from None
    if long_ints:
        field, digits = _long_int_field(obj) or ("a field", long_ints[0])
        raise ValueError(f"{what}: field {field} holds an integer of {digits} digits; at most "
                         f"{max_int_digits} are read")
    return obj


def json_loads_bounded(raw, what: str = "JSON", max_depth: int = MAX_JSON_DEPTH,
                       max_int_digits: int = MAX_INT_DIGITS):
    """`raw` (bytes or str) parsed as strict JSON (no NaN or Infinity), refused when nested
    deeper than `max_depth`, holding an integer of more than `max_int_digits` digits, or not
    valid JSON: a one-line ValueError naming `what` (and the field of a long integer)."""
    return _parse(raw, what, max_depth, max_int_digits)


def json_loads_strict(raw, what: str = "JSON", max_depth: int = MAX_JSON_DEPTH,
                      max_int_digits: int = STRICT_INT_DIGITS):
    """`raw` parsed as json_loads_bounded parses it, and more strictly: an object with a key
    twice (json.loads keeps the last one in silence), a number too large for a float (1e400
    reads as infinity) and an integer of over `max_int_digits` digits (30 unless told) are
    refused, a one-line ValueError naming `what` and the key, number or field. For files
    whose every field is checked (models, families, replays)."""
    def finite(text):
        x = float(text)
        if not np.isfinite(x):
            raise ValueError(f"{what} holds the number {text[:40]}, too large for a float")
        return x

    def unique(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"{what} holds the key {k[:80]!r} twice in one object (JSON "
                                 "keys must be unique: which one counts would be a guess)")
            seen.add(k)
        return dict(pairs)

    return _parse(raw, what, max_depth, max_int_digits, parse_float=finite,
                  object_pairs_hook=unique)
