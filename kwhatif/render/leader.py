"""The human view of ``kwhatif leader``."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kwhatif.api.goduration import human_duration
from kwhatif.render.table import make_console
from kwhatif.render.tables import Column, print_hanging, print_table

_STYLE = {"healthy": "green", "expired": "red", "no-holder": "yellow"}


def _to_the_second(timestamp: str | None) -> str:
    """RFC 3339 without the microseconds (-o json keeps them): the table's width goes to the holder."""
    if not timestamp:
        return "-"
    return timestamp.split(".", 1)[0] + "Z" if "." in timestamp else timestamp


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:g}s"


def render_leader(report: dict, console: Console | None = None) -> None:
    console = make_console(console)
    console.print(Text(f"Scheduler leases at {report['at']}"))
    rows = []
    for v in report["leases"]:
        lease = v["lease"]
        age = v.get("renewAgeSeconds")
        rows.append([f"{lease['namespace']}/{lease['name']}", lease.get("holderIdentity") or "-",
                     _to_the_second(lease.get("renewTime")), human_duration(age) if age is not None else "-",
                     _seconds(lease.get("leaseDurationSeconds")), str(lease.get("leaseTransitions") or 0),
                     (v["status"], _STYLE.get(v["status"], ""))])
    if rows:
        print_table(console, [Column("LEASE"), Column("HOLDER", wrap=True), Column("RENEWED", optional=True),
                              Column("AGE", right=True), Column("DURATION", right=True),
                              Column("TRANSITIONS", right=True), Column("VERDICT")], rows)
    for v in report["leases"]:
        console.print(Text.assemble((f"{v['lease']['namespace']}/{v['lease']['name']}", "bold"),
                                    f": {v['consequence']}"))
        for note in v.get("notes") or []:
            print_hanging(console, Text("  - ", "dim"), Text(note, "dim"))
    if report.get("leasesUnknown"):
        console.print(Text.assemble(("Leases unknown:", "yellow"), f" {report['leasesUnknown']}."))
    if report.get("missingLease"):
        console.print(Text.assemble((f"No lease {report['missingLease']}:", "red"), " no scheduler with these "
                                    "settings has ever been elected, so pods for its profiles are not being "
                                    "scheduled."))
    console.file.write("\n")
    rows = [[s["summary"], f"{s['takeoverEarliestSeconds']:.1f}s - {s['takeoverLatestSeconds']:.1f}s",
             f"{s['podWaitMinSeconds']:.1f}s - {s['podWaitMaxSeconds']:.1f}s"]
            for s in report["failover"]["scenarios"]]
    print_table(console, [Column("SCENARIO", wrap=True), Column("TAKEOVER AFTER LAST RENEWAL", wrap=True),
                          Column("NEW PODS WAIT", wrap=True)], rows, title="What if the leader stops?")
    for issue in report["settingsIssues"]:
        colour = "red" if issue["severity"] == "error" else "yellow"
        console.print(Text.assemble((f"{issue['severity']}:", colour), f" {issue['field']}: {issue['message']}"))
