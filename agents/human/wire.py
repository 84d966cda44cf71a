"""What the play server accepts over HTTP (server.py): each POST body read under a byte cap
and a nesting cap (nertz_env.files), then checked against its endpoint's exact keys and
types. Any other body is a `BadRequest` (a ValueError) whose one line names the endpoint,
the field and what is allowed; the server answers it with its HTTP status and changes
nothing."""
from __future__ import annotations

import json

from nertz_env.files import json_loads_bounded

MAX_BODY = 4096                 # far above any body the page sends ({"move": ...} is < 100)
MAX_DEPTH = 2                   # a flat object of scalars is all any endpoint takes
MAX_MOVE_TEXT = 80
MAX_TICK = 10**9

# endpoint -> field -> (type, required, what the page sends)
BODIES = {
    "/move": {"move": (str, True, 'move text such as "waste>lake"'),
              "tick": (int, False, "the tick of the position the page shows, an int >= 0")},
    "/pause": {"paused": (bool, True, "true or false")},
    "/start": {},
}


class BadRequest(ValueError):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def shape(path: str) -> str:
    """The body an endpoint takes, as one line: {"move": TEXT, "tick": N (optional)}."""
    parts = [f'"{k}": {hint}' + ("" if need else " (optional)")
             for k, (_, need, hint) in BODIES[path].items()]
    return "{" + ", ".join(parts) + "}"


def content_length(headers) -> int:
    """The body's byte count from the headers: 0..MAX_BODY, else a BadRequest (the body is
    then never read)."""
    if headers.get("Transfer-Encoding"):
        raise BadRequest(411, "send the body with a Content-Length header (no Transfer-Encoding)")
    text = headers.get("Content-Length")
    if text is None:
        return 0
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        raise BadRequest(400, f"Content-Length {text[:20]!r} must be a byte count "
                              f"from 0 to {MAX_BODY}")
    if len(text) > 9 or int(text) > MAX_BODY:
        raise BadRequest(413, f"the body is {text[:20]} bytes; at most {MAX_BODY} are read")
    return int(text)


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise BadRequest(400, f"the body names {key!r} twice")
        out[key] = value
    return out


def parse_body(path: str, raw: bytes) -> dict:
    """The body of POST `path` (one of BODIES) as a dict of exactly its fields, else a
    BadRequest naming the field and what is allowed."""
    what = f"the body of POST {path}"
    if not raw.strip():
        raw = b"{}"
    try:
        json_loads_bounded(raw, what=what, max_depth=MAX_DEPTH)
        body = json.loads(raw, object_pairs_hook=_no_duplicates)
    except BadRequest as err:
        raise BadRequest(400, f"{what}: {err}; send {shape(path)}") from None
    except ValueError as err:
        raise BadRequest(400, f"{err}; send {shape(path)}") from None
    if not isinstance(body, dict):
        raise BadRequest(400, f"{what} must be a JSON object: send {shape(path)}")
    fields = BODIES[path]
    for key in body:
        if key not in fields:
            raise BadRequest(400, f"{what}: unknown field {key[:40]!r}; send {shape(path)}")
    for key, (kind, need, hint) in fields.items():
        if key not in body:
            if need:
                raise BadRequest(400, f"{what}: {key!r} is missing; send {shape(path)}")
            continue
        value = body[key]
        exact = type(value) is kind           # bool is not an int here, nor 1 a bool
        if not exact:
            raise BadRequest(400, f"{what}: {key!r} must be {hint}, got "
                                  f"{json.dumps(value)[:40]}")
        if kind is str and not 0 < len(value) <= MAX_MOVE_TEXT:
            raise BadRequest(400, f"{what}: {key!r} must be 1 to {MAX_MOVE_TEXT} characters "
                                  f"of move text, got {len(value)}")
        if kind is int and not 0 <= value <= MAX_TICK:
            raise BadRequest(400, f"{what}: {key!r} must be {hint}, got {value}"[:200])
    return body
