"""``--trace-extenders`` under the place table: every extender call, one block per call, in the
order the scheduler made them (verb, URL, what was sent, latency, HTTP status, the decoded answer).
``-o json`` carries the same entries with the full request and response bodies."""

from __future__ import annotations

from rich.console import Console

from kwhatif.render.table import make_console

LIST_LIMIT = 12  # names shown per line before "... N more"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:LIST_LIMIT])
    return shown + (f", ... {len(names) - LIST_LIMIT} more" if len(names) > LIST_LIMIT else "")


def _reasons(failed: dict[str, str]) -> str:
    items = [f"{node} ({msg})" for node, msg in sorted(failed.items())]
    shown = "; ".join(items[:LIST_LIMIT])
    return shown + (f"; ... {len(items) - LIST_LIMIT} more" if len(items) > LIST_LIMIT else "")


def _answer_lines(call: dict) -> list[str]:
    answer = call.get("answer")
    if call.get("error"):
        skipped = f" ({call['skipped']})" if call.get("skipped") else ""
        return [f"error{skipped}: {call['error']}"]
    if answer is None:
        return []
    verb = call["verb"]
    if verb == "filter":
        lines = [f"kept {len(answer['nodes'])}: {_names(answer['nodes'])}" if answer["nodes"] else "kept none"]
        if answer["failedNodes"]:
            lines.append(f"failed {len(answer['failedNodes'])}: {_reasons(answer['failedNodes'])}")
        if answer["failedAndUnresolvableNodes"]:
            unresolvable = answer["failedAndUnresolvableNodes"]
            lines.append(f"failed and unresolvable {len(unresolvable)} (skipped by preemption): "
                         f"{_reasons(unresolvable)}")
        return lines
    if verb == "prioritize":
        scores = " ".join(f"{s['host']}={s['score']}" for s in answer["scores"][:LIST_LIMIT])
        more = f" ... {len(answer['scores']) - LIST_LIMIT} more" if len(answer["scores"]) > LIST_LIMIT else ""
        return [f"scores (x weight {answer['weight']} x 10): {scores or 'none'}{more}"]
    kept = [f"{node} (victims: {', '.join(v['victims']) or 'none'}; PDB violations {v['numPDBViolations']})"
            for node, v in answer.items()]
    dropped = [n for n in call["nodes"] if n not in answer]
    lines = [f"kept {len(kept)}: " + "; ".join(kept) if kept else "kept no candidate"]
    if dropped:
        lines.append(f"dropped {len(dropped)}: {_names(dropped)}")
    return lines


def format_trace(trace: list[dict]) -> list[str]:
    """The trace as plain lines (no markup), for the terminal and for tests."""
    if not trace:
        return ["Extender calls: none (no extender was interested, or nothing reached the extenders)"]
    lines = [f"Extender calls ({len(trace)}):"]
    for i, call in enumerate(trace, start=1):
        sent = "node names" if call.get("nodeCacheCapable") else "Node objects"
        noun = "candidate node(s)" if call["verb"] == "preempt" else sent
        latency = f"{call['latencyMs']:.1f} ms" if call.get("latencyMs") is not None else "-"
        status = f"HTTP {call['httpStatus']}" if call.get("httpStatus") is not None else "no HTTP answer"
        lines.append(f"{i:>3}. {call['verb']:<10} POST {call['url']}  sent {len(call['nodes'])} {noun}  "
                     f"{latency}  {status}")
        if call["verb"] != "preempt" and call["nodes"]:
            lines.append(f"       sent: {_names(call['nodes'])}")
        if call.get("note"):
            lines.append(f"       note: {call['note']}")
        lines += [f"       {line}" for line in _answer_lines(call)]
    return lines


def render_trace(trace: list[dict], console: Console | None = None) -> None:
    console = make_console(console)
    console.print()
    for line in format_trace(trace):
        console.print(line, markup=False, highlight=False)
