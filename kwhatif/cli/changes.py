"""Cluster-change options shared by place, preempt and drain, applied in the order given.

click hands each option's values over separately, so the order between different options would be
lost; ``ChangesCommand`` takes the change options off the command line itself (in order, with
kubectl's spellings: ``--cordon -l pool=spot``, ``--taint node-5 key=v:NoSchedule`` or
``--taint node-5=key=v:NoSchedule``) before click parses the rest; ``with_change_options`` declares them
to click as well, for ``--help`` and shell completion only.
"""

from __future__ import annotations

import functools
import inspect
from contextvars import ContextVar
from typing import Annotated, Optional

import typer

from kwhatif.cli.options import Command, complete_nodes, complete_pods
from kwhatif.whatif.changes import NODE_CHANGES, Change

HELP_PANEL = "Cluster changes (applied in order, before evaluation)"
OPTIONS = {
    "--cordon": ("NODE|-l SEL", "Cordon nodes (spec.unschedulable and the unschedulable taint)."),
    "--uncordon": ("NODE|-l SEL", "Uncordon nodes."),
    "--taint": ("NODE key[=value]:Effect", "Add a taint (kubectl taint syntax; key- or key:Effect- removes). "
                "NoExecute evicts the pods that do not tolerate it."),
    "--label": ("NODE key=value", "Set a node label (key- removes it)."),
    "--remove-node": ("NODE|-l SEL", "The node disappears; its controller-managed pods are re-created and "
                      "placed, the others are lost."),
    "--add-node": ("NODE[=COUNT]|FILE[=COUNT]", "Add nodes like an existing node (or a Node manifest), with "
                   "the DaemonSet pods that would start there."),
    "--evict": ("NS/POD", "Evict a pod through the eviction API (PodDisruptionBudgets apply)."),
    "--delete-pod": ("NS/POD", "Delete a pod (no budget check)."),
    "--patch": ("KIND/[NS/]NAME JSONPATCH", "Change another object (a ResourceClaim, a PersistentVolumeClaim, ...) "
                "with an RFC 6902 JSON Patch (add/replace/remove), as if it were re-created so."),
}
_SELECTOR_FLAGS = ("-l", "--selector")
_changes: ContextVar[tuple[Change, ...]] = ContextVar("kwhatif_changes", default=())


class ChangesCommand(Command):
    """A command that also takes the cluster-change options, in the order given."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        try:
            changes, rest = extract_changes(args)
        except typer.BadParameter:
            if not ctx.resilient_parsing:  # completing a half-typed change: leave it to the completer
                raise
            changes, rest = [], args
        _changes.set(tuple(changes))
        return super().parse_args(ctx, rest)


# The change options that name nodes first (completed with the node names of --cluster) or a pod.
_COMPLETES = {**{flag: complete_nodes for flag in ("--cordon", "--uncordon", "--taint", "--label", "--remove-node",
                                                   "--add-node")},
              "--evict": complete_pods, "--delete-pod": complete_pods}


def with_change_options(command):
    """``command`` with the change options in its signature, so that ``--help`` lists them in their own
    panel and the shell completes them (node names, pods of --cluster). Their values never reach the
    command: ``ChangesCommand`` takes them off the command line first, in order."""
    params = list(inspect.signature(command).parameters.values())
    added = [inspect.Parameter(
        "change_" + flag[2:].replace("-", "_"), inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=Annotated[Optional[list[str]], typer.Option(
            flag, metavar=metavar, help=text, rich_help_panel=HELP_PANEL, show_default=False,
            autocompletion=_COMPLETES.get(flag))])
        for flag, (metavar, text) in OPTIONS.items()]

    @functools.wraps(command)
    def run(**values):
        for param in added:
            values.pop(param.name, None)
        return command(**values)

    run.__signature__ = inspect.Signature(params + added)
    run.__annotations__ = {param.name: param.annotation for param in params + added}
    return run


def current_changes() -> list[Change]:
    """The changes given to the command being run."""
    return list(_changes.get())


def extract_changes(args: list[str]) -> tuple[list[Change], list[str]]:
    """The change options in ``args`` (in order) and the arguments that remain for click."""
    changes, rest, tokens = [], [], list(args)
    while tokens:
        token = tokens.pop(0)
        if token == "--":
            rest += [token, *tokens]
            break
        flag, eq, inline = token.partition("=")
        if flag not in OPTIONS:
            rest.append(token)
            continue
        value = inline if eq else _next(tokens, flag)
        changes.append(_change(flag[2:], value, tokens))
    return changes, rest


def _next(tokens: list[str], flag: str) -> str:
    if not tokens:
        raise typer.BadParameter(f"{flag} requires an argument")
    return tokens.pop(0)


def _change(kind: str, value: str, tokens: list[str]) -> Change:
    if kind == "patch":
        return Change(kind, target=value, argument=_next(tokens, f"--patch {value}"))
    if kind not in NODE_CHANGES:
        return Change(kind, argument=value)
    selector = None
    if value in _SELECTOR_FLAGS:
        selector = _next(tokens, f"--{kind} {value}")
    elif value.startswith(("-l=", "--selector=")):
        selector = value.partition("=")[2]
    argument = None
    if kind in ("taint", "label"):
        if selector is None and ("=" in value or ":" in value):
            value, _, argument = value.partition("=")  # NODE=key[=value]:Effect in one word
        else:
            argument = _next(tokens, f"--{kind}")
    if selector is not None:
        return Change(kind, selector=selector, argument=argument)
    return Change(kind, nodes=tuple(name for name in value.split(",") if name), argument=argument)


def apply_current_changes(cluster, setup, output: str):
    """The cluster after the command's changes (re-created pods placed), the scenario as data and the
    Scenario (its ``state()`` is the snapshot a question asked afterwards evaluates on); for a
    human-readable output the scenario block is printed first. Without changes: unchanged, None, None."""
    changes = current_changes()
    if not changes:
        return cluster, None, None
    from kwhatif.render.scenario import print_scenario
    from kwhatif.whatif.changes import scenario_for

    scenario = scenario_for(cluster, changes, setup)
    data = scenario.to_dict()
    if output not in ("json", "yaml"):
        print_scenario(data)
    return scenario.cluster, data, scenario


def changes_under(cluster, compared):
    """--compare-version with cluster changes: the changes made again on ``cluster`` (as loaded) under the
    compared release, whose kube-scheduler places the displaced pods itself; the Scenario, or None without
    changes or without the option. Reusing the answer's changed cluster would keep its release's placements."""
    changes = current_changes()
    if compared is None or not changes:
        return None
    from kwhatif.whatif.changes import scenario_for

    return scenario_for(cluster, changes, compared)
