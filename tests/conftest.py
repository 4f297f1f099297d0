"""Suite-wide fixtures: every trio test must leave no task running when its body returns."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator

import pytest

from trimcp.testing import assert_no_leaked_tasks

AsyncTest = Callable[..., Awaitable[object]]


def _checked(test: AsyncTest) -> AsyncTest:
    @functools.wraps(test)
    async def run_then_check(*args: object, **kwargs: object) -> None:
        await test(*args, **kwargs)
        assert_no_leaked_tasks()

    return run_then_check


@pytest.fixture(autouse=True)
def no_leaked_tasks(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a trio test's body returns, fail if it left a task running.

    Runs ``trimcp.testing.assert_no_leaked_tasks`` inside the test's trio run, in the test's
    own task, once the body has returned (not after a failure: that report comes first). Sync
    tests are left alone. Override this fixture in a module to opt out.

    It is a sync fixture that wraps the test function because pytest-trio 0.8 never runs async
    autouse fixtures (python-trio/pytest-trio#123) and refuses async fixtures in sync tests.
    Under Hypothesis the check runs after every example.
    """
    item = request.node
    if not isinstance(item, pytest.Function) or item.get_closest_marker("trio") is None:
        yield
        return
    test = item.obj
    hypothesis = getattr(test, "hypothesis", None)
    if hypothesis is not None:
        # pytest-trio wraps ``inner_test`` (one trio.run per example) at call time; wrap it
        # first, and restore it afterwards because the function object is shared by every
        # parametrized item.
        inner = hypothesis.inner_test
        hypothesis.inner_test = _checked(inner)
        try:
            yield
        finally:
            hypothesis.inner_test = inner
        return
    item.obj = _checked(test)
    try:
        yield
    finally:
        item.obj = test
