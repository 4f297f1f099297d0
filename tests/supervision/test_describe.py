"""``describe_tree``: the supervision tree as it runs, read through each supervisor's mailbox."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from trimcp.actors import Actor, ActorRef, ReplyTo
from trimcp.config import SysConfig
from trimcp.errors import ActorGone, CallTimeout, ConfigError
from trimcp.supervision import (
    ChildSpec,
    Reloaded,
    Supervisor,
    current_application,
    describe_supervisor,
    describe_tree,
    exit_words,
    open_application,
    open_supervisor,
    start_child,
    supervisor_spec,
    terminate_child,
    which_children,
)

from ._scripted import Boom, Crash, Journal, Script, ref_of, worker


async def test_tree_lists_children_with_kind_state_restart_and_mailbox(journal: Journal) -> None:
    inner = supervisor_spec("inner", [worker("w", journal)], strategy="one_for_all")
    async with open_supervisor(
        [worker("a", journal), inner], name="root", intensity=3, period=7.0
    ) as root:
        tree = await describe_tree(root)
    assert (tree.id, tree.kind, tree.state, tree.strategy) == (
        "root",
        "supervisor",
        "running",
        "one_for_one",
    )
    assert (tree.intensity, tree.period, tree.restarts, tree.children_total) == (3, 7.0, 0, 2)
    assert tree.mailbox is not None
    assert tree.mailbox.mailbox_capacity == Supervisor.mailbox_size
    a, nested = tree.children
    assert (a.id, a.kind, a.state, a.restart, a.restarts, a.last_exit) == (
        "a",
        "worker",
        "running",
        "permanent",
        0,
        None,
    )
    assert a.mailbox is not None
    assert a.mailbox.alive
    assert (nested.id, nested.kind, nested.strategy) == ("inner", "supervisor", "one_for_all")
    assert [c.id for c in nested.children] == ["w"]
    assert [n.id for n in tree.walk()] == ["root", "a", "inner", "w"]
    shown = tree.as_json()
    assert shown["children_total"] == 2
    assert shown["mailbox"] == {"length": 0, "capacity": 256, "peak": 0}
    child = shown["children"][0]  # type: ignore[index]
    assert child["last_exit"] is None
    assert child["strategy"] is None


async def test_restarts_in_window_and_last_exit(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    async with open_supervisor([worker("a", journal)], intensity=5, period=10.0) as root:
        for _ in range(2):
            ref_of(await which_children(root), "a").send_info(Crash())
            await trio.sleep(1.0)
        tree = await describe_tree(root)
        (a,) = tree.children
        assert a.restarts == 2
        assert tree.window_restarts == 2
        assert tree.restarts == 2  # the root's restarts are those inside its window
        assert a.last_exit is not None
        assert a.last_exit.reason == "crashed: Boom: a"
        assert a.state == "running"
        # The window slides: 10 s after the last restart none of them counts any more.
        await trio.sleep(10.0)
        later = await describe_tree(root)
        assert later.window_restarts == 0
        assert later.children[0].restarts == 2  # the child's own count never shrinks


async def test_terminated_child_is_stopped_with_its_exit(journal: Journal) -> None:
    async with open_supervisor([worker("a", journal), worker("b", journal)]) as root:
        await terminate_child(root, "a")
        tree = await describe_tree(root)
    a, b = tree.children
    assert (a.state, b.state) == ("stopped", "running")
    assert a.last_exit is not None
    assert a.last_exit.reason == "shutdown"
    assert a.as_json()["last_exit"]["at"].endswith("+00:00")  # type: ignore[index]


async def test_dynamic_children_are_bounded_and_counted(journal: Journal) -> None:
    template = worker("session", journal, restart="temporary")
    async with open_supervisor([template], strategy="simple_one_for_one") as root:
        for _ in range(7):
            await start_child(root)
        tree = await describe_tree(root, max_children=3)
        assert [c.id for c in tree.children] == ["session-1", "session-2", "session-3"]
        assert tree.children_total == 7
        snapshot = await describe_supervisor(root, max_children=0)
        assert (snapshot.children, snapshot.children_total) == ((), 7)
        with pytest.raises(ValueError, match="max_children"):
            await describe_supervisor(root, max_children=-1)


async def test_depth_bound_and_graft(journal: Journal) -> None:
    deep = supervisor_spec("l2", [worker("w", journal)])
    async with (
        open_supervisor([supervisor_spec("l1", [deep])], name="top") as root,
        open_supervisor([worker("s", journal)], name="grafted") as other,
    ):
        shallow = await describe_tree(root, max_depth=2)
        (l1,) = shallow.children
        (l2,) = l1.children
        assert l2.children == ()
        assert l2.unanswered is not None
        assert "max_depth" in l2.unanswered
        # A worker that runs a supervisor of its own shows it as its child.
        (l1_full,) = (await describe_tree(root)).children
        w = l1_full.children[0].children[0]
        assert w.id == "w"
        assert isinstance(w, type(l1_full))
        l1_ref = ref_of(await which_children(root), "l1")
        l2_ref = ref_of(await which_children(l1_ref), "l2")
        w_ref = ref_of(await which_children(l2_ref), "w")
        grafted = await describe_tree(root, subtrees={w_ref: ("sessions", other)})
        node = grafted.children[0].children[0].children[0]
        assert node.id == "w"
        (sessions,) = node.children
        assert (sessions.id, sessions.kind, [c.id for c in sessions.children]) == (
            "sessions",
            "supervisor",
            ["s"],
        )


class _Stuck(Actor):
    """A supervisor stand-in that never answers (its handler waits forever)."""

    async def handle_call(self, message: object, reply_to: ReplyTo) -> object:
        await trio.sleep_forever()


async def test_unanswering_supervisor_costs_at_most_the_timeout(
    autojump_clock: trio.testing.MockClock,
) -> None:
    async with trio.open_nursery() as nursery:
        ref: ActorRef = await nursery.start(_Stuck().run)
        with pytest.raises(CallTimeout):
            await describe_supervisor(ref, timeout=0.5)
        start = trio.current_time()
        node = await describe_tree(ref, timeout=0.5)
        assert trio.current_time() - start == pytest.approx(0.5)
        assert node.unanswered == "did not answer within 0.5 s"
        assert node.children == ()
        nursery.cancel_scope.cancel()


async def test_exited_supervisor(journal: Journal) -> None:
    async with open_supervisor([worker("a", journal)]) as root:
        pass
    with pytest.raises(ActorGone):
        await describe_supervisor(root)
    node = await describe_tree(root)
    assert (node.state, node.unanswered) == ("stopped", "exited")


def test_exit_words() -> None:
    from trimcp.actors import KILLED, NORMAL, crashed

    assert exit_words(NORMAL) == "normal"
    assert exit_words(KILLED) == "killed"
    assert exit_words(crashed(ValueError("bad\nsecond line"))) == "crashed: ValueError: bad"
    assert exit_words(crashed(Boom())) == "crashed: Boom"


# --- the application: reload and current_application ------------------------------------------


async def test_current_application_and_reload(journal: Journal) -> None:
    seen: list[object] = []

    async def child() -> None:
        # At start the application does not exist yet; it does by the time of use.
        seen.append(current_application())
        await trio.sleep_forever()

    reloaded_with: list[SysConfig] = []
    new = SysConfig(sources=("new.toml",))

    async def on_reload(app: object, config: SysConfig) -> str:
        reloaded_with.append(config)
        return "applied"

    async with open_application(
        SysConfig(),
        children=[ChildSpec("c", child)],
        reload_config=lambda: new,
        on_reload=on_reload,
    ) as app:
        assert seen == [None]
        assert app.state == "running"
        assert app.started_with is app.config
        result = await app.reload()
        assert isinstance(result, Reloaded)
        assert (result.config, result.applied, result.sources) == (new, "applied", ("new.toml",))
        assert app.config is new
        assert app.started_with is not new
        assert reloaded_with == [new]
    assert current_application() is None
    assert app.state == "stopped"


async def test_reload_keeps_running_config_on_error() -> None:
    def broken() -> SysConfig:
        raise ConfigError("sys_config.toml: [http] port: expected an integer")

    async with open_application(SysConfig(), reload_config=broken) as app:
        before = app.config
        with pytest.raises(ConfigError, match="port"):
            await app.reload()
        assert app.config is before
    async with open_application(SysConfig()) as plain:
        with pytest.raises(ConfigError, match="without a configuration source"):
            await plain.reload()


async def test_application_state_stopping_once_drained() -> None:
    async with open_application(SysConfig()) as app:
        app.drain.begin()
        assert app.state == "stopping"


async def test_transient_child_that_exited_normally_is_stopped(
    autojump_clock: trio.testing.MockClock, journal: Journal
) -> None:
    done = worker("done", journal, Script(exit_after=1.0), restart="transient")
    async with open_supervisor([done, worker("other", journal)]) as root:
        await trio.sleep(2.0)
        tree = await describe_tree(root)
    finished, other = tree.children
    assert (finished.state, finished.restarts) == ("stopped", 0)
    assert finished.last_exit is not None
    assert finished.last_exit.reason == "normal"
    assert finished.mailbox is not None
    assert finished.mailbox.alive is False
    assert other.state == "running"
