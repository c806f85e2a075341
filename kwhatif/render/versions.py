"""``kwhatif versions``: the releases kwhatif models, what each changes and how each change is verified."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from kwhatif.render.table import make_console
from kwhatif.render.tables import print_hanging


def render_versions(rows: list[dict], console: Console | None = None) -> None:
    console = make_console(console)
    for index, row in enumerate(rows):
        if index:
            console.print()
        status = ("preview: from upstream's text, not verified; every answer says so" if row["preview"]
                  else f"verified against {row['verified']}" + (f" ({row['checked']})" if row["checked"] else ""))
        console.print(Text.assemble((row["release"], "bold"), f" answers for {row['answersFor']} · {status}"))
        print_hanging(console, "  source: ", row["source"])
        if row["since"] is None:
            print_hanging(console, "  ", "the baseline: every later release is described by what it changes")
            continue
        print_hanging(console, "  ", f"changes since {row['since']}:")
        for change in row["changes"]:
            print_hanging(console, f"    {change['where']}: ",
                          f"{change['change']} [{', '.join(change['verified'])}; {change['source']}]")
        for weight in row["defaultPluginWeights"]:
            change = (f"{weight['plugin']} added" + (f" (weight {weight['to']})" if weight["to"] else "")
                      if weight["added"] else
                      f"{weight['plugin']} weight {weight['from'] or 'none'} -> {weight['to'] or 'none'}")
            print_hanging(console, "    default profile: ", change)
        if row["featureGates"]:
            gates = ", ".join(f"{g['gate']} {g['from']} -> {g['to']}" for g in row["featureGates"])
            print_hanging(console, "    feature gates: ", gates)
        for item in row["notModelledSince"]:
            print_hanging(console, "    not modelled: ", item)
        if len(row["notModelledSince"]) < len(row["notModelled"]):
            print_hanging(console, "    not modelled: ", f"what {row['since']} does not model")
