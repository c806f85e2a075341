"""``kwhatif versions``: the releases kwhatif models, what each changes and how each change is verified."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from kwhatif.render.table import make_console
from kwhatif.render.tables import Column, print_hanging, print_table


def render_versions(rows: list[dict], console: Console | None = None, verbose: bool = False) -> None:
    """One line per release (what it answers for, how it is verified, where it differs from the one before);
    ``verbose``: each change in full with its source and how it is verified."""
    console = make_console(console)
    if not verbose:
        print_table(console, [Column("RELEASE"), Column("ANSWERS FOR", wrap=True, min_width=16),
                              Column("VERIFIED AGAINST", wrap=True, min_width=16),
                              Column("CHANGES SINCE THE RELEASE BEFORE", wrap=True, min_width=16)],
                    [[(row["release"], "bold"), row["answersFor"], _verified(row), _changes(row)] for row in rows])
        console.print(Text("kwhatif versions -v: each change, its source and how it is verified (-o json too).",
                           style="dim"))
        return
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


_CHECKED = re.compile(r"(\d+) single-pod cases and (\d+) sequences")


def _verified(row: dict) -> str:
    if row["preview"]:
        return "none: a preview from upstream's text only"
    found = _CHECKED.search(row["checked"] or "")
    checked = f"{found[1]} cases, {found[2]} sequences" if found else row["checked"]
    return row["verified"] + (f" ({checked})" if checked else "")


def _changes(row: dict) -> str:
    """Where the release differs from the one before, by plugin or step (each named once), then how many
    gate defaults, default-profile plugins and newly unmodelled behaviours change."""
    if row["since"] is None:
        return "the baseline"
    where = [name.split(" (")[0] for change in row["changes"] for name in change["where"].split(", ")]
    where = list(dict.fromkeys(where))
    counts = [(len(row["featureGates"]), "gate default", "gate defaults"),
              (len(row["defaultPluginWeights"]), "default-profile plugin", "default-profile plugins"),
              (len(row["notModelledSince"]), "not modelled", "not modelled")]
    where += [f"{n} {one if n == 1 else many}" for n, one, many in counts if n]
    return ", ".join(where)
