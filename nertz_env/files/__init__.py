"""Files are input too: every file the project writes is written whole or not at all
(`atomic`), and every file it reads is read under a cap on what it may inflate or hold,
and only when it is a regular file (`bounded`: check_regular, read_capped). Both layers use
these; nothing here imports the rest of the project."""
from .atomic import atomic_path, swap_in_folder, write_bytes, write_json, write_text
from .bounded import (MAX_INT_DIGITS, MAX_JSON_DEPTH, check_regular, gunzip_capped,
                      json_loads_bounded, json_loads_strict, open_regular, read_capped,
                      zip_member_capped)

__all__ = ["atomic_path", "swap_in_folder", "write_bytes", "write_json", "write_text", "MAX_INT_DIGITS",
           "MAX_JSON_DEPTH", "check_regular", "gunzip_capped", "json_loads_bounded",
           "json_loads_strict", "open_regular", "read_capped", "zip_member_capped"]
