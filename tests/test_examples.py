"""Every example runs and prints what its opening comment promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.slow
def test_supervised_counter() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "supervised_counter.py")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.splitlines() == [
        "total: 5",
        "old handle: actor 'counter' has exited (error: ValueError('cannot add -1')); "
        "start it again or look it up anew",
        "after restart: 0",
        "application stopped",
    ]
    assert "child counter exited abnormally" in result.stderr
