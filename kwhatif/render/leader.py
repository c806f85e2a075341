"""The human view of ``kwhatif leader``."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kwhatif.render.table import make_console
from kwhatif.render.tables import Column, print_table

_STYLE = {"healthy": "green", "expired": "red", "no-holder": "yellow"}


def human_age(seconds: float) -> str:
    """An age as kubectl prints one (apimachinery's duration.HumanDuration): ``45s``, ``3m20s``, ``5h``,
    ``922d``, ``2y192d``: precise when recent, coarse when old."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


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
                     _to_the_second(lease.get("renewTime")), human_age(age) if age is not None else "-",
                     _seconds(lease.get("leaseDurationSeconds")), str(lease.get("leaseTransitions") or 0),
                     (v["status"], _STYLE.get(v["status"], ""))])
    if rows:
        print_table(console, [Column("LEASE"), Column("HOLDER", wrap=True), Column("RENEWED"),
                              Column("AGE", right=True), Column("DURATION", right=True),
                              Column("TRANSITIONS", right=True), Column("VERDICT")], rows)
    for v in report["leases"]:
        console.print(Text.assemble((f"{v['lease']['namespace']}/{v['lease']['name']}", "bold"),
                                    f": {v['consequence']}"))
        for note in v.get("notes") or []:
            console.print(Text(f"  - {note}", style="dim"))
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
