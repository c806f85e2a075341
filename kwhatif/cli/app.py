"""The ``kwhatif`` command: a thin typer app; each command lives in its own module."""

from __future__ import annotations

import importlib
import os
import sys

from typing import Optional

import typer
import typer.core

from kwhatif import __version__
from kwhatif.cli import coercion
from kwhatif.cli.options import Command, PlainHelp
from kwhatif.cli.common import (ClickException, ReaderSafeStdout, UsageError, internal_error_message,
                               print_traceback_if_asked, user_errors)
from kwhatif.errors import ExitStatus, KwhatifError

PLUGIN_EXECUTABLE = "kubectl-whatif"

coercion.install()  # the options' values coerced without importing pydantic where typer's adapters agree


NO_COLOR_FLAG = "--no-color"


class Group(PlainHelp, typer.core.TyperGroup):
    """Usage errors as every other error: one ``error:`` line on stderr (and a hint where to look),
    exit 2, instead of typer's usage block and boxed panel. ``--no-color`` is a root option that may be
    written anywhere on the command line (as after ``kwhatif place pod.yaml``): it is moved in front of
    the command before click parses."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        end = args.index("--") if "--" in args else len(args)
        if NO_COLOR_FLAG in args[:end]:
            args = [NO_COLOR_FLAG] + [a for a in args[:end] if a != NO_COLOR_FLAG] + args[end:]
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except UsageError as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help is already printed
                sys.exit(int(ExitStatus.BAD_INPUT))
            message = " ".join(exc.format_message().split())
            print(f"error: {message}", file=sys.stderr)
            if exc.ctx is not None:
                print(f"hint: '{exc.ctx.command_path} --help' lists the arguments and options", file=sys.stderr)
            sys.exit(int(ExitStatus.BAD_INPUT))
        except ClickException as exc:
            print(f"error: {' '.join(exc.format_message().split())}", file=sys.stderr)
            sys.exit(exc.exit_code)
        sys.exit(status if isinstance(status, int) else 0)


app = typer.Typer(
    name="kwhatif",
    cls=Group,
    help="What-if for the Kubernetes scheduler: where would this pod land, why is it Pending, whom would "
         "it evict - answered exactly as the cluster's kube-scheduler release would, without touching the cluster.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from kwhatif.versions import modelled_names

        typer.echo(f"kwhatif {__version__} (kube-scheduler {modelled_names()})")
        raise typer.Exit()


@app.callback()
def root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                      help="Print the version and exit."),
         no_color: bool = typer.Option(False, NO_COLOR_FLAG,
                                       help="Plain text without colour on a terminal too (also: NO_COLOR=1). "
                                            "May be given after the command.")) -> None:
    """kwhatif never writes to the cluster: it reads (get/list) and simulates."""
    from kwhatif.render.env import set_no_color

    set_no_color(no_color)


# The commands, in the order --help lists them: each is the function of the same name in its own module;
# the commands that evaluate a scenario take the cluster-change options and show help without arguments.
COMMANDS = (("place", True), ("pending", False), ("capacity", True), ("preempt", True), ("drain", True),
            ("leader", False), ("snapshot", False), ("versions", False))


def _register() -> None:
    from kwhatif.cli.changes import ChangesCommand, with_change_options
    from kwhatif.cli.options import option_groups

    for name, changes in COMMANDS:
        command = option_groups(getattr(importlib.import_module(f"kwhatif.cli.{name}"), name))
        app.command(name, no_args_is_help=changes, cls=ChangesCommand if changes else Command)(
            user_errors(with_change_options(command) if changes else command))


_register()


@app.command("help", cls=Command)
def help_command(ctx: typer.Context,
                 command: Optional[str] = typer.Argument(None, metavar="COMMAND", help="The command to explain.")) -> None:
    """What a command does and its options, as COMMAND --help prints them (kubectl help COMMAND)."""
    root = ctx.parent
    if not command:
        text = root.get_help()
    else:
        target = root.command.get_command(root, command)
        if target is None:
            known = ", ".join(root.command.list_commands(root))
            raise UsageError(f"unknown command {command!r}: one of {known}", ctx)
        text = target.get_help(target.make_context(command, [], parent=root, resilient_parsing=True))
    typer.echo(text)  # as --help does (rich help is printed while it is formatted; the text is empty)


def program_name(argv0: str) -> str:
    """``kubectl whatif`` when kubectl runs us as its plugin (it executes ``kubectl-whatif``), else ``kwhatif``."""
    return "kubectl whatif" if os.path.basename(argv0) == PLUGIN_EXECUTABLE else "kwhatif"


def main() -> None:
    """Entry point: user errors become one stderr line and a distinct exit code, never a traceback.

    Usage errors are one line too (``Group``, exit 2); a KwhatifError carries its exit status; anything else is an
    internal error (exit 2, never 0 or 1: a crash must not read as "fits" or "does not fit").
    """
    sys.stdout = ReaderSafeStdout(sys.stdout)
    try:
        app(prog_name=program_name(sys.argv[0]))
    except SystemExit as exc:
        _exit(exc.code)
    except KwhatifError as exc:
        print(f"error: {exc}", file=sys.stderr)
        _exit(int(exc.exit_status))
    except Exception as exc:
        print_traceback_if_asked()
        print(f"error: {internal_error_message(exc)}", file=sys.stderr)
        _exit(int(ExitStatus.BAD_INPUT))
    _exit(0)


def _exit(code) -> None:
    """Exit as sys.exit(code) would, without the interpreter's teardown: freeing a 150,000-pod cluster
    object by object takes 0.7 s of a 3 s command, and nothing is left to clean up (output flushed here)."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(status)  # a profiler or coverage writes its results at exit
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # the reader went away (| head): nothing more to say
        pass
    os._exit(status)
