"""``kwhatif snapshot``: save a live cluster (or convert a dump) to a ``*.kwi.json.gz`` snapshot, or
show what a snapshot holds."""

from __future__ import annotations

import os
import sys
import time
from typing import Optional

import typer

from kwhatif.cli.options import ContextOption, KubeconfigOption
from kwhatif.errors import InputError


def snapshot(
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE",
                                         help="Snapshot file to write (*.kwi.json.gz), or - for stdout."),
    from_dump: Optional[str] = typer.Option(None, "--from", metavar="DUMP",
                                            help="Convert this dump (YAML/JSON file or directory) instead of "
                                                 "reading the live cluster."),
    summary: Optional[str] = typer.Option(None, "--summary", metavar="FILE",
                                          help="Show what a snapshot (or a dump) holds."),
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Save the cluster state scheduling reads to a compact, versioned snapshot for offline what-ifs.

    Reads the live cluster with list calls only (never a write), or converts a dump with --from.
    """
    if summary:
        if output or from_dump:
            raise InputError("--summary reads a snapshot; it cannot be combined with --output or --from")
        show_summary(summary)
        return
    if not output:
        raise InputError("missing --output FILE (e.g. -o prod.kwi.json.gz), or use --summary FILE")
    if output in ("json", "yaml", "wide", "table", "name") or output.startswith("jsonpath="):
        raise InputError(f"-o {output}: snapshot's -o is the file to write (a gzip snapshot), not an output "
                         f"format as for the other commands; -o ./{output} writes a file of that name")
    if from_dump and (kubeconfig or context):
        raise InputError("--from converts a dump; --kubeconfig/--context only apply to a live read")
    if output == "-" and sys.stdout.isatty():
        raise InputError("-o -: refusing to write a gzip snapshot to a terminal; redirect it (> FILE or | ...)")
    from kwhatif import whatif
    from kwhatif.snapshot_file import snapshot_bytes, write_snapshot

    started = time.monotonic()
    if from_dump:
        cluster = whatif.cluster_from_dump(from_dump)
    else:
        from kwhatif.live import read_cluster

        cluster = read_cluster(kubeconfig, context, alternative="--from DUMP converts a dump instead")
    if output == "-":
        data = snapshot_bytes(cluster, stripped=not from_dump)
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        size = len(data)
    else:
        size = write_snapshot(cluster, output, stripped=not from_dump)
    _report_written(output, size, cluster, time.monotonic() - started)


def human_size(n: int) -> str:
    for unit in ("B", "kB", "MB"):
        if n < 1000 or unit == "MB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _report_written(path: str, size: int, cluster, seconds: float) -> None:
    from rich.console import Console

    counts = cluster.counts()
    others = sum(n for kind, n in counts.items() if kind not in ("Node", "Pod"))
    console = Console(highlight=False, stderr=path == "-")  # stdout carries the snapshot itself
    console.print(f"Wrote {'the snapshot to stdout' if path == '-' else path} ({human_size(size)}): {_plural(counts.get('Node', 0), 'node')}, "
                  f"{_plural(counts.get('Pod', 0), 'pod')}, {_plural(others, 'other object')} "
                  f"in {seconds:.1f}s.", soft_wrap=True)
    if cluster.skipped_kinds:
        skipped = ", ".join(f"{n} {kind}" for kind, n in sorted(cluster.skipped_kinds.items()))
        console.print(f"Not needed for scheduling, left out: {skipped}.", soft_wrap=True)
    missing = cluster.metadata.get("missingPermissions") or []
    if missing:
        console.print(f"Missing permissions (those objects are absent): {', '.join(missing)}.", soft_wrap=True)
    for warning in cluster.warnings:
        console.print(f"[yellow]warning:[/] {warning}", soft_wrap=True)


def show_summary(path: str) -> None:
    from rich.table import Table

    from kwhatif.render.table import make_console
    from kwhatif.snapshot_file import document_objects, is_snapshot, read_document

    if not is_snapshot(path):
        _show_dump_summary(path)
        return
    doc = read_document(path)
    meta = doc.get("metadata") or {}
    objects = document_objects(doc, path)
    console = make_console()
    console.print(f"[bold]{path}[/]  ({human_size(os.path.getsize(path))}, snapshot format v{doc['version']}, "
                  f"written by kwhatif {meta.get('kwhatifVersion') or '?'})")
    info = Table.grid(padding=(0, 2))
    info.add_column(style="dim")
    info.add_column()
    source = meta.get("source") or "live"
    if source == "dump":
        info.add_row("Converted from", str(meta.get("dump") or "?"))
    else:
        info.add_row("Server", str(meta.get("server") or "?"))
        info.add_row("Context", str(meta.get("context") or "?"))
    info.add_row("Captured at", str(meta.get("capturedAt") or "unknown"))
    missing = meta.get("missingPermissions") or []
    info.add_row("Missing permissions", ", ".join(missing) if missing else "none")
    if meta.get("unavailableResources"):
        info.add_row("Not served by the cluster", ", ".join(meta["unavailableResources"]))
    console.print(info)
    _print_kinds(console, objects)


def _show_dump_summary(path: str) -> None:
    """A dump given to --summary: what it holds, said to be a dump (and how to make it a snapshot)."""
    from rich.markup import escape

    from kwhatif import whatif
    from kwhatif.render.table import make_console
    from kwhatif.state.cluster import KINDS

    cluster = whatif.cluster_from_dump(path)
    console = make_console()
    console.print(f"[bold]{escape(path)}[/] is a dump, not a snapshot (kwhatif reads it as it is; "
                  f"kwhatif snapshot --from {escape(path)} -o FILE converts it)")
    captured = cluster.metadata.get("capturedAt")
    console.print(f"Captured at {captured}" if captured else "Capture time: unknown (the dump does not say)")
    objects = {kind: getattr(cluster, attr) for kind, attr in KINDS.items() if getattr(cluster, attr)}
    _print_kinds(console, objects)
    if cluster.skipped_kinds:
        skipped = ", ".join(f"{n} {kind}" for kind, n in sorted(cluster.skipped_kinds.items()))
        console.print(f"Not read for scheduling: {escape(skipped)}.")
    for warning in cluster.warnings:
        console.print(f"warning: {escape(warning)}")


def _print_kinds(console, objects: dict[str, list]) -> None:
    from kwhatif.render.tables import Column, print_table

    console.file.write("\n")
    print_table(console, [Column("KIND"), Column("OBJECTS", right=True), Column("NOTES", wrap=True)],
                [[kind, f"{len(items):,}", _notes(kind, items)] for kind, items in objects.items()])


def _notes(kind: str, items: list) -> str:
    if kind == "Pod":
        bound = sum(1 for p in items if (p.get("spec") or {}).get("nodeName"))
        nominated = sum(1 for p in items
                        if not (p.get("spec") or {}).get("nodeName") and (p.get("status") or {}).get("nominatedNodeName"))
        pending = len(items) - bound
        note = f"{bound:,} bound, {pending:,} pending"
        return note + (f" ({nominated:,} nominated)" if nominated else "")
    if kind == "Node":
        unschedulable = sum(1 for n in items if (n.get("spec") or {}).get("unschedulable"))
        tainted = sum(1 for n in items if (n.get("spec") or {}).get("taints"))
        return f"{unschedulable:,} unschedulable, {tainted:,} tainted"
    if kind == "Lease":
        for lease in items:
            if (lease.get("metadata") or {}).get("name") == "kube-scheduler":
                holder = (lease.get("spec") or {}).get("holderIdentity")
                return f"kube-scheduler held by {holder}" if holder else "kube-scheduler not held"
        return "no kube-scheduler lease"
    return ""
