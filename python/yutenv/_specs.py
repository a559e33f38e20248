"""Agent specs that name a file (``net:PATH``, ``optimal:PATH``), written and read by the Go
parser's quoting rule (``env/agent/spec_path.go``; the spec grammar of docs/BASELINES.md).

A PATH is written bare when it reads back as itself, else between quotes (``'``) with each quote
inside doubled: ``net:'runs/a,seed=3/x.ynet',sims=8``. The characters and the quote come from
:mod:`yutenv._protocol` (generated from the Go declarations); ``env/agent/testdata/spec_paths.json``
is the table both languages are tested against.

>>> quote_path("runs/a.ynet")
'runs/a.ynet'
>>> net_spec("runs/a,seed=3/x.ynet", sims=8)
"net:'runs/a,seed=3/x.ynet',sims=8"
>>> spec_path("net:'it''s.ynet',sims=8")
('net', "it's.ynet", ',sims=8')
>>> split_specs("net:'a;b.ynet';greedy")
["net:'a;b.ynet'", 'greedy']
"""

from __future__ import annotations

import os
import re

from ._protocol import SPEC_LIST_SEPARATOR, SPEC_PATH_KINDS, SPEC_PATH_QUOTE, SPEC_PATH_SPECIAL

__all__ = ["net_spec", "path_spec", "quote_path", "spec_path", "split_specs"]

_Q = SPEC_PATH_QUOTE
_OPTION = re.compile(r"\s*[A-Za-z0-9_]+\s*=")
"""An item that reads key=value, key a bare word: where a bare PATH ends (agent.looksLikeOption)."""


def quote_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a spec writes it (``agent.QuotePath``): bare when it reads back as itself, else
    quoted with each quote inside doubled."""
    p = os.fspath(path)
    if p and not any(c in p for c in SPEC_PATH_SPECIAL) and p.strip() == p:
        return p
    return _Q + p.replace(_Q, _Q + _Q) + _Q


def path_spec(kind: str, path: str | os.PathLike[str], **options: object) -> str:
    """The spec ``kind:PATH`` (``kind`` one of ``net``, ``optimal``) with ``options`` appended
    as ``,key=value`` in the order given (a value of None is left out)."""
    if kind not in SPEC_PATH_KINDS:
        raise ValueError(f"{kind!r} takes no PATH (agents with one: {', '.join(SPEC_PATH_KINDS)})")
    opts = "".join(f",{k}={v}" for k, v in options.items() if v is not None)
    return f"{kind}:{quote_path(path)}{opts}"


def net_spec(path: str | os.PathLike[str], **options: object) -> str:
    """``net:PATH`` with ``options``: ``net_spec(p, sims=64, gumbel=1)``."""
    return path_spec("net", path, **options)


def _quoted_end(s: str, i: int) -> int:
    """The index after the quote that closes the quoted text opening at ``s[i]``, or -1."""
    j = i + 1
    while j < len(s):
        if s[j] == _Q:
            if j + 1 < len(s) and s[j + 1] == _Q:
                j += 2
                continue
            return j + 1
        j += 1
    return -1


def _opens_quoted_path(item: str) -> bool:
    name, colon, rest = item.partition(":")
    return bool(colon) and not rest.strip() and name.strip() in SPEC_PATH_KINDS


def spec_path(spec: str) -> tuple[str, str, str] | None:
    """Split a ``net:PATH`` or ``optimal:PATH`` spec into its kind, its PATH (unquoted) and the
    text after the PATH (``",sims=8"`` or ``""``); None for any other spec, or a PATH the Go
    parser would refuse (an unclosed quote, text after the closing one)."""
    s = spec.strip()
    name, colon, rest = s.partition(":")
    if not colon or name.strip() not in SPEC_PATH_KINDS or "," in name:
        return None
    kind = name.strip()
    body = rest.lstrip()
    if body.startswith(_Q):
        end = _quoted_end(body, 0)
        tail = body[end:] if end > 0 else ""
        if end < 0 or (tail.strip() and not tail.lstrip().startswith(",")):
            return None
        return kind, body[1 : end - 1].replace(_Q + _Q, _Q), tail
    items = rest.split(",")
    j = 1
    while j < len(items) and not _OPTION.match(items[j]):
        j += 1
    path = ",".join(items[:j]).strip()
    if not path:
        return None
    return kind, path, "".join("," + i for i in items[j:])


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at every ``sep`` outside a quoted PATH (``agent.splitSpecText``): a quote
    opens one only right after ``net:`` or ``optimal:`` at the start of an item."""
    out: list[str] = []
    start = item = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == _Q and _opens_quoted_path(text[item:i]):
            end = _quoted_end(text, i)
            if end < 0:
                break
            i = end
            continue
        if c == sep:
            out.append(text[start:i])
            start = item = i + 1
        elif c == ",":
            item = i + 1
        i += 1
    out.append(text[start:])
    return out


def split_specs(text: str) -> list[str]:
    """The specs of a list, as ``agent.SplitSpecs`` splits ``--agents``: separated by ``;``
    (outside a quoted PATH); a list without one may separate them by commas, an item that reads
    ``key=value`` being an option of the spec before it (``"mcts:400,c=2,greedy"`` is two
    specs). Each is trimmed; empty ones are left out. The specs are not checked (the server
    does)."""
    parts = _split(text, SPEC_LIST_SEPARATOR)
    if len(parts) > 1:
        return [p.strip() for p in parts if p.strip()]
    out: list[str] = []
    for p in _split(text, ","):
        p = p.strip()
        if not p:
            continue
        if out and _OPTION.match(p):
            out[-1] += "," + p
        else:
            out.append(p)
    return out
