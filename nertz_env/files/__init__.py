"""Files are input too: every file the project writes is written whole or not at all
(`atomic`), and every file it reads is read under a cap on what it may inflate or hold
(`bounded`). Both layers use these; nothing here imports the rest of the project."""
from .atomic import atomic_path, write_bytes, write_json, write_text
from .bounded import (MAX_JSON_DEPTH, gunzip_capped, json_loads_bounded, read_capped,
                      zip_member_capped)

__all__ = ["atomic_path", "write_bytes", "write_json", "write_text", "MAX_JSON_DEPTH",
           "gunzip_capped", "json_loads_bounded", "read_capped", "zip_member_capped"]
