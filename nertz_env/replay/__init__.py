"""Replays: the versioned, checksummed file format (format.py), exact playback and its check
(playback.py), the `Recorder` any Engine reports to (recorder.py), the terminal browser and
GIF/MP4 (terminal.py), and the self-contained HTML viewer (html.py, its assets in
nertz_env/web/). docs/replays.md.
"""
from .format import SUFFIX, HandReplay, Replay
from .playback import ReplayError, state_digest
from .recorder import Recorder, record

__all__ = ["SUFFIX", "HandReplay", "Recorder", "Replay", "ReplayError", "record", "state_digest"]
