"""Where the shell's lines come from: GNU readline driven from trio, or ``input()`` in a thread.

In a terminal with GNU readline, ``ReadlineEditor`` uses readline's *callback* interface
(``rl_callback_handler_install`` / ``rl_callback_read_char``, through ``ctypes`` on the library
the ``readline`` module loaded) from trio's own thread: trio waits until stdin is readable,
then readline handles the key. Nothing blocks in a worker thread, so

- Ctrl-C reaches trio's signal receiver like any other SIGINT; at the prompt the shell calls
  ``interrupt()``, which drops the line and draws a fresh prompt, as bash does (readline's
  own signal handling is off, as CPython's ``input()`` turns it off: ``rl_catch_signals``);
- a server's log message that arrives while the prompt waits is printed above it and the
  prompt redrawn (``show``), instead of being written through the line being typed;
- history, Tab completion (the ``readline`` module's completer) and ``~/.inputrc`` work as
  in any readline program.

Elsewhere (stdin not a terminal, libedit, no readline) ``ThreadedReader`` reads with
``input()`` in a worker thread; one line is read at a time, and a line a cancelled read was
waiting for goes to the next read, not lost. At a terminal there, Ctrl-C empties the line
through the terminal's own driver (``ISIG`` flushes pending input).
"""

from __future__ import annotations

import contextlib
import ctypes
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Protocol, final

import trio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from pathlib import Path
    from types import ModuleType
    from typing import TextIO

__all__ = ["LineReader", "open_line_reader"]

#: Lines of history kept in the history file.
HISTORY_LENGTH = 1000
# ``void (*rl_vcpfunc_t)(char *)``: the line (malloc'ed, ours to free) or NULL at end of input.
_LINE_HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_ERASE_LINE = "\r\x1b[K"  # to column 0, then clear to the end of the line (ANSI CSI K)
_REQUIRED = (
    "rl_callback_handler_install",
    "rl_callback_read_char",
    "rl_callback_handler_remove",
    "rl_callback_sigcleanup",
    "rl_free_line_state",
    "rl_cleanup_after_signal",
    "rl_forced_update_display",
    "rl_resize_terminal",
)


class LineReader(Protocol):
    """A source of lines typed by the user.

    Implementations print ``prompt`` themselves and never raise for Ctrl-C or Ctrl-D.
    """

    @property
    def reading(self) -> bool:
        """Whether a prompt is waiting for input now."""
        ...

    async def read_line(self, prompt: str, *, remember: bool = True) -> str | None:
        """Return the next line (without its newline), or None at end of input (Ctrl-D).

        ``remember``: add the line to the history. Cancelling leaves the terminal as it was.
        """
        ...

    def interrupt(self) -> None:
        """Ctrl-C at the prompt: forget what was typed and prompt again."""
        ...

    def show(self, text: str) -> None:
        """Print ``text`` (whole lines), above the prompt if one is waiting."""
        ...


@asynccontextmanager
async def open_line_reader(
    out: TextIO, completer: Callable[[str], list[str]], history: Path
) -> AsyncIterator[LineReader]:
    """Yield the best reader for this terminal; save the history on the way out.

    ``completer(text_before_cursor)`` returns the words Tab may put in place of the last one.
    """
    readline = _gnu_readline() if sys.stdin.isatty() and out.isatty() else None
    if readline is None:
        async with trio.open_nursery() as nursery:
            reader = ThreadedReader(out, echoed=sys.stdin.isatty())
            nursery.start_soon(reader.pump)
            try:
                yield reader
            finally:
                nursery.cancel_scope.cancel()
        return
    editor = ReadlineEditor(readline, out)
    editor.start(completer, history)
    try:
        yield editor
    finally:
        editor.stop(history)


def _gnu_readline() -> ModuleType | None:
    try:
        import readline
    except ImportError:  # no readline module (Windows): ThreadedReader
        return None
    if "libedit" in (readline.__doc__ or ""):  # its callback interface differs in places
        return None
    try:
        library = ctypes.CDLL(readline.__file__)
    except (OSError, AttributeError):  # a static build: no file to open
        return None
    if not all(hasattr(library, name) for name in _REQUIRED):
        return None
    return readline


