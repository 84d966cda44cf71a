"""`nertz play --human`: one seat for a person against agents, on a wall clock: the hand
(session.py), the web page on 127.0.0.1 and `play_from_args` (server.py), the terminal
fallback (terminal.py), numba's kernels compiled before the clock starts (warmup.py)."""
