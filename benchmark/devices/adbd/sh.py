"""The served phone's ``/system/bin/sh``: a small POSIX-style command language.

Quoting ('…', "…", backslash), ``$?`` / ``$NAME`` / ``${NAME}``, lists with
``;`` / newline / ``&&`` / ``||``, pipelines with ``|``, redirections
``>`` ``>>`` ``<`` ``2>`` ``2>&1`` ``&>``, comments. The commands themselves
are tools (tools/): plain functions over bytes, never a host process — what a
client sends is parsed, never executed on the host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Protocol, Union

SH = "/system/bin/sh"
MAX_LINE = 128 * 1024
_VAR = re.compile(r"\x00([A-Za-z_][A-Za-z0-9_]*|\?)\x00")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ShellSyntaxError(ValueError):
    pass


class ExitShell(Exception):
    def __init__(self, status: int):
        self.status = status


@dataclass
class Redirect:
    fd: int  # 0, 1 or 2
    op: str  # "<", ">", ">>", ">&"
    target: str


@dataclass
class Simple:
    argv: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


@dataclass
class Pipeline:
    commands: list[Simple]


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]] = field(default_factory=list)


Token = tuple[str, str]  # ("word" | "op", text)
_OPERATORS = ("&&", "||", ">>", ">&", "&>", "|", ";", "&", ">", "<")


def tokenize(line: str) -> list[Token]:
    if len(line) > MAX_LINE:
        raise ShellSyntaxError(f"command line too long ({len(line)} bytes; at most {MAX_LINE})")
    if "\x00" in line:
        raise ShellSyntaxError("command line contains a NUL byte")
    tokens: list[Token] = []
    word: list[str] = []
    quoted = False  # the current word has quoted parts (so "" is a word, and 2"> x" is no fd)
    i, n = 0, len(line)

    def flush() -> None:
        nonlocal word, quoted
        if word or quoted:
            tokens.append(("word", "".join(word)))
        word, quoted = [], False

    def variable(j: int) -> tuple[str, int]:
        """Expansion placeholder for the ``$`` at line[j]; returns (text, next index)."""
        if j + 1 < n and line[j + 1] == "?":
            return "\x00?\x00", j + 2
        if j + 1 < n and line[j + 1] == "{":
            end = line.find("}", j + 2)
            name = line[j + 2:end] if end != -1 else ""
            if end == -1 or not _NAME.fullmatch(name):
                raise ShellSyntaxError(f"{line[j:end + 1 if end != -1 else n]}: bad substitution")
            return f"\x00{name}\x00", end + 1
        m = _NAME.match(line, j + 1)
        if m:
            return f"\x00{m.group(0)}\x00", m.end()
        if j + 1 < n and line[j + 1] == "(":
            raise ShellSyntaxError("command substitution $(…) is not supported on this phone")
        return "$", j + 1

    while i < n:
        c = line[i]
        if c in " \t\r":
            flush()
            i += 1
        elif c == "\n":
            flush()
            tokens.append(("op", ";"))
            i += 1
        elif c == "#" and not word and not quoted:
            while i < n and line[i] != "\n":
                i += 1
        elif c == "\\":
            if i + 1 < n and line[i + 1] == "\n":
                i += 2
                continue
            if i + 1 < n:
                word.append(line[i + 1])
            quoted = True
            i += 2
        elif c == "'":
            end = line.find("'", i + 1)
            if end == -1:
                raise ShellSyntaxError("unterminated quoted string")
            word.append(line[i + 1:end])
            quoted = True
            i = end + 1
        elif c == '"':
            i += 1
            quoted = True
            while True:
                if i >= n:
                    raise ShellSyntaxError("unterminated quoted string")
                d = line[i]
                if d == '"':
                    i += 1
                    break
                if d == "\\" and i + 1 < n and line[i + 1] in '"\\$`\n':
                    if line[i + 1] != "\n":
                        word.append(line[i + 1])
                    i += 2
                elif d == "$":
                    text, i = variable(i)
                    word.append(text)
                elif d == "`":
                    raise ShellSyntaxError("command substitution `…` is not supported on this phone")
                else:
                    word.append(d)
                    i += 1
        elif c == "$":
            text, i = variable(i)
            word.append(text)
        elif c == "`":
            raise ShellSyntaxError("command substitution `…` is not supported on this phone")
        elif c in ";&|<>":
            fd_word = "".join(word) if (c in "<>" and word and not quoted and "".join(word).isdigit()) else None
            if fd_word is not None:
                word, quoted = [], False
            else:
                flush()
            op = next(o for o in _OPERATORS if line.startswith(o, i))
            tokens.append(("op", (fd_word or "") + op))
            i += len(op)
        else:
            word.append(c)
            i += 1
    flush()
    return tokens


def parse(line: str) -> list[AndOr]:
    tokens = tokenize(line)
    script: list[AndOr] = []
    pos = 0

    def simple() -> Simple:
        nonlocal pos
        cmd = Simple()
        while pos < len(tokens):
            kind, text = tokens[pos]
            if kind == "word":
                cmd.argv.append(text)
                pos += 1
                continue
            m = re.fullmatch(r"(\d*)(>>|>&|&>|>|<)", text)
            if not m:
                break
            if pos + 1 >= len(tokens) or tokens[pos + 1][0] != "word":
                raise ShellSyntaxError(f"'{text}' needs a file name after it")
            target = tokens[pos + 1][1]
            fd_text, op = m.groups()
            if op == "&>":
                cmd.redirects += [Redirect(1, ">", target), Redirect(2, ">&", "1")]
            else:
                fd = int(fd_text) if fd_text else (0 if op == "<" else 1)
                if fd > 2:
                    raise ShellSyntaxError(f"{text}: only file descriptors 0, 1 and 2 are supported")
                cmd.redirects.append(Redirect(fd, op, target))
            pos += 2
        return cmd

    def pipeline() -> Pipeline:
        nonlocal pos
        cmds = [simple()]
        while pos < len(tokens) and tokens[pos] == ("op", "|"):
            pos += 1
            cmds.append(simple())
        for c in cmds:
            if not c.argv and not c.redirects:
                raise ShellSyntaxError("'|' unexpected")
        return Pipeline(cmds)

    while pos < len(tokens):
        if tokens[pos][0] == "op" and tokens[pos][1] in (";", "&"):
            pos += 1
            continue
        if tokens[pos][0] == "op" and tokens[pos][1] not in ("<", ">", ">>", "&>") and not tokens[pos][1][0].isdigit():
            raise ShellSyntaxError(f"'{tokens[pos][1]}' unexpected")
        node = AndOr(pipeline())
        while pos < len(tokens) and tokens[pos][0] == "op" and tokens[pos][1] in ("&&", "||"):
            op = tokens[pos][1]
            pos += 1
            if pos >= len(tokens) or (tokens[pos][0] == "op" and tokens[pos][1] in (";", "&", "&&", "||", "|")):
                raise ShellSyntaxError(f"'{op}' needs a command after it")
            node.rest.append((op, pipeline()))
        script.append(node)
        if pos < len(tokens) and not (tokens[pos][0] == "op" and tokens[pos][1] in (";", "&")):
            raise ShellSyntaxError(f"'{tokens[pos][1]}' unexpected")
    return script


# ---------------------------------------------------------------------------------------- running


@dataclass
class Output:
    """What a command line printed, in order, per file descriptor (1 stdout, 2 stderr)."""

    chunks: list[tuple[int, bytes]] = field(default_factory=list)
    status: int = 0
    exited: bool = False  # the line ran `exit`

    def write(self, fd: int, data: bytes) -> None:
        if data:
            self.chunks.append((fd, data))

    @property
    def stdout(self) -> bytes:
        return b"".join(d for fd, d in self.chunks if fd == 1)

    @property
    def stderr(self) -> bytes:
        return b"".join(d for fd, d in self.chunks if fd == 2)

    @property
    def merged(self) -> bytes:
        return b"".join(d for _, d in self.chunks)


@dataclass
class Call:
    """One tool invocation: its arguments, stdin, and where it writes."""

    argv: list[str]
    stdin: bytes
    out: bytearray = field(default_factory=bytearray)
    err: bytearray = field(default_factory=bytearray)

    def print(self, text: Union[str, bytes] = "", end: str = "\n") -> None:
        self.out += (text if isinstance(text, bytes) else (text + end).encode("utf-8"))

    def error(self, text: str, status: int = 1) -> int:
        self.err += (text + "\n").encode("utf-8")
        return status


Tool = Callable[[Call], int]


class Files(Protocol):
    """The part of the phone's file store the shell needs (redirections)."""

    def read(self, path: str) -> bytes: ...

    def write(self, path: str, data: bytes, *, append: bool = False) -> None: ...


