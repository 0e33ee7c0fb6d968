"""The shell's everyday commands (toybox on a phone): echo, cat, ls, rm, mkdir,
grep, head, tail, wc, true, false, exit, sleep, pwd, cd, id, whoami."""

from __future__ import annotations

import re
import time
from typing import Any

from benchmark.devices.adbd.bounded import run_bounded
from benchmark.devices.adbd.files import FileError
from benchmark.devices.adbd.sh import Call, ExitShell

GREP_TIMEOUT_S = 2.0  # a pattern's matching, in its own process (a phone's grep reads small dumps in milliseconds)
GREP_MAX_INPUT = 16 << 20  # bytes grep reads in all


def _flags(call: Call, allowed: str) -> tuple[set[str], list[str]]:
    """Split ``-abc`` style flags from operands (``--`` ends the flags)."""
    flags: set[str] = set()
    rest: list[str] = []
    args = iter(call.argv[1:])
    for a in args:
        if a == "--":
            rest.extend(args)
            break
        if a.startswith("-") and len(a) > 1 and not rest and all(c in allowed for c in a[1:]):
            flags.update(a[1:])
        else:
            rest.append(a)
    return flags, rest


def echo(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    newline, escapes = True, False
    while args and args[0] in ("-n", "-e", "-ne", "-en", "-E"):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.encode("utf-8").decode("unicode_escape", "replace")
    call.print(text, end="\n" if newline else "")
    return 0


def cat(phone: Any, call: Call) -> int:
    _, paths = _flags(call, "uv")
    if not paths:
        call.out += call.stdin
        return 0
    status = 0
    for p in paths:
        try:
            call.out += phone.files.read(p)
        except FileError as exc:
            status = call.error(f"cat: {exc}")
    return status


def ls(phone: Any, call: Call) -> int:
    flags, paths = _flags(call, "laA1dR")
    status = 0
    for p in paths or ["."]:
        path = "/" if p == "." else p
        try:
            if phone.files.is_dir(path) and "d" not in flags:
                names = phone.files.listdir(path)
            elif phone.files.exists(path):
                names = [p]
            else:
                raise FileError(f"{p}: No such file or directory")
        except FileError as exc:
            status = call.error(f"ls: {exc}")
            continue
        for name in names:
            if "l" not in flags:
                call.print(name)
                continue
            full = name if name.startswith("/") else f"{path.rstrip('/')}/{name}"
            mode, size, mtime = phone.files.stat(full) or (0, 0, 0)
            kind = "d" if mode & 0o040000 else "-"
            stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))
            call.print(f"{kind}rw-rw---- 1 shell shell {size:>8} {stamp} {name}")
    return status


def rm(phone: Any, call: Call) -> int:
    flags, paths = _flags(call, "frRv")
    if not paths and "f" not in flags:
        return call.error("rm: Needs 1 argument")
    status = 0
    for p in paths:
        try:
            phone.files.remove(p, recursive=bool(flags & {"r", "R"}))
        except FileError as exc:
            if "f" not in flags or "No such file" not in str(exc):
                status = call.error(f"rm: {exc}")
    return status


def mkdir(phone: Any, call: Call) -> int:
    flags, paths = _flags(call, "pv")
    status = 0
    for p in paths:
        try:
            if not ("p" in flags and phone.files.is_dir(p)):
                phone.files.mkdir(p, parents="p" in flags)
        except FileError as exc:
            status = call.error(f"mkdir: {exc}")
    return status


def grep(phone: Any, call: Call) -> int:
    args = call.argv[1:]
    flags: set[str] = set()
    patterns: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--regexp") and i + 1 < len(args):
            patterns.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-") and len(a) > 1 and not operands and set(a[1:]) <= set("EFivcqonwxsH"):
            flags.update(a[1:])
        else:
            operands.append(a)
        i += 1
    if not patterns:
        if not operands:
            return call.error("grep: no pattern", 2)
        patterns.append(operands.pop(0))
    texts = [call.stdin] if not operands else []
    for p in operands:
        try:
            texts.append(phone.files.read(p))
        except FileError as exc:
            if "s" not in flags:
                call.error(f"grep: {exc}")
    try:
        sources = [re.escape(p) if "F" in flags else (p if "E" in flags else _basic(p)) for p in patterns]
        for src in sources:
            re.compile(src)
    except re.error as exc:
        return call.error(f"grep: bad regex '{patterns[0]}': {exc}", 2)
    if sum(len(t) for t in texts) > GREP_MAX_INPUT:
        return call.error(f"grep: input over {GREP_MAX_INPUT // (1 << 20)} MiB", 2)
    job = ([t.decode("utf-8", "replace") for t in texts], sources, frozenset(flags))
    if "F" in flags or all(_literal(src) for src in sources):
        lines, count = _grep_lines(*job)  # no backtracking possible: matched here
    else:
        try:  # a regex may backtrack for ever while holding the interpreter: every phone of the server would wait
            lines, count = run_bounded(_grep_lines, job, GREP_TIMEOUT_S)
        except TimeoutError:
            return call.error(f"grep: the pattern took longer than {GREP_TIMEOUT_S:g} s; stopped", 2)
    for line in lines:
        call.print(line)
    if "c" in flags:
        call.print(str(count))
    return 0 if count else 1


