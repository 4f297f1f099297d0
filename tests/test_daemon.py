"""The daemon: ``run_application`` signal handling in-process, and ``trimcp serve`` for real.

In-process tests send real signals to this process (pytest runs trio in the main thread, so
trio's signal receiver gets them) and use the autojump clock for the stop deadline. The
subprocess tests start ``python -m trimcp serve`` and stop it with SIGTERM/SIGINT.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from trimcp.actors import Actor, ExitReason
from trimcp.config import SysConfig, load_config
from trimcp.config._settings import ApplicationSettings
from trimcp.supervision import Application, ChildSpec, run_application

if TYPE_CHECKING:
    from trio.testing import MockClock

REPO = Path(__file__).resolve().parent.parent


class Recorder(Actor):
    """Records terminate calls; its terminate takes ``linger`` seconds."""

    def __init__(self, log: list[tuple[str, float]], tag: str, linger: float = 0.0) -> None:
        self.log = log
        self.tag = tag
        self.linger = linger

    async def terminate(self, reason: ExitReason) -> None:
        self.log.append((f"{self.tag} terminating: {reason}", trio.current_time()))
        await trio.sleep(self.linger)
        self.log.append((f"{self.tag} terminated", trio.current_time()))


def _specs(log: list[tuple[str, float]], linger: float = 0.0) -> list[ChildSpec]:
    return [
        ChildSpec.for_actor("first", lambda: Recorder(log, "first")),
        ChildSpec.for_actor("slow", lambda: Recorder(log, "slow", linger), shutdown=math.inf),
    ]


async def test_sigterm_stops_children_in_reverse_order(autojump_clock: MockClock) -> None:
    log: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_application(SysConfig(), children=_specs(log, 1.0)))
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    assert log == [
        ("slow terminating: shutdown", 0.0),
        ("slow terminated", 1.0),
        ("first terminating: shutdown", 1.0),
        ("first terminated", 1.0),
    ]


async def test_stop_timeout_kills_what_is_left(autojump_clock: MockClock) -> None:
    log: list[tuple[str, float]] = []
    config = SysConfig(application=ApplicationSettings(stop_timeout=3.0))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_application(config, children=_specs(log, 1000.0)))
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    assert trio.current_time() == 3.0
    assert ("slow terminating: shutdown", 0.0) in log
    assert ("slow terminated", 3.0) not in log


async def test_second_signal_cancels_everything(autojump_clock: MockClock) -> None:
    log: list[tuple[str, float]] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: run_application(SysConfig(), children=_specs(log, 1000.0)))
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
        await trio.sleep(2.0)
        os.kill(os.getpid(), signal.SIGINT)
    assert trio.current_time() == pytest.approx(2.0)
    assert [entry for entry, _ in log] == ["slow terminating: shutdown"]


async def test_sighup_reloads_and_keeps_running_on_a_bad_file(tmp_path: Path) -> None:
    config_file = tmp_path / "sys_config.toml"
    config_file.write_text('[application]\nname = "before"\n', encoding="utf-8")
    reloaded: list[str] = []
    seen = trio.Event()

    async def on_reload(app: Application, config: SysConfig) -> None:
        reloaded.append(config.application.name)
        seen.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: run_application(
                load_config(config_file),
                reload_config=lambda: load_config(config_file),
                on_reload=on_reload,
            )
        )
        await trio.testing.wait_all_tasks_blocked()
        config_file.write_text('[application]\nname = "after"\n', encoding="utf-8")
        os.kill(os.getpid(), signal.SIGHUP)
        with trio.fail_after(5):
            await seen.wait()
        config_file.write_text("[application]\nname = 3\n", encoding="utf-8")
        os.kill(os.getpid(), signal.SIGHUP)
        await trio.testing.wait_all_tasks_blocked()
        os.kill(os.getpid(), signal.SIGTERM)
    assert reloaded == ["after"]


def _serve(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "trimcp", "serve", *args],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen[str], needle: str) -> list[str]:
    assert process.stderr is not None
    lines: list[str] = []
    for line in process.stderr:
        lines.append(line)
        if needle in line:
            return lines
    pytest.fail(f"{needle!r} never appeared; stderr was:\n{''.join(lines)}")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_trimcp_serve_stops_cleanly(signum: int) -> None:
    process = _serve("--config", "sys_config.toml")
    try:
        _wait_for_line(process, "application trimcp started")
        process.send_signal(signum)
        _, rest = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, rest
    assert "application trimcp stopped" in rest


@pytest.mark.slow
def test_trimcp_serve_refuses_a_broken_config(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[supervision]\nintensity = -1\n", encoding="utf-8")
    process = _serve("--config", str(broken))
    _, err = process.communicate(timeout=20)
    assert process.returncode == 1
    assert "supervision.intensity" in err
    assert str(broken) in err


@pytest.mark.slow
def test_trimcp_serve_sighup_rereads_the_file_and_applies_logging(tmp_path: Path) -> None:
    config_file = tmp_path / "sys_config.toml"
    config_file.write_text('[logging]\nformat = "text"\n', encoding="utf-8")
    process = _serve("--config", str(config_file))
    try:
        _wait_for_line(process, "application trimcp started")
        config_file.write_text('[logging]\nformat = "json"\n', encoding="utf-8")
        process.send_signal(signal.SIGHUP)
        reloaded = _wait_for_line(process, "configuration reloaded")[-1]
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert json.loads(reloaded)["message"].startswith("SIGHUP: configuration reloaded from")
    assert process.returncode == 0