class Shell:
    """Runs command lines against ``tools`` (name -> Tool); ``files`` backs redirections."""

    def __init__(self, tools: Mapping[str, Tool], files: Files, env: Optional[Mapping[str, str]] = None):
        self.tools = tools
        self.files = files
        self.env = dict(env or {})
        self.status = 0

    def run(self, line: str) -> Output:
        out = Output()
        try:
            script = parse(line)
        except ShellSyntaxError as exc:
            out.write(2, f"{SH}: syntax error: {exc}\n".encode())
            out.status = self.status = 2
            return out
        try:
            for node in script:
                status = self._pipeline(node.first, out)
                for op, nxt in node.rest:
                    if (op == "&&") == (status == 0):
                        status = self._pipeline(nxt, out)
                self.status = status
        except ExitShell as stop:
            self.status = stop.status
            out.exited = True
        out.status = self.status
        return out

    def _expand(self, word: str) -> str:
        return _VAR.sub(lambda m: str(self.status) if m.group(1) == "?" else self.env.get(m.group(1), ""), word)

    def _pipeline(self, pipe: Pipeline, out: Output) -> int:
        data = b""
        status = 0
        for k, cmd in enumerate(pipe.commands):
            status, data = self._simple(cmd, data, out, to_pipe=k < len(pipe.commands) - 1)
        self.status = status
        return status

    def _simple(self, cmd: Simple, stdin: bytes, out: Output, *, to_pipe: bool) -> tuple[int, bytes]:
        """Run one command; returns its status and what it wrote into the pipe (if ``to_pipe``)."""
        argv = [self._expand(a) for a in cmd.argv]
        call = Call(argv, stdin)
        # where each fd goes: "out" (the pipe, or the terminal's stdout), "err" (the terminal's stderr),
        # a file path, or None (/dev/null); `2>&1` copies fd 1's destination as it is at that point
        sinks: dict[int, Optional[str]] = {1: "out", 2: "err"}
        for r in cmd.redirects:
            target = self._expand(r.target)
            try:
                if r.op == "<":
                    call.stdin = self.files.read(target)
                elif r.op == ">&":
                    if target not in ("1", "2"):
                        raise OSError(f"{target}: bad file descriptor")
                    sinks[r.fd] = sinks[int(target)]
                elif target == "/dev/null":
                    sinks[r.fd] = None
                else:
                    self.files.write(target, b"", append=r.op == ">>")  # creates (or truncates) it now
                    sinks[r.fd] = target
            except OSError as exc:
                out.write(2, f"{SH}: {exc}\n".encode())
                return 1, b""
        if not argv:
            return 0, b""
        tool = self.tools.get(argv[0])
        if tool is None:
            call.err += f"{SH}: {argv[0]}: not found\n".encode()
            status = 127
        else:
            status = int(tool(call))
        piped = b""
        for fd, data in ((1, bytes(call.out)), (2, bytes(call.err))):
            sink = sinks[fd]
            if not data or sink is None:
                continue
            if sink == "out" and to_pipe:
                piped += data
            elif sink in ("out", "err"):
                out.write(1 if sink == "out" else 2, data)
            else:
                try:
                    self.files.write(sink, data, append=True)
                except OSError as exc:
                    out.write(2, f"{SH}: {exc}\n".encode())
        return status, piped
