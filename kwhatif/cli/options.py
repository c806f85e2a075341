"""The options several commands share, defined once, with kubectl's names (``--kubeconfig``, ``--context``,
``-n/--namespace``, ``-A``, ``-o``), and the command class every command uses.

Each option is an ``Annotated`` type: ``cluster: ClusterOption = None`` in a command's signature gives it
the same flag, metavar and help everywhere. The options that always go together (where the cluster comes
from; the pod and its namespace) are option groups: one dataclass parameter, expanded by ``option_groups``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from enum import Enum
from typing import Annotated, Optional

import typer
import typer.core

from kwhatif.errors import InputError


class Output(str, Enum):
    table = "table"
    wide = "wide"
    json = "json"
    yaml = "yaml"


class MachineOutput(str, Enum):
    """Commands without a wide table."""

    table = "table"
    json = "json"
    yaml = "yaml"


PodArgument = Annotated[str, typer.Argument(
    metavar="POD", autocompletion=lambda ctx, incomplete: complete_pods(ctx, incomplete),
    help="Pod or workload manifest (YAML/JSON file, or - for stdin), or pod/NAME (NAMESPACE/NAME) for a pod "
         "already in the cluster (place, preempt), or TYPE/NAME (deployment/web) for a workload of the cluster "
         "(place, capacity).")]
ClusterOption = Annotated[Optional[str], typer.Option(
    "--cluster", "-c", metavar="FILE",
    help="Snapshot (kwhatif snapshot) or dump (kubectl get -o yaml/json, file, directory or - for stdin). "
         "Default: read the live cluster.")]
SchedulerConfigOption = Annotated[Optional[str], typer.Option(
    "--scheduler-config", metavar="FILE", help="KubeSchedulerConfiguration file (YAML or JSON).")]
PercentageOption = Annotated[Optional[int], typer.Option(
    "--percentage-of-nodes-to-score", metavar="N",
    help="percentageOfNodesToScore of every profile, over the scheduler config: the share of nodes, in "
         "percent, kube-scheduler scores from 100 nodes up (100: every node; 0: adaptive, the default).")]
KubeconfigOption = Annotated[Optional[str], typer.Option(
    "--kubeconfig", metavar="FILE",
    help="Kubeconfig for a live cluster (default: $KUBECONFIG, ~/.kube/config, in-cluster).")]
ContextOption = Annotated[Optional[str], typer.Option(
    "--context", metavar="NAME", help="Kubeconfig context for a live cluster (default: the current one).")]
NamespaceOption = Annotated[Optional[str], typer.Option(
    "--namespace", "-n", metavar="NAMESPACE",
    autocompletion=lambda ctx, incomplete: complete_namespaces(ctx, incomplete),
    help="Namespace of pod/NAME or TYPE/NAME (default: the kubeconfig context's namespace, else default).")]
KubernetesVersionOption = Annotated[Optional[str], typer.Option(
    "--kubernetes-version", metavar="VERSION", envvar="KWHATIF_KUBERNETES_VERSION", show_envvar=False,
    help="Answer as this kube-scheduler release: 1.34, v1.34.1, 1.35 ... (a minor means its newest modelled "
         "patch; also $KWHATIF_KUBERNETES_VERSION). Default: the cluster's own version. 'kwhatif versions' "
         "lists the modelled releases.")]
FeatureGatesOption = Annotated[Optional[str], typer.Option(
    "--feature-gates", metavar="NAME=BOOL,...",
    help="kube-scheduler feature gates, as kube-scheduler takes them, for the gates kwhatif models "
         "('kwhatif versions' lists them).")]
CompareVersionOption = Annotated[Optional[str], typer.Option(
    "--compare-version", metavar="VERSION",
    help="Upgrade impact: ask the same question of this kube-scheduler release too (on the same cluster "
         "state, with the same configuration and --feature-gates) and show what it answers differently; "
         "-o json adds 'comparison'. The exit status follows the answer of the cluster's version (or "
         "--kubernetes-version).")]
def _output_format(formats: type[Enum]):
    """-o's parser: one of ``formats``, or kubectl's ``name`` and ``jsonpath=TEMPLATE``, which answer as json
    does and print their projection of the document instead (``render.name_jsonpath``)."""

    def parse(value):
        from kwhatif.render.name_jsonpath import projection_for, set_projection

        if isinstance(value, formats):  # the default
            return value
        try:
            projection = projection_for(value)
        except InputError as exc:
            raise typer.BadParameter(str(exc)) from None
        set_projection(projection)
        if projection is not None:
            return formats.json
        try:
            return formats(value)
        except ValueError:
            known = ", ".join(f.value for f in formats)
            raise typer.BadParameter(f"{value!r} is not one of {known}, name, jsonpath=TEMPLATE, "
                                     f"jsonpath-file=FILE") from None

    return parse


_PROJECTIONS_HELP = ("; name: the objects the answer is about, as TYPE/NAME lines (the nodes the pods land on, the "
                     "pods pending or evicted, ...); jsonpath=TEMPLATE: kubectl's JSONPath over the json document "
                     "({range}, filters; jsonpath-file=FILE reads it from a file).")
OutputOption = Annotated[Output, typer.Option("--output", "-o", metavar="FORMAT", parser=_output_format(Output),
                                              help="Output format: table, wide, json, yaml, name or jsonpath=TEMPLATE"
                                                   + _PROJECTIONS_HELP)]
MachineOutputOption = Annotated[MachineOutput, typer.Option(
    "--output", "-o", metavar="FORMAT", parser=_output_format(MachineOutput),
    help="Output format: table, json, yaml, name or jsonpath=TEMPLATE" + _PROJECTIONS_HELP)]
NodeOption = Annotated[Optional[list[str]], typer.Option(
    "--node", metavar="NODE", autocompletion=lambda ctx, incomplete: complete_nodes(ctx, incomplete),
    help="Only show these nodes (repeatable); an unknown name is an error.")]
def _validate_mode(value: str) -> str:
    """kubectl's --validate values: strict|warn|ignore, true (strict), false (ignore)."""
    mode = {"true": "strict", "false": "ignore"}.get(value.lower(), value.lower())
    if mode not in ("strict", "warn", "ignore"):
        raise typer.BadParameter(f"{value!r} is not one of strict, warn, ignore (or true, false)")
    return mode