def _literal(source: str) -> bool:
    """A pattern of plain text, or plain texts joined by ``|``: its matching cannot backtrack."""
    return not any(c in source for c in ".^$*+?{}[]()") and "\\" not in source


def _grep_lines(texts: list[str], sources: list[str], flags: frozenset[str]) -> tuple[list[str], int]:
    """What grep prints for ``texts`` (without ``-c``'s count line), and how many lines matched."""
    rx = [re.compile(src, re.IGNORECASE if "i" in flags else 0) for src in sources]
    out: list[str] = []
    count = 0
    for text in texts:
        for line in text.splitlines():
            hits = [m for r in rx for m in ([r.fullmatch(line)] if "x" in flags else r.finditer(line)) if m]
            if "w" in flags:
                hits = [m for m in hits if _whole_word(line, m)]
            if bool(hits) == ("v" in flags):
                continue
            count += 1
            if "q" in flags:
                return [], count
            if "c" not in flags:
                if "o" in flags and "v" not in flags:
                    out.extend(m.group(0) for m in hits)
                else:
                    out.append(line)
    return out, count


def _basic(pattern: str) -> str:
    """A POSIX basic regex as Python's: ``\\|`` ``\\(`` ``\\)`` ``\\+`` ``\\?`` are the operators."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "|()+?{}" else c + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "|()+?{}" else c)
        i += 1
    return "".join(out)


def _whole_word(line: str, m: "re.Match[str]") -> bool:
    before = line[m.start() - 1] if m.start() > 0 else " "
    after = line[m.end()] if m.end() < len(line) else " "
    return not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_")


def _lines_arg(call: Call, default: int = 10) -> tuple[int, list[str]]:
    args, n, rest = call.argv[1:], default, []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-n" and i + 1 < len(args):
            n, i = int(args[i + 1]) if args[i + 1].lstrip("-").isdigit() else default, i + 2
            continue
        if re.fullmatch(r"-\d+", a):
            n = int(a[1:])
        else:
            rest.append(a)
        i += 1
    return abs(n), rest


def _input_text(phone: Any, call: Call, paths: list[str]) -> str:
    data = b"".join(phone.files.read(p) for p in paths) if paths else call.stdin
    return data.decode("utf-8", "replace")


def head(phone: Any, call: Call) -> int:
    n, paths = _lines_arg(call)
    try:
        lines = _input_text(phone, call, paths).splitlines(keepends=True)
    except FileError as exc:
        return call.error(f"head: {exc}")
    call.print("".join(lines[:n]), end="")
    return 0


def tail(phone: Any, call: Call) -> int:
    n, paths = _lines_arg(call)
    try:
        lines = _input_text(phone, call, paths).splitlines(keepends=True)
    except FileError as exc:
        return call.error(f"tail: {exc}")
    call.print("".join(lines[-n:] if n else []), end="")
    return 0


def wc(phone: Any, call: Call) -> int:
    flags, paths = _flags(call, "lwc")
    try:
        text = _input_text(phone, call, paths)
    except FileError as exc:
        return call.error(f"wc: {exc}")
    counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode("utf-8"))}
    chosen = [k for k in "lwc" if k in flags] or ["l", "w", "c"]
    call.print(" ".join(str(counts[k]) for k in chosen))
    return 0


def exit_(phone: Any, call: Call) -> int:
    arg = call.argv[1] if len(call.argv) > 1 else "0"
    raise ExitShell(int(arg) & 0xFF if arg.lstrip("-").isdigit() else 2)


def sleep(phone: Any, call: Call) -> int:
    # The simulated phone draws synchronously: nothing is ever still settling, so no need to wait.
    if len(call.argv) < 2 or not re.fullmatch(r"\d+(\.\d+)?", call.argv[1]):
        return call.error("sleep: Needs 1 argument (seconds)")
    return 0


def pwd(phone: Any, call: Call) -> int:
    call.print("/")
    return 0


def id_(phone: Any, call: Call) -> int:
    call.print("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),"
               "1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats) context=u:r:shell:s0")
    return 0


def whoami(phone: Any, call: Call) -> int:
    call.print("shell")
    return 0


TOOLS = {"echo": echo, "cat": cat, "ls": ls, "rm": rm, "mkdir": mkdir, "grep": grep, "head": head, "tail": tail,
         "wc": wc, "true": lambda phone, call: 0, "false": lambda phone, call: 1, "exit": exit_, "sleep": sleep,
         "pwd": pwd, "cd": lambda phone, call: 0, "id": id_, "whoami": whoami}
