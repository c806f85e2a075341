"""``--optimal`` on ``place`` (several pods) and ``capacity``: the solver's answer beside the scheduler's."""

from __future__ import annotations

from dataclasses import dataclass

import typer

from kwhatif.errors import InputError

DEFAULT_TIME_LIMIT = 10.0


@dataclass
class OptimalOptions:
    enabled: bool
    movable: str | None
    time_limit: float

    def check(self) -> None:
        """--movable and --time-limit only mean something with --optimal; OR-Tools must be there."""
        if not self.enabled:
            if self.movable is not None:
                raise InputError("--movable needs --optimal")
            if given("time_limit"):
                raise InputError("--time-limit is the solver's: it needs --optimal")
            return
        if self.time_limit <= 0:
            raise InputError(f"--time-limit must be more than 0 seconds, got {self.time_limit:g}")
        from kwhatif.whatif.optimal import cp_model

        cp_model()


def given(parameter: str) -> bool:
    """Whether the command line (or its environment) set ``parameter``, not its default: a flag whose
    default is a value cannot otherwise tell "not given" apart."""
    from typer.main import get_current_context

    context = get_current_context(silent=True)
    source = context.get_parameter_source(parameter) if context is not None else None
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def optimal_option() -> bool:
    return typer.Option(False, "--optimal",
                        help="Also solve for the best placement of the same pods (OR-Tools CP-SAT, "
                             "pip install 'kwhatif\\[optimal]') and show it beside the scheduler's.")


def movable_option():
    return typer.Option(None, "--movable", metavar="SELECTOR",
                        help="With --optimal: running pods (label selector) the best placement may move.")


def time_limit_option():
    return typer.Option(DEFAULT_TIME_LIMIT, "--time-limit", metavar="SECONDS",
                        help="With --optimal: the solver's time limit; its status and bound say whether "
                             "the answer is proven.")


def sequence_comparison(raws, cluster_state, setup, greedy, options: OptimalOptions, data: dict, table: bool):
    """Solve for the pods placed as ``greedy``; add both answers to ``data`` or print them."""
    from kwhatif.whatif.optimal import optimal_sequence
    from kwhatif.whatif.sequence import prepare_pods

    result = optimal_sequence(prepare_pods(raws, cluster_state), greedy, cluster_state, setup,
                              movable=options.movable, time_limit=options.time_limit)
    if table:
        from kwhatif.render.optimal import render_optimal_sequence

        render_optimal_sequence(result, greedy, options.movable)
    data.update(result.to_dict())


def capacity_comparison(raw, source, cluster_state, setup, greedy, options: OptimalOptions, data: dict,
                        table: bool, max_instances: int | None, excluded: list[str]):
    from kwhatif.whatif.optimal import optimal_capacity

    result = optimal_capacity(raw, source, greedy, cluster_state, setup, max_instances=max_instances,
                              exclude_nodes=excluded, movable=options.movable, time_limit=options.time_limit)
    if table:
        from kwhatif.render.optimal import render_optimal_capacity

        render_optimal_capacity(result, options.movable)
    data.update(result.to_dict())