ValidateOption = Annotated[str, typer.Option(
    "--validate", metavar="MODE", callback=_validate_mode,
    help="As kubectl: strict (true, the default) refuses a pod the API server would refuse; warn prints each "
         "error as a warning and evaluates the pod as kube-scheduler would see it; ignore (false) evaluates it "
         "silently. The answer says the pod would be refused. A value the scheduler cannot read is an error "
         "in every mode.")]
AllNodesOption = Annotated[bool, typer.Option(
    "--all-nodes", help="Every node (preempt --explain: every candidate and its victims); by default a large "
                        "cluster shows the best nodes and groups the rejected ones by reason.")]
ExplainOption = Annotated[bool, typer.Option(
    "--explain", help="Every candidate node with its victims and the five criteria, which criterion decided, "
                      "and why preemption cannot help elsewhere.")]


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClusterInputs:
    """Where the cluster comes from (a file, else the live cluster of a kubeconfig context) and the
    scheduler (configuration, release, feature gates) to evaluate it with."""

    cluster: ClusterOption = None
    scheduler_config: SchedulerConfigOption = None
    percentage_of_nodes_to_score: PercentageOption = None
    kubeconfig: KubeconfigOption = None
    context: ContextOption = None
    kubernetes_version: KubernetesVersionOption = None
    feature_gates: FeatureGatesOption = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class PodInputs(ClusterInputs):
    """A pod manifest, or pod/NAME with its namespace, and the cluster to place it in."""

    pod: PodArgument
    namespace: NamespaceOption = None


