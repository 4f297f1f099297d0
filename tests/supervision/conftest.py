"""Fixtures for the supervision tests (the scripted children live in ``_scripted.py``)."""

from __future__ import annotations

import logging

import pytest

from ._scripted import SUPERVISION_LOGGER, Journal


@pytest.fixture
def journal() -> Journal:
    """A fresh journal for one test."""
    return Journal()


@pytest.fixture
def supervision_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Capture the supervision package's records from DEBUG up."""
    caplog.set_level(logging.DEBUG, logger=SUPERVISION_LOGGER)
    return caplog
