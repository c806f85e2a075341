"""``kwhatif versions``: the kube-scheduler releases kwhatif answers as, and what each models."""

from __future__ import annotations

import typer

from kwhatif.cli.options import MachineOutput, MachineOutputOption


def versions(output: MachineOutputOption = MachineOutput.table,
             verbose: bool = typer.Option(False, "--verbose", "-v",
                                          help="Each change in full, with its source and how it is verified.")) -> None:
    """The kube-scheduler releases kwhatif models (--kubernetes-version), what each changes against the one
    before it and how each change is verified: against cases made by the real scheduler, upstream's unit-test
    tables, or only upstream's text (a preview, said in every answer)."""
    from kwhatif.versions import modelled_table

    rows = modelled_table()
    if output in (MachineOutput.json, MachineOutput.yaml):
        from kwhatif.render.output import machine_output

        typer.echo(machine_output("VersionTable", {"releases": rows}, output.value), nl=False)
        return
    from kwhatif.render.versions import render_versions

    render_versions(rows, verbose=verbose)