def option_groups(command):
    """``command`` with each parameter typed as an option group (a dataclass of options) replaced, in its
    place, by the group's options, and called with the group built from their values: typer only knows
    flat parameters."""
    hints = typing.get_type_hints(command, include_extras=True)
    params, groups = [], {}
    for param in inspect.signature(command).parameters.values():
        hint = hints[param.name]
        if not dataclasses.is_dataclass(hint):
            params.append(param.replace(kind=param.KEYWORD_ONLY, annotation=hint))
            continue
        fields = typing.get_type_hints(hint, include_extras=True)
        groups[param.name] = (hint, [field.name for field in dataclasses.fields(hint)])
        params += [inspect.Parameter(field.name, param.KEYWORD_ONLY, annotation=fields[field.name],
                                     default=inspect.Parameter.empty if field.default is dataclasses.MISSING
                                     else field.default)
                   for field in dataclasses.fields(hint)]

    @functools.wraps(command)
    def run(**values):
        for name, (group, names) in groups.items():
            values[name] = group(**{field: values.pop(field) for field in names})
        return command(**values)

    run.__signature__ = inspect.Signature(params)
    run.__annotations__ = {param.name: param.annotation for param in params}
    return run


# Options whose value may be left out (typer has no optional values), and what the flag alone means:
# the flag last or followed by another option.
OPTIONAL_VALUES = {"--ray": "local"}


def help_paragraphs(text: str | None) -> str | None:
    """A docstring as help: paragraphs kept, the line breaks inside a paragraph joined, so rich wraps each
    paragraph at the terminal's width (and a command's summary in the list is its whole first sentence)."""
    if not text:
        return text
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in inspect.cleandoc(text).split("\n\n"))


