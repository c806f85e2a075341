"""``kwhatif leader``: who schedules right now, and what if the leader dies."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from typing import Optional

import typer

from kwhatif.cli.common import user_errors
from kwhatif.errors import InputError


class Output(str, Enum):
    table = "table"
    json = "json"
    yaml = "yaml"


def register(app: typer.Typer) -> None:
    app.command("leader")(leader)


@user_errors
def leader(
    cluster: Optional[str] = typer.Option(None, "--cluster", "-c",
                                          help="Snapshot or dump holding the kube-system Leases (default: live)."),
    scheduler_config: Optional[str] = typer.Option(None, "--scheduler-config",
                                                   help="KubeSchedulerConfiguration with leaderElection settings."),
    at: Optional[str] = typer.Option(None, "--at", help="Judge the leases at this RFC3339 time "
                                                        "(default: the capture time, else now)."),
    kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Kubeconfig for a live cluster."),
    context: Optional[str] = typer.Option(None, "--context", help="Kubeconfig context for a live cluster."),
    output: Output = typer.Option(Output.table, "--output", "-o", help="Output format."),
) -> None:
    """Scheduler leader election: lease holders, health, and failover timing what-ifs."""
    from kwhatif import leader as election
    from kwhatif import whatif
    from kwhatif.loader import parse_documents, read_text
    from kwhatif.snapshot_file import is_snapshot

    if not cluster:
        state = whatif.load_live_cluster(kubeconfig, context)
    elif is_snapshot(cluster):
        state = whatif.load_cluster(cluster)
    else:
        state = whatif.load_dump(cluster)  # keeps the dump's capture time
    for warning in state.warnings:
        typer.echo(f"warning: {warning}", err=True)
    config = None
    if scheduler_config:
        docs = parse_documents(read_text(scheduler_config), scheduler_config)
        config = docs[0] if docs else None
    try:
        settings = election.LeaderElectionSettings.from_config(config)
    except ValueError as exc:
        raise InputError(f"{scheduler_config}: {exc}") from None
    when = at or (state.metadata.get("capturedAt") if cluster else None)
    try:
        now = election.parse_time(when) if when else datetime.now(timezone.utc)
    except ValueError as exc:
        raise InputError(f"--at: {exc}") from None
    try:
        leases = election.select_scheduler_leases(state.leases, [settings])
    except ValueError as exc:
        raise InputError(f"{cluster or 'cluster'}: {exc}") from None
    verdicts = [election.assess(lease, now, settings) for lease in leases]
    expected = election.find_lease(leases, settings.resource_namespace, settings.resource_name)
    report = {
        "at": election.format_time(now),
        "settings": settings.to_dict(),
        "settingsIssues": [i.to_dict() for i in settings.validate()],
        "leases": [v.to_dict() for v in verdicts],
        "missingLease": None if expected else f"{settings.resource_namespace}/{settings.resource_name}",
        "failover": election.failover_whatif(settings).to_dict(),
    }
    if output == Output.table:
        from kwhatif.render.leader import render_leader

        render_leader(report)
    else:
        from kwhatif.render.output import to_json, to_yaml

        typer.echo(to_json(report) if output == Output.json else to_yaml(report), nl=output == Output.json)
    unhealthy = any(v.status != election.HEALTHY for v in verdicts) or report["missingLease"]
    raise typer.Exit(1 if unhealthy else 0)
