"""agents: see README.md."""
