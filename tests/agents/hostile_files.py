"""Hostile model files for the tests: an SB3 zip whose pickled entries would create a file."""
from __future__ import annotations

import base64
import json
import pathlib
import pickle
import zipfile


class Payload:
    """Unpickling this creates `marker`: proof that code in the file ran."""

    def __init__(self, marker):
        self.marker = pathlib.Path(marker)

    def __reduce__(self):
        return (pathlib.Path.touch, (self.marker,))


def craft(src, dst, marker):
    """An SB3 zip whose every pickled entry (and one extra key) is the payload."""
    blob = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    for k, v in data.items():
        if isinstance(v, dict) and ":serialized:" in v:
            v[":serialized:"] = blob
    data["zz_extra"] = {":type:": "<class 'object'>", ":serialized:": blob}
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(dst, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    return dst
