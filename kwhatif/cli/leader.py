"""``kwhatif leader``: who schedules right now, and what if the leader dies."""

from __future__ import annotations

from typing import Optional

import typer

from kwhatif.cli.options import ClusterOption, ContextOption, KubeconfigOption, MachineOutput, MachineOutputOption
from kwhatif.errors import InputError


def leader(
    cluster: ClusterOption = None,
    scheduler_config: Optional[str] = typer.Option(None, "--scheduler-config", metavar="FILE",
                                                   help="KubeSchedulerConfiguration with leaderElection settings."),
    at: Optional[str] = typer.Option(None, "--at", metavar="TIME", help="Judge the leases at this RFC3339 time "
                                                                        "(default: the capture time, else now)."),
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
    output: MachineOutputOption = MachineOutput.table,
) -> None:
    """Scheduler leader election: lease holders, health, and failover timing what-ifs."""
    from kwhatif import leader as election
    from kwhatif import whatif
    from kwhatif.api.documents import parse_documents, read_text
    from kwhatif.render.env import current as current_output
    from kwhatif.snapshot_file import is_snapshot

    if not cluster:
        state = whatif.load_live_cluster(kubeconfig, context)
    elif is_snapshot(cluster):
        state = whatif.load_cluster(cluster)
    else:
        state = whatif.cluster_from_dump(cluster)  # keeps the dump's capture time
    for warning in state.warnings:
        typer.echo(f"warning: {warning}", err=True)
    # A dump need not include Leases (kubectl get ... rarely lists them): their absence is not evidence of
    # an outage, as place reasons too. Live reads and live snapshots do list the kube-system Leases.
    leases_unknown = None
    if state.metadata.get("source") == "dump" and not state.leases:
        leases_unknown = (f"{cluster} is a dump without Lease objects, so whether a scheduler leader is active "
                          f"is unknown; dump them too (kubectl get leases -n kube-system -o yaml) or take a "
                          f"snapshot (kwhatif snapshot -o FILE)")
    config = None
    if scheduler_config:
        docs = parse_documents(read_text(scheduler_config), scheduler_config, unique_keys=False)
        config = docs[0] if docs else None
    try:
        settings = election.LeaderElectionSettings.from_config(config)
    except ValueError as exc:
        raise InputError(f"{scheduler_config}: {exc}") from None
    when = at or (state.metadata.get("capturedAt") if cluster else None)
    try:
        now = election.parse_time(when) if when else current_output().clock()
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
        "missingLease": None if expected or leases_unknown else f"{settings.resource_namespace}/{settings.resource_name}",
        "leasesUnknown": leases_unknown,
        "failover": election.failover_whatif(settings).to_dict(),
    }
    if output == MachineOutput.table:
        from kwhatif.render.leader import render_leader

        render_leader(report)
    else:
        from kwhatif.render.output import machine_output

        typer.echo(machine_output("LeaderReport", report, output.value), nl=False)
    unhealthy = any(v.status != election.HEALTHY for v in verdicts) or report["missingLease"]
    raise typer.Exit(1 if unhealthy else 0)
