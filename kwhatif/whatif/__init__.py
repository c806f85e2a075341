"""The service layer (kwhatif.whatif.service, its API re-exported here) and the scenario engine built on it:
sequences, drains, sweeps, suggestions, consolidation. No rendering here, no CLI concerns."""

from kwhatif.framework.config import SchedulerSetup
from kwhatif.whatif.service import (Attempt, attempt_cluster_pod, attempt_pod, cluster_from_dump,
                                    create_resource_claims, lease_warning, load_cluster, load_live_cluster, place,
                                    place_cluster_pod, place_pod, prepare_pod, schedule_pod)

__all__ = ["Attempt", "SchedulerSetup", "attempt_cluster_pod", "attempt_pod", "cluster_from_dump",
           "create_resource_claims", "lease_warning", "load_cluster", "load_live_cluster", "place",
           "place_cluster_pod", "place_pod", "prepare_pod", "schedule_pod"]
