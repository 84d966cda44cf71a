"""Optional dependencies, handled one way: `require(module, extra, purpose)` imports a module
of an optional extra or raises one ValueError that says what needs it and what to install;
`available(module)` asks without importing. Every optional import in nertz_env and agents
goes through here (torch, stable-baselines3, sb3-contrib, Ray, imageio, Pillow, tensorboard,
scipy, matplotlib...).

Never imports anything of the project: every layer may use it.
"""
from __future__ import annotations

import importlib
import importlib.util

# The pip line for each extra (pyproject.toml [project.optional-dependencies]).
EXTRAS = {
    "train": "pip install torch --index-url https://download.pytorch.org/whl/cpu && "
             "pip install -e '.[train]'",
    "ray": "pip install -e '.[ray]'",
    "video": "pip install -e '.[video]'",
    "clients": "pip install -e '.[clients]'",
    "export": "pip install -e '.[export]'",
    "test": "pip install -e '.[test]'",
}


class MissingDependency(ValueError):
    """An optional dependency is not installed (a ValueError: callers' error handling of bad
    input covers it; the message names what needs it and the pip line)."""


def available(module: str) -> bool:
    """True when `module` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):        # a parent package missing, or a broken one
        return False


def require(module: str, extra: str | None, purpose: str):
    """Import and return `module`; if it is missing, raise MissingDependency naming `purpose`
    (what needs it, e.g. "a ppo: agent") and the install line of `extra` (a key of EXTRAS,
    or a plain pip requirement such as "pillow")."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        how = EXTRAS.get(extra, f"pip install {extra}") if extra else f"pip install {module}"
        raise MissingDependency(f"{purpose} needs {module.split('.')[0]} ({how}); "
                                f"importing it failed: {exc}") from None