class PlainHelp:
    """Help that names values, not Python types: ``--cluster FILE``, a flag with no value shown (typer
    would print ``<str>``, ``<bool>``, ``<list[str]>``), and paragraphs that wrap at the terminal's width;
    options listed whole (``options_panel``); ``-h`` as ``--help``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.help = help_paragraphs(self.help)
        self.context_settings.setdefault("help_option_names", ["-h", "--help"])

    def format_help(self, ctx, formatter) -> None:
        use_options_panel()
        return super().format_help(ctx, formatter)

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            if param.metavar is None:
                param.metavar = "" if getattr(param, "is_flag", False) else param.name.upper().replace("_", "-")
            if param.param_type_name == "argument":  # its metavar is its name: no type column beside it
                param.display_type_rich = _no_type
        return params


def _names_to_complete(ctx, kind: str) -> list[tuple[str, str]]:
    """(namespace, name) of the Nodes, Namespaces or Pods of the cluster the command line names: its
    --cluster, else the live cluster of its --kubeconfig and --context (one list call, as kubectl
    completes). Nothing when there is no cluster to read (a half-typed command line, stdin, no
    kubeconfig, an API server that does not answer): completion offers nothing rather than failing."""
    params = (ctx.params or {}) if ctx is not None else {}
    path = params.get("cluster")
    try:
        if not path:
            from kwhatif.live import list_names

            return list_names(kind, params.get("kubeconfig"), params.get("context"))
        if path == "-":
            return []
        from kwhatif.state.cluster import KINDS
        from kwhatif.whatif import load_cluster

        objects = getattr(load_cluster(path), KINDS[kind])
    except Exception:
        return []
    metas = [obj.get("metadata") or {} for obj in objects]
    return [(meta.get("namespace") or ("default" if kind == "Pod" else ""), meta.get("name") or "")
            for meta in metas]


def complete_nodes(ctx, incomplete: str) -> list[str]:
    """Node names of the cluster, as kubectl completes them."""
    return [name for _, name in _names_to_complete(ctx, "Node") if name.startswith(incomplete)]


def complete_namespaces(ctx, incomplete: str) -> list[str]:
    """Namespaces of the cluster (the Namespace objects, and those of a file's pods)."""
    found = {name for _, name in _names_to_complete(ctx, "Namespace")}
    if (ctx.params or {}).get("cluster"):  # a dump may hold pods without their Namespace objects
        found |= {namespace for namespace, _ in _names_to_complete(ctx, "Pod")}
    return sorted(n for n in found if n and n.startswith(incomplete))


def complete_pods(ctx, incomplete: str) -> list[str]:
    """NAMESPACE/NAME of the pods of the cluster (after ``pod/``, pod/NAMESPACE/NAME)."""
    prefix = "pod/" if incomplete.startswith("pod/") else ""
    keys = [f"{prefix}{namespace}/{name}" for namespace, name in _names_to_complete(ctx, "Pod")]
    return [key for key in keys if key.startswith(incomplete)]


class Command(PlainHelp, typer.core.TyperCommand):
    """A kwhatif command (see ``PlainHelp``), whose ``OPTIONAL_VALUES`` options may be given alone."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        from kwhatif.render.name_jsonpath import set_projection

        set_projection(None)  # until -o asks for one (one process may run several commands: tests)
        end = args.index("--") if "--" in args else len(args)
        args = [f"{arg}={OPTIONAL_VALUES[arg]}" if arg in OPTIONAL_VALUES and i < end
                and (i + 1 == len(args) or args[i + 1].startswith("-")) else arg for i, arg in enumerate(args)]
        return super().parse_args(ctx, args)


def _no_type(ctx) -> None:
    return None


NAME_COLUMN = 30  # an option label at most this wide (or two fifths of the panel) has its help beside it


def _label(param, ctx):
    """``-c, --cluster FILE``: the short flag first, as kubectl lists them; an argument by its name."""
    from rich.text import Text
    from typer import rich_utils

    if param.param_type_name == "argument":
        return Text(param.metavar or param.name.upper(), rich_utils.STYLE_TYPES)
    label = Text(", ".join(sorted(param.opts, key=lambda opt: opt.startswith("--"))), rich_utils.STYLE_OPTION)
    metavar = param.display_type_rich(ctx=ctx)
    if metavar:
        label.append(f" {metavar}", rich_utils.STYLE_TYPES)
    limits = param._get_number_range_help_str()
    if limits:
        label.append(f" [{limits}]", rich_utils.STYLE_TYPES)
    return label


def options_panel(*, name, params, ctx, markup_mode, console) -> None:
    """typer's options panel with option names that never break or get cut (``--skip-wait-for-delet…``
    at 80 columns): each label whole, its help wrapping beside it, or under it when the label is longer
    than the name column (as click and kubectl print a long flag)."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from typer import rich_utils

    if not params:
        return
    rows = [(_label(param, ctx), rich_utils._get_parameter_help(param=param, ctx=ctx, markup_mode=markup_mode))
            for param in params]
    limit = max(NAME_COLUMN, (console.width - 4) * 2 // 5)
    width = max((label.cell_len for label, _ in rows if label.cell_len <= limit), default=NAME_COLUMN)
    parts = []
    for label, help_text in rows:
        if label.cell_len > width:
            parts += [label, Padding(help_text, (0, 0, 0, width + 2))]
            continue
        grid = Table.grid(padding=(0, 2))
        grid.add_column(width=width, no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_row(label, help_text)
        parts.append(grid)
    console.print(Panel(Group(*parts), border_style=rich_utils.STYLE_OPTIONS_PANEL_BORDER, title=name,
                        title_align=rich_utils.ALIGN_OPTIONS_PANEL))


def use_options_panel() -> None:
    """Install ``options_panel`` as typer's (its help formatter has no hook for the panel's layout)."""
    from typer import rich_utils

    rich_utils._print_options_panel = options_panel
