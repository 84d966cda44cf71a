"""Replays: the versioned, checksummed file format and exact playback (format.py), the
`Recorder` any Engine reports to, the terminal browser and GIF/MP4 (terminal.py), and the
self-contained HTML viewer (html.py, its assets in nertz_env/web/). docs/replays.md.
"""
from .format import SUFFIX, HandReplay, Recorder, Replay, ReplayError, record, state_digest

__all__ = ["SUFFIX", "HandReplay", "Recorder", "Replay", "ReplayError", "record", "state_digest"]
