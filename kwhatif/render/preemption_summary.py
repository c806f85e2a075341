"""The preemption lines under the place table: which node would be nominated and whom it evicts."""

from __future__ import annotations

from rich.console import Console

from kwhatif.result import ScheduleResult


def render_preemption_summary(result: ScheduleResult, console: Console) -> None:
    data = result.preemption.to_dict()
    nominated = data.get("nominatedNode")
    candidates = data.get("candidates") or {}
    if nominated:
        victims = (candidates.get(nominated) or {}).get("victims") or []
        ties = data.get("nominatedNodes") or [nominated]
        tie_note = f" (tied with {', '.join(n for n in ties if n != nominated)}; the scheduler picks arbitrarily)" \
            if len(ties) > 1 else ""
        console.print(f"[yellow]Preemption:[/] the pod would be nominated to [bold]{nominated}[/]{tie_note}, "
                      f"evicting {len(victims)} pod(s): {', '.join(victims) or '-'}. "
                      f"Run `kwhatif preempt --explain` for the full reasoning.")
    elif data.get("message"):
        console.print(f"[yellow]Preemption cannot help:[/] {data['message']}")
