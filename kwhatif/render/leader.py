"""The human view of ``kwhatif leader``."""

from __future__ import annotations

from rich import box
from rich.table import Table

from kwhatif.render.table import make_console

_STYLE = {"healthy": "green", "expired": "red", "no-holder": "yellow"}


def render_leader(report: dict, console=None) -> None:
    console = make_console(console)
    console.print(f"Scheduler leases at {report['at']}")
    table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False)
    for col in ("LEASE", "HOLDER", "RENEWED", "AGE", "DURATION", "TRANSITIONS", "VERDICT"):
        table.add_column(col, no_wrap=True)
    for v in report["leases"]:
        lease = v["lease"]
        age = v.get("renewAgeSeconds")
        table.add_row(f"{lease['namespace']}/{lease['name']}", lease.get("holderIdentity") or "-",
                      lease.get("renewTime") or "-", f"{age:.1f}s" if age is not None else "-",
                      f"{lease.get('leaseDurationSeconds')}s" if lease.get("leaseDurationSeconds") is not None else "-",
                      str(lease.get("leaseTransitions") or 0),
                      f"[{_STYLE.get(v['status'], 'white')}]{v['status']}[/]")
    console.print(table)
    for v in report["leases"]:
        console.print(f"[bold]{v['lease']['namespace']}/{v['lease']['name']}[/]: {v['consequence']}")
        for note in v.get("notes") or []:
            console.print(f"  [dim]- {note}[/]")
    if report.get("leasesUnknown"):
        console.print(f"[yellow]Leases unknown:[/] {report['leasesUnknown']}.", soft_wrap=True)
    if report.get("missingLease"):
        console.print(f"[red]No lease {report['missingLease']}:[/] no scheduler with these settings has ever "
                      f"been elected, so pods for its profiles are not being scheduled.")
    failover = report["failover"]
    table = Table(title="What if the leader stops?", box=box.SIMPLE, show_edge=False, pad_edge=False)
    for col in ("SCENARIO", "TAKEOVER AFTER LAST RENEWAL", "NEW PODS WAIT"):
        table.add_column(col)
    for s in failover["scenarios"]:
        table.add_row(s["summary"], f"{s['takeoverEarliestSeconds']:.1f}s - {s['takeoverLatestSeconds']:.1f}s",
                      f"{s['podWaitMinSeconds']:.1f}s - {s['podWaitMaxSeconds']:.1f}s")
    console.print(table)
    for issue in report["settingsIssues"]:
        colour = "red" if issue["severity"] == "error" else "yellow"
        console.print(f"[{colour}]{issue['severity']}:[/] {issue['field']}: {issue['message']}")
