"""The preemption lines under the place table: which node would be nominated and whom it evicts."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kwhatif.result import ScheduleResult


def render_preemption_summary(result: ScheduleResult, console: Console) -> None:
    """Read from the outcome itself: serializing every candidate's victims (to_dict) for two lines
    would cost a noticeable part of a 5,000-node answer."""
    outcome = result.preemption
    nominated = outcome.nominated_node
    if nominated:
        victims = [pi.key for pi in outcome.candidates[nominated].pods]
        ties = list(outcome.nominated_nodes) or [nominated]
        tie_note = f" (tied with {', '.join(n for n in ties if n != nominated)}; the scheduler picks arbitrarily)" \
            if len(ties) > 1 else ""
        console.print(Text.assemble(("Preemption:", "yellow"), " the pod would be nominated to ", (nominated, "bold"),
                                    f"{tie_note}, evicting {len(victims)} pod(s): {', '.join(victims) or '-'}. "
                                    f"Run `kwhatif preempt --explain` for the full reasoning."))
    elif outcome.message:
        # the FitError printed just above ends with PostFilter's message (FitError.Error): not said twice
        console.print(Text.assemble(("Preemption cannot help", "yellow"), " (the end of the message above says why)."))
