"""Run the ``trimcp`` command as ``python -m trimcp``."""

from __future__ import annotations

from trimcp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
