"""The service layer (kwhatif.whatif.service, its API re-exported here) and the scenario engine built on it:
sequences, drains, sweeps, suggestions, consolidation. No rendering here, no CLI concerns.

The service's names are resolved on first use (PEP 562): the CLI imports the scenario modules that
define its flags (``whatif.changes``) at startup, and ``--help`` or shell completion should not pay for
the engine the service imports."""

from __future__ import annotations

import importlib

__all__ = ["Attempt", "SchedulerSetup", "attempt_cluster_pod", "attempt_pod", "cluster_from_dump",
           "create_resource_claims", "lease_warning", "load_cluster", "load_live_cluster", "place",
           "place_cluster_pod", "place_pod", "prepare_pod", "schedule_pod"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = "kwhatif.framework.config" if name == "SchedulerSetup" else "kwhatif.whatif.service"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
