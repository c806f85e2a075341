"""Loading a KubeSchedulerConfiguration file: decode, default, validate, then the checks of building
the scheduler, as kube-scheduler of the chosen release starts."""

from __future__ import annotations

from kwhatif.api.documents import parse_documents, read_text
from kwhatif.errors import InputError
from kwhatif.framework.config import Profile, SchedulerSetup
from kwhatif.framework.scheduler_config.decode import decode_config
from kwhatif.framework.scheduler_config.defaults import default_config
from kwhatif.framework.scheduler_config.duplicate_keys import duplicate_field_errors
from kwhatif.framework.scheduler_config.framework_check import apply_extender_resources, check_framework
from kwhatif.framework.scheduler_config.refusal import Refused
from kwhatif.framework.scheduler_config.schema import KIND
from kwhatif.framework.scheduler_config.validation import validate_config
from kwhatif.versions import DEFAULT, Features


def scheduler_config_from_dict(data: dict, source: str, _strict_errors: list[str] | None = None,
                               features: Features = DEFAULT):
    """A decoded KubeSchedulerConfiguration as kube-scheduler of ``features``' release would run it:
    defaulted, validated, and checked the way each profile's framework is built. Raises InputError
    naming ``source``."""
    try:
        config = decode_config(data, _strict_errors or [])
        global_percentage = config.get("percentageOfNodesToScore")
        config, profiles = default_config(config, features)
        validate_config(config, profiles, features)
        extenders = config.get("extenders") or []
        apply_extender_resources(extenders, profiles)
        for profile in profiles:
            check_framework(profile, features)
    except Refused as exc:
        raise InputError(f"{source}: {exc}") from None
    return SchedulerSetup(
        profiles=[Profile(
            scheduler_name=p.scheduler_name,
            plugins=p.plugins,
            plugin_config={e["name"]: e["args"] for e in p.plugin_config},
            # The profile's own value wins; otherwise the global one applies (numFeasibleNodesToFind).
            percentage_of_nodes_to_score=p.percentage if p.percentage is not None else global_percentage,
            features=features,
        ) for p in profiles],
        extenders=extenders,
        percentage_of_nodes_to_score=config["percentageOfNodesToScore"],
        parallelism=config["parallelism"],
        leader_election=config["leaderElection"],
        source=source,
        features=features,
    )


def load_scheduler_config(path: str, features: Features = DEFAULT):
    """The KubeSchedulerConfiguration in a YAML or JSON file (the first document, as kube-scheduler reads)."""
    text = read_text(path)
    documents = parse_documents(text, path, unique_keys=False)  # duplicate_field_errors reports them
    if not documents:
        raise InputError(f"{path}: no {KIND} found (the file is empty)")
    return scheduler_config_from_dict(documents[0], path, duplicate_field_errors(text), features)