@final
class ReadlineEditor:
    """GNU readline's callback interface, driven from the trio thread (module docstring)."""

    def __init__(self, readline: ModuleType, out: TextIO) -> None:
        self._readline = readline
        self._lib = ctypes.CDLL(readline.__file__)
        self._free = ctypes.CDLL(None).free
        self._free.argtypes = [ctypes.c_void_p]
        self._lib.rl_callback_handler_install.argtypes = [ctypes.c_char_p, _LINE_HANDLER]
        self._out = out
        # Readline keeps this pointer between calls: it must live as long as the editor.
        self._handler = _LINE_HANDLER(self._on_line)
        self._prompt = b""
        self._installed = False
        self._done = False
        self._line: str | None = None

    @property
    def reading(self) -> bool:
        return self._installed

    def start(self, completer: Callable[[str], list[str]], history: Path) -> None:
        """Turn on Tab completion and load the history file (a missing one is fine)."""
        readline = self._readline
        matches: list[str] = []

        def complete(text: str, state: int) -> str | None:
            if state == 0:
                before = readline.get_line_buffer()[: readline.get_endidx()]
                matches[:] = [word for word in completer(before) if word.startswith(text)]
            return matches[state] if state < len(matches) else None

        readline.set_completer(complete)
        readline.set_completer_delims(" \t")
        readline.parse_and_bind("tab: complete")
        # Signals are trio's: readline must neither catch SIGINT nor clean up after it.
        ctypes.c_int.in_dll(self._lib, "rl_catch_signals").value = 0
        with contextlib.suppress(OSError):
            readline.read_history_file(history)

    def stop(self, history: Path) -> None:
        """Give the terminal back and write the history file."""
        self._remove()
        readline = self._readline
        with contextlib.suppress(OSError):
            readline.set_history_length(HISTORY_LENGTH)
            readline.write_history_file(history)

    async def read_line(self, prompt: str, *, remember: bool = True) -> str | None:
        self._done, self._line = False, None
        self._lib.rl_resize_terminal()  # the window may have changed size since the last line
        self._install(prompt.encode())
        try:
            while not self._done:
                await trio.lowlevel.wait_readable(sys.stdin.fileno())
                self._lib.rl_callback_read_char()
        finally:
            if not self._done:  # cancelled (Ctrl-C during a question): leave the line
                self._remove()
                self._out.write("\n")
                self._out.flush()
        line = self._typed()
        if line is None:
            self._out.write("\n")
        elif remember and line.strip():
            self._remember(line)
        return line

    def interrupt(self) -> None:
        if not self._installed:
            return
        # What CPython's readline does when input() is interrupted, then a fresh prompt.
        lib = self._lib
        lib.rl_free_line_state()
        lib.rl_callback_sigcleanup()
        lib.rl_cleanup_after_signal()
        self._remove()
        self._out.write("^C\n")
        self._out.flush()
        self._install(self._prompt)

    def show(self, text: str) -> None:
        if not self._installed:
            self._out.write(text)
            self._out.flush()
            return
        self._out.write(_ERASE_LINE + text)
        self._out.flush()
        self._lib.rl_forced_update_display()

    def _install(self, prompt: bytes) -> None:
        self._out.flush()
        self._prompt = prompt
        self._lib.rl_callback_handler_install(prompt, self._handler)
        self._installed = True

    def _remove(self) -> None:
        if self._installed:
            self._installed = False
            self._lib.rl_callback_handler_remove()

    def _on_line(self, pointer: int | None) -> None:
        # Called by readline inside rl_callback_read_char. An exception here would only be
        # printed by ctypes, so nothing in it may raise.
        if pointer:
            self._line = ctypes.string_at(pointer).decode("utf-8", "replace")
            self._free(pointer)
        self._done = True
        self._remove()

    def _typed(self) -> str | None:
        # A method, not the attribute: ``_on_line`` set it behind the type checker's back.
        return self._line

    def _remember(self, line: str) -> None:
        readline = self._readline
        length = readline.get_current_history_length()
        if length == 0 or readline.get_history_item(length) != line:
            readline.add_history(line)


@final
class ThreadedReader:
    """``input()`` in a worker thread, one line at a time (module docstring)."""

    def __init__(self, out: TextIO, *, echoed: bool) -> None:
        """``echoed``: the terminal shows what is typed, Enter included (else a newline
        after the answer keeps the next output off the prompt's line)."""
        self._out = out
        self._echoed = echoed
        self._send, self._receive = trio.open_memory_channel[str | None](0)
        self._reading = False
        self._prompt = ""
        self._ended = False

    @property
    def reading(self) -> bool:
        return self._reading

    async def pump(self) -> None:
        """Read lines in a worker thread and hand each to the next ``read_line``."""
        while True:
            try:
                line: str | None = await trio.to_thread.run_sync(input, abandon_on_cancel=True)
            except EOFError:
                line = None
            await self._send.send(line)
            if line is None:
                return

    async def read_line(self, prompt: str, *, remember: bool = True) -> str | None:
        if self._ended:
            return None
        self._prompt = prompt
        self._out.write(prompt)
        self._out.flush()
        self._reading = True
        try:
            line = await self._receive.receive()
        finally:
            self._reading = False
        if line is None:
            self._ended = True
        if line is None or (prompt and not self._echoed):
            self._out.write("\n")
        return line

    def interrupt(self) -> None:
        if self._reading:
            self._out.write(f"\n{self._prompt}")
            self._out.flush()

    def show(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()
