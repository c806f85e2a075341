"""Scheduler leader election: who holds the lease, is it fresh, and what if the leader goes away.

The engine behind ``kwhatif leader``: no CLI, no cluster client, standard library only. Inputs are
plain dicts (Lease objects and a KubeSchedulerConfiguration as read from YAML/JSON) and an explicit
evaluation time; outputs are dataclasses with ``to_dict()`` for ``-o json``.

The model follows client-go v0.34 ``tools/leaderelection`` as kube-scheduler v1.34 uses it:

* The leader writes the Lease (holderIdentity, renewTime, leaseDurationSeconds =
  ``int(leaseDuration / 1s)``, i.e. truncated to whole seconds) and re-writes it every retryPeriod
  (``wait.Until``, no jitter). Each renewal round retries every retryPeriod for at most
  renewDeadline (``wait.PollUntilContextTimeout``); when a round fails the leader stops leading and
  kube-scheduler exits (kubelet restarts it, with a new identity ``<hostname>_<uuid>``).
* A standby ignores the timestamps inside the record. It polls the Lease with
  ``wait.JitterUntil(..., retryPeriod, JitterFactor=1.2, sliding=true)``; ``wait.Jitter(d, 1.2)``
  waits ``d + rand[0,1) * 1.2 * d``, so successive polls are between retryPeriod and
  2.2 x retryPeriod apart (API round-trips come on top; this module treats them as instant).
  Whenever the raw record differs from the last one it saw, it notes *its own* clock as
  observedTime; it may take the lease once ``observedTime + leaseDurationSeconds`` (the value
  in the record) is not after its clock, or at once when holderIdentity is empty.
* kube-scheduler runs with ``ReleaseOnCancel: true``: on a graceful shutdown the leader writes an
  empty holderIdentity (with leaseDurationSeconds 1), so standbys take over on their next poll.
* Standbys keep their informers synced before they run for leader, so scheduling resumes as soon
  as one wins (the first scheduling cycle itself is not counted here).

Not modelled: coordinated leader election (the CoordinatedLeaderElection feature gate, where the
API server picks the leader), and the deprecated ``--leader-elect-*`` flags, which override the
config file's values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping, Sequence

from kwhatif.api import goduration

DEFAULT_LEASE_NAMESPACE = "kube-system"
DEFAULT_LEASE_NAME = "kube-scheduler"
DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_RESOURCE_LOCK = "leases"
DEFAULT_LEASE_DURATION = timedelta(seconds=15)
DEFAULT_RENEW_DEADLINE = timedelta(seconds=10)
DEFAULT_RETRY_PERIOD = timedelta(seconds=2)

# client-go leaderelection.JitterFactor: standbys wait retryPeriod * (1 + U[0, 1.2)) between polls.
JITTER_FACTOR = 1.2

# Lease durations below this draw a warning. client-go itself tolerates clock *offsets* (standbys
# time expiry on their own clock) but not pauses: an API-server latency spike, an etcd leader
# election, a GC or CPU-throttling stall, or a VM migration of a few seconds looks exactly like a
# dead leader. Those routinely reach 1-5s on busy control planes, and every lost lease makes
# kube-scheduler exit and restart, so anything under 5s flaps in ordinary operation.
MIN_SAFE_LEASE_DURATION = timedelta(seconds=5)

# A verdict this close to the expiry instant depends on the clock difference between the leader
# (which wrote renewTime) and whoever took the snapshot; NTP-synced hosts stay well inside it.
VERDICT_SKEW_MARGIN = timedelta(seconds=2)

HEALTHY = "healthy"
EXPIRED = "expired"
NO_HOLDER = "no-holder"

ERROR = "error"
WARNING = "warning"

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})"
)
_UUID_TAIL = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


# --- durations ------------------------------------------------------------------------------------


def parse_go_duration_ns(text: Any) -> int:
    """Nanoseconds in a Go duration string (time.ParseDuration). Raises ValueError."""
    return goduration.parse_ns(text)


def parse_go_duration(text: Any) -> timedelta:
    """``parse_go_duration_ns`` as a timedelta; anything below a microsecond is truncated."""
    ns = parse_go_duration_ns(text)
    micros = abs(ns) // 1000
    return timedelta(microseconds=-micros if ns < 0 else micros)


def duration_ns(value: timedelta) -> int:
    """Exact nanoseconds in a timedelta (integer arithmetic, no float rounding)."""
    return ((value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds) * 1000


def format_go_duration(value: timedelta) -> str:
    """A timedelta written as Go's ``Duration.String`` does: "15s", "1m30s", "2h0m0s", "500ms"."""
    return goduration.format_ns(duration_ns(value))


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


# --- times ----------------------------------------------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp (metav1.Time / MicroTime) as an aware UTC datetime; None if absent.

    Accepts "2024-05-14T09:29:58.123456Z", offsets such as "+02:00", fractions of any length
    (digits past microseconds are truncated) and datetime objects (naive ones are taken as UTC,
    which is what YAML loaders produce for unquoted timestamps). Raises ValueError.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return ensure_utc(value)
    if not isinstance(value, str):
        raise ValueError(f"invalid timestamp {value!r}")
    m = _RFC3339.fullmatch(value.strip())
    if not m:
        raise ValueError(f"invalid timestamp {value!r}: want RFC 3339 such as 2024-05-14T09:29:58.123456Z")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micros = int((m.group(7) or "0")[:6].ljust(6, "0"))
    zone = m.group(8)
    if zone in ("Z", "z"):
        tz = timezone.utc
    else:
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        tz = timezone(-offset if zone[0] == "-" else offset)
    try:
        return datetime(year, month, day, hour, minute, second, micros, tzinfo=tz).astimezone(timezone.utc)
    except ValueError as exc:
        raise ValueError(f"invalid timestamp {value!r}: {exc}") from None


def ensure_utc(value: datetime) -> datetime:
    """An aware UTC datetime; a naive one is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def format_time(value: datetime | None) -> str | None:
    """RFC 3339 with microseconds and "Z", the way the API server writes MicroTime."""
    if value is None:
        return None
    return ensure_utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- the Lease --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaseRecord:
    """A ``coordination.k8s.io/v1`` Lease, reduced to client-go's LeaderElectionRecord.

    ``holder_identity`` is None when absent (a lease nobody ever acquired) and "" after a holder
    released it; both mean no holder. Times are aware UTC datetimes.
    """

    namespace: str
    name: str
    holder_identity: str | None = None
    acquire_time: datetime | None = None
    renew_time: datetime | None = None
    lease_duration_seconds: int | None = None
    lease_transitions: int | None = None
    preferred_holder: str | None = None
    strategy: str | None = None

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> "LeaseRecord":
        """Parse a Lease dict. Raises ValueError naming the lease and the field."""
        if not isinstance(obj, Mapping):
            raise ValueError(f"a Lease must be a mapping, got {type(obj).__name__}")
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        name = str(meta.get("name") or "")
        spec = obj.get("spec") or {}
        where = f"Lease {namespace}/{name}"

        def text(key: str) -> str | None:
            value = spec.get(key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{where}: spec.{key} must be a string, got {value!r}")
            return value

        def integer(key: str) -> int | None:
            value = spec.get(key)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{where}: spec.{key} must be an integer, got {value!r}")
            return value

        def when(key: str) -> datetime | None:
            try:
                return parse_time(spec.get(key))
            except ValueError as exc:
                raise ValueError(f"{where}: spec.{key}: {exc}") from None

        return cls(
            namespace=namespace,
            name=name,
            holder_identity=text("holderIdentity"),
            acquire_time=when("acquireTime"),
            renew_time=when("renewTime"),
            lease_duration_seconds=integer("leaseDurationSeconds"),
            lease_transitions=integer("leaseTransitions"),
            preferred_holder=text("preferredHolder"),
            strategy=text("strategy"),
        )

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def has_holder(self) -> bool:
        return bool(self.holder_identity)

    @property
    def holder_host(self) -> str | None:
        """The host in a kube-scheduler identity ("<hostname>_<uuid>"), else the whole identity."""
        if not self.holder_identity:
            return None
        host, sep, tail = self.holder_identity.rpartition("_")
        if sep and host and _UUID_TAIL.fullmatch(tail):
            return host
        return self.holder_identity

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "holderIdentity": self.holder_identity,
            "holderHost": self.holder_host,
            "acquireTime": format_time(self.acquire_time),
            "renewTime": format_time(self.renew_time),
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
            "preferredHolder": self.preferred_holder,
            "strategy": self.strategy,
        }


def iter_objects(objects: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    """The objects in a single object, a ``kind: List`` (or ``*List``), or an iterable of either."""
    if isinstance(objects, Mapping):
        items = objects.get("items")
        if str(objects.get("kind") or "").endswith("List") and isinstance(items, list):
            for item in items:
                yield from iter_objects(item)
        else:
            yield objects
        return
    for obj in objects:
        yield from iter_objects(obj)


def scheduler_lease_keys(configs: Iterable["LeaderElectionSettings | Mapping[str, Any]"] = ()) -> set[str]:
    """"namespace/name" of the leases scheduler configs lock: the default plus each config's own."""
    keys = {f"{DEFAULT_LEASE_NAMESPACE}/{DEFAULT_LEASE_NAME}"}
    for config in configs:
        settings = config if isinstance(config, LeaderElectionSettings) else LeaderElectionSettings.from_config(config)
        keys.add(settings.lease_key)
    return keys


def is_scheduler_lease(
    lease: LeaseRecord, configs: Iterable["LeaderElectionSettings | Mapping[str, Any]"] = ()
) -> bool:
    """A lease some scheduler elects its leader with.

    kube-system/kube-scheduler, any lease named by a given config's leaderElection
    resourceNamespace/resourceName, and, as a heuristic for second schedulers deployed with their
    own lock, any other kube-system lease whose name contains "scheduler".
    """
    if lease.key in scheduler_lease_keys(configs):
        return True
    return lease.namespace == DEFAULT_LEASE_NAMESPACE and "scheduler" in lease.name


def select_scheduler_leases(
    objects: Mapping[str, Any] | Iterable[Mapping[str, Any]],
    configs: Iterable["LeaderElectionSettings | Mapping[str, Any]"] = (),
) -> list[LeaseRecord]:
    """The scheduler leases among ``objects`` (other kinds are ignored), sorted by namespace/name."""
    configs = list(configs)
    leases = []
    for obj in iter_objects(objects):
        if obj.get("kind") != "Lease":
            continue
        lease = LeaseRecord.from_object(obj)
        if is_scheduler_lease(lease, configs):
            leases.append(lease)
    return sorted(leases, key=lambda lease: (lease.namespace, lease.name))


def find_lease(leases: Iterable[LeaseRecord], namespace: str, name: str) -> LeaseRecord | None:
    for lease in leases:
        if lease.namespace == namespace and lease.name == name:
            return lease
    return None


def scheduler_names(config: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The schedulerNames a KubeSchedulerConfiguration serves (its profiles), defaulted as v1 does.

    No profiles means one "default-scheduler" profile; a lone profile without a schedulerName is
    "default-scheduler". Unnamed profiles among several are invalid and are left out.
    """
    profiles = (config or {}).get("profiles") or []
    if not profiles:
        return (DEFAULT_SCHEDULER_NAME,)
    if len(profiles) == 1 and not (profiles[0] or {}).get("schedulerName"):
        return (DEFAULT_SCHEDULER_NAME,)
    return tuple(str(p["schedulerName"]) for p in profiles if (p or {}).get("schedulerName"))


# --- settings ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SettingsIssue:
    """One finding about leader-election settings.

    ``severity`` is "error" (kube-scheduler refuses to start) or "warning" (it starts, but
    failover misbehaves); ``source`` names the Go code or the reasoning the rule comes from.
    """

    severity: str
    field: str
    message: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"severity": self.severity, "field": self.field, "message": self.message, "source": self.source}


_SRC_COMPONENT_BASE = "component-base ValidateLeaderElectionConfiguration"
_SRC_SCHEDULER = "kube-scheduler ValidateKubeSchedulerConfiguration"
_SRC_CLIENT_GO = "client-go leaderelection.NewLeaderElector (kube-scheduler exits at startup)"
_SRC_KWHATIF = "kwhatif"


@dataclass(frozen=True)
class LeaderElectionSettings:
    """A scheduler's ``leaderElection`` settings after v1 defaulting.

    ``defaulted`` lists the fields that came from defaults (absent, or a zero duration: Go
    defaulting replaces a zero metav1.Duration, so "0s" means the default, not zero).
    ``scheduler_names`` are the config's profiles, i.e. the pods this lease's holder schedules.
    """

    leader_elect: bool = True
    lease_duration: timedelta = DEFAULT_LEASE_DURATION
    renew_deadline: timedelta = DEFAULT_RENEW_DEADLINE
    retry_period: timedelta = DEFAULT_RETRY_PERIOD
    resource_lock: str = DEFAULT_RESOURCE_LOCK
    resource_namespace: str = DEFAULT_LEASE_NAMESPACE
    resource_name: str = DEFAULT_LEASE_NAME
    scheduler_names: tuple[str, ...] = (DEFAULT_SCHEDULER_NAME,)
    defaulted: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None) -> "LeaderElectionSettings":
        """Settings from a KubeSchedulerConfiguration dict (None: all defaults). Raises ValueError."""
        if config is None:
            config = {}
        if not isinstance(config, Mapping):
            raise ValueError("scheduler config must be a mapping")
        section = config.get("leaderElection") or {}
        if not isinstance(section, Mapping):
            raise ValueError("leaderElection must be a mapping")
        defaulted: list[str] = []

        def duration(key: str, default: timedelta) -> timedelta:
            raw = section.get(key)
            if raw is None:
                defaulted.append(key)
                return default
            try:
                value = parse_go_duration(raw)
            except ValueError as exc:
                raise ValueError(f"leaderElection.{key}: {exc}") from None
            if duration_ns(value) == 0:
                defaulted.append(key)
                return default
            return value

        def text(key: str, default: str) -> str:
            raw = section.get(key)
            if raw is None or raw == "":
                defaulted.append(key)
                return default
            if not isinstance(raw, str):
                raise ValueError(f"leaderElection.{key} must be a string, got {raw!r}")
            return raw

        leader_elect = section.get("leaderElect")
        if leader_elect is None:
            defaulted.append("leaderElect")
            leader_elect = True
        elif not isinstance(leader_elect, bool):
            raise ValueError(f"leaderElection.leaderElect must be true or false, got {leader_elect!r}")
        return cls(
            leader_elect=leader_elect,
            lease_duration=duration("leaseDuration", DEFAULT_LEASE_DURATION),
            renew_deadline=duration("renewDeadline", DEFAULT_RENEW_DEADLINE),
            retry_period=duration("retryPeriod", DEFAULT_RETRY_PERIOD),
            resource_lock=text("resourceLock", DEFAULT_RESOURCE_LOCK),
            resource_namespace=text("resourceNamespace", DEFAULT_LEASE_NAMESPACE),
            resource_name=text("resourceName", DEFAULT_LEASE_NAME),
            scheduler_names=scheduler_names(config),
            defaulted=tuple(defaulted),
        )

    @property
    def lease_key(self) -> str:
        return f"{self.resource_namespace}/{self.resource_name}"

    @property
    def record_lease_duration_seconds(self) -> int:
        """leaseDurationSeconds a leader with these settings writes: ``int(leaseDuration / 1s)``."""
        ns = duration_ns(self.lease_duration)
        return ns // 1_000_000_000 if ns >= 0 else -(-ns // 1_000_000_000)  # Go truncates toward zero

    @property
    def standby_poll_max(self) -> timedelta:
        """Longest gap between a standby's polls: retryPeriod * (1 + JitterFactor)."""
        return self.retry_period + _times(self.retry_period, JITTER_FACTOR)

    def validate(self) -> list[SettingsIssue]:
        """Errors kube-scheduler v1.34 would reject, then warnings. Empty when all is well.

        Errors: component-base ValidateLeaderElectionConfiguration (each duration > 0,
        leaseDuration > renewDeadline, lock namespace/name set), kube-scheduler's own rule
        (resourceLock must be "leases"), and the check client-go's NewLeaderElector makes when
        kube-scheduler starts (renewDeadline > JitterFactor * retryPeriod, computed like Go:
        ``time.Duration(1.2 * float64(retryPeriod))``). That last one is stricter than the
        commonly quoted "retryPeriod < renewDeadline". All are skipped when leaderElect is false,
        as kube-scheduler skips them.

        Warnings (kwhatif's judgement): a lease shorter than MIN_SAFE_LEASE_DURATION (5s); a lease
        duration that is not whole seconds (the record truncates it, and v0.34 standbys use the
        record's value); and retryPeriod + renewDeadline beyond the effective lease duration, where
        a leader that cannot renew still acts after a standby may have taken over.
        """
        if not self.leader_elect:
            return [SettingsIssue(
                WARNING, "leaderElection.leaderElect",
                "leader election is disabled: every replica schedules on its own and nothing renews "
                "the lease, so run exactly one replica",
                _SRC_KWHATIF)]
        issues = self._rejected()
        if duration_ns(self.lease_duration) > 0:
            issues += self._risky()
        return _errors_first(issues)

    def _rejected(self) -> list[SettingsIssue]:
        """The errors of validate(): settings kube-scheduler v1.34 refuses to start with."""
        issues: list[SettingsIssue] = []

        def reject(key: str, message: str, source: str = _SRC_COMPONENT_BASE) -> None:
            issues.append(SettingsIssue(ERROR, f"leaderElection.{key}", message, source))

        lease, renew, retry = (duration_ns(d) for d in (self.lease_duration, self.renew_deadline, self.retry_period))
        for key, value in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
            if value <= 0:
                reject(key, f"must be greater than zero, got {format_go_duration(getattr(self, _ATTR[key]))}")
        if lease <= renew:
            reject("leaseDuration", f"must be greater than renewDeadline: leaseDuration "
                   f"{format_go_duration(self.lease_duration)}, renewDeadline {format_go_duration(self.renew_deadline)}")
        for key, value in (("resourceLock", self.resource_lock), ("resourceNamespace", self.resource_namespace),
                           ("resourceName", self.resource_name)):
            if not value:
                reject(key, "is required")
        if self.resource_lock and self.resource_lock != DEFAULT_RESOURCE_LOCK:
            reject("resourceLock", f'must be "leases", got {self.resource_lock!r}', _SRC_SCHEDULER)
        if renew > 0 and retry > 0:
            limit = int(JITTER_FACTOR * float(retry))  # Go: time.Duration(JitterFactor * float64(retryPeriod))
            if renew <= limit:
                reject("renewDeadline",
                       f"must be greater than retryPeriod * JitterFactor = {format_go_duration(self.retry_period)} "
                       f"* {JITTER_FACTOR} = {format_go_duration(timedelta(microseconds=limit // 1000))}, "
                       f"got {format_go_duration(self.renew_deadline)}", _SRC_CLIENT_GO)
        return issues

    def _risky(self) -> list[SettingsIssue]:
        """The warnings of validate() (kwhatif's judgement), for a positive leaseDuration."""
        issues: list[SettingsIssue] = []

        def warn(key: str, message: str) -> None:
            issues.append(SettingsIssue(WARNING, f"leaderElection.{key}", message, _SRC_KWHATIF))

        lease, renew, retry = (duration_ns(d) for d in (self.lease_duration, self.renew_deadline, self.retry_period))
        if self.lease_duration < MIN_SAFE_LEASE_DURATION:
            warn("leaseDuration",
                 f"{format_go_duration(self.lease_duration)} is shorter than "
                 f"{format_go_duration(MIN_SAFE_LEASE_DURATION)}: an API-server latency spike or a pause "
                 "of that length makes standbys take over from a live leader, and every lost lease "
                 "restarts kube-scheduler")
        recorded = self.record_lease_duration_seconds
        if lease % 1_000_000_000:
            consequence = (
                "standbys treat the lease as expired at once and take it on their next poll, so "
                "leadership changes hands every few seconds"
                if recorded == 0 else
                f"standbys wait {recorded}s, not {format_go_duration(self.lease_duration)}")
            warn("leaseDuration", f"{format_go_duration(self.lease_duration)} is written to the lease as "
                 f"leaseDurationSeconds: {recorded} (whole seconds) and {consequence}")
        effective = max(timedelta(seconds=recorded), self.retry_period)
        gives_up = self.retry_period + self.renew_deadline
        if 0 < renew < lease and retry > 0 and gives_up > effective:
            warn("renewDeadline",
                 f"a leader that cannot renew keeps scheduling until retryPeriod + renewDeadline = "
                 f"{format_go_duration(gives_up)} after its last renewal, but a standby may take over "
                 f"{format_go_duration(effective)} after it: two schedulers may act at once for up to "
                 f"{format_go_duration(gives_up - effective)}")
        return issues

    def errors(self) -> list[SettingsIssue]:
        return [i for i in self.validate() if i.severity == ERROR]

    def warnings(self) -> list[SettingsIssue]:
        return [i for i in self.validate() if i.severity == WARNING]

    def to_dict(self) -> dict[str, Any]:
        return {
            "leaderElect": self.leader_elect,
            "leaseDuration": format_go_duration(self.lease_duration),
            "leaseDurationSeconds": _seconds(self.lease_duration),
            "renewDeadline": format_go_duration(self.renew_deadline),
            "renewDeadlineSeconds": _seconds(self.renew_deadline),
            "retryPeriod": format_go_duration(self.retry_period),
            "retryPeriodSeconds": _seconds(self.retry_period),
            "resourceLock": self.resource_lock,
            "resourceNamespace": self.resource_namespace,
            "resourceName": self.resource_name,
            "schedulerNames": list(self.scheduler_names),
            "defaulted": list(self.defaulted),
        }


_ATTR = {"leaseDuration": "lease_duration", "renewDeadline": "renew_deadline", "retryPeriod": "retry_period"}


def _errors_first(issues: list[SettingsIssue]) -> list[SettingsIssue]:
    return sorted(issues, key=lambda i: i.severity != ERROR)


def _times(value: timedelta, factor: float) -> timedelta:
    """value * factor truncated to whole nanoseconds, then to microseconds (Go-like, float-exact)."""
    ns = int(factor * float(duration_ns(value)))
    return timedelta(microseconds=ns // 1000)


# --- failover what-if ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailoverScenario:
    """One way the leader goes away, as offsets from ``t0`` (and instants when t0 is known).

    leader_stops: when the old leader stops scheduling.
    takeover_earliest / takeover_latest: the window in which the first standby becomes leader
        and scheduling resumes (the latest is a supremum under the poll model; it is approached,
        not exceeded).
    pod_wait_min / pod_wait_max: how long a pod created at t0 stays Pending for want of a leader,
        assuming the old leader could no longer bind from t0 on (a crash, or lost API access).
    no_leader_min / no_leader_max: how long nobody schedules (from leader_stops to takeover).
    overlap_max: how long the old and the new leader may both act (0 when impossible).
    bounds: each bound spelled out with its arithmetic, for humans.
    """

    name: str
    summary: str
    t0_meaning: str
    leader_stops: timedelta
    takeover_earliest: timedelta
    takeover_latest: timedelta
    pod_wait_min: timedelta
    pod_wait_max: timedelta
    no_leader_min: timedelta
    no_leader_max: timedelta
    overlap_max: timedelta
    bounds: tuple[str, ...]
    t0: datetime | None = None

    def at(self, offset: timedelta) -> datetime | None:
        return None if self.t0 is None else self.t0 + offset

    @property
    def takeover_earliest_at(self) -> datetime | None:
        return self.at(self.takeover_earliest)

    @property
    def takeover_latest_at(self) -> datetime | None:
        return self.at(self.takeover_latest)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "summary": self.summary,
            "t0": format_time(self.t0),
            "t0Meaning": self.t0_meaning,
            "leaderStopsSeconds": _seconds(self.leader_stops),
            "takeoverEarliestSeconds": _seconds(self.takeover_earliest),
            "takeoverLatestSeconds": _seconds(self.takeover_latest),
            "takeoverEarliestAt": format_time(self.takeover_earliest_at),
            "takeoverLatestAt": format_time(self.takeover_latest_at),
            "podWaitMinSeconds": _seconds(self.pod_wait_min),
            "podWaitMaxSeconds": _seconds(self.pod_wait_max),
            "noLeaderMinSeconds": _seconds(self.no_leader_min),
            "noLeaderMaxSeconds": _seconds(self.no_leader_max),
            "overlapMaxSeconds": _seconds(self.overlap_max),
            "bounds": list(self.bounds),
        }


@dataclass(frozen=True)
class FailoverReport:
    """The three failover scenarios for one set of settings (and optionally one lease)."""

    settings: LeaderElectionSettings
    lease_duration_seconds: int
    lease_duration_source: str
    standby_poll_min: timedelta
    standby_poll_max: timedelta
    crash: FailoverScenario
    renew_failure: FailoverScenario
    release: FailoverScenario
    notes: tuple[str, ...] = ()

    @property
    def scenarios(self) -> tuple[FailoverScenario, ...]:
        return (self.crash, self.renew_failure, self.release)

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings.to_dict(),
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseDurationSource": self.lease_duration_source,
            "standbyPollMinSeconds": _seconds(self.standby_poll_min),
            "standbyPollMaxSeconds": _seconds(self.standby_poll_max),
            "scenarios": [s.to_dict() for s in self.scenarios],
            "notes": list(self.notes),
        }


def _fmt(value: timedelta) -> str:
    return format_go_duration(value)


def _clip(value: timedelta) -> timedelta:
    return max(value, timedelta(0))


def failover_whatif(
    settings: LeaderElectionSettings | None = None,
    last_renewal: datetime | None = None,
    lease_duration_seconds: int | None = None,
) -> FailoverReport:
    """What if the leader went away right after ``last_renewal`` (t0)?

    L is the lease duration standbys enforce: the record's leaseDurationSeconds when given
    (client-go v0.34 standbys read it from the record), else what a leader with ``settings`` writes
    (leaseDuration truncated to whole seconds). P is retryPeriod, Pmax = P * (1 + 1.2) the longest
    gap between a standby's polls, D is renewDeadline. All replicas are assumed to share
    ``settings``; API round-trips and clock-rate differences are taken as zero.

    crash (the leader dies right after renewing at t0):
        A standby notices that renewal on its first poll after t0, at some O in (t0, t0 + Pmax].
        From O on it refuses the lease until its clock reaches O + L, and takes it on the first
        poll at or after that. Poll gaps lie in [P, Pmax], so after O the polls can land on any
        instant from O + P on: the first poll at or after O + L comes no sooner than
        O + max(L, P) and less than Pmax after O + L.
        earliest = max(L, P)        (the standby happened to poll right at t0 and right at expiry)
        latest   = Pmax + L + Pmax  (it polled just before t0, and again just before expiry)
        Defaults: earliest 15s, latest 4.4 + 15 + 4.4 = 23.8s. More standbys only make the late
        end less likely, not impossible. Pods created at t0 wait exactly that long.

    renew_failure (the leader lives but its renewals fail from t0 on):
        Its renewal loop tries again P after the last success and keeps retrying every P for at
        most D, so it stops leading at t0 + P + D (defaults: 12s); kube-scheduler then exits and
        is restarted with a new identity. Standbys saw no change after t0, so their takeover
        window is the crash window. Nobody schedules from t0 + P + D until the takeover:
        [max(L, P) - (P + D), latest - (P + D)], clipped at 0 (defaults 3s to 11.8s). If P + D
        exceeds max(L, P), the old leader may still act after a standby took over, for up to the
        difference (overlap_max). Pods created at t0 wait as in a crash if the failure is lost
        API access, since the old leader cannot bind them either.

    release (graceful shutdown, e.g. a rolling upgrade; kube-scheduler sets ReleaseOnCancel):
        At t0 the leader stops and writes an empty holderIdentity. A standby takes an unheld lease
        on its next poll without waiting for any expiry: takeover in (0, Pmax] (defaults 4.4s).
        Without a standby a restarted scheduler acquires it at once for the same reason.
    """
    settings = settings or LeaderElectionSettings()
    lease_seconds, source, notes = _enforced_lease_seconds(settings, lease_duration_seconds)
    t0 = None if last_renewal is None else ensure_utc(last_renewal)
    window = _TakeoverWindow.of(settings, lease_seconds)
    return FailoverReport(
        settings=settings,
        lease_duration_seconds=lease_seconds,
        lease_duration_source=source,
        standby_poll_min=window.poll,
        standby_poll_max=window.poll_max,
        crash=_crash(window, t0),
        renew_failure=_renew_failure(window, settings.renew_deadline, t0),
        release=_release(window, t0),
        notes=tuple(notes + _failover_notes(settings, lease_seconds, window)),
    )


def _enforced_lease_seconds(settings: LeaderElectionSettings,
                            lease_duration_seconds: int | None) -> tuple[int, str, list[str]]:
    """L in whole seconds, where it comes from, and a note when the record disagrees with the settings."""
    recorded = settings.record_lease_duration_seconds
    if lease_duration_seconds is None:
        return recorded, "settings", []
    notes = []
    if lease_duration_seconds != recorded:
        notes.append(
            f"the lease records leaseDurationSeconds {lease_duration_seconds}, but a leader with these "
            f"settings writes {recorded}: the holder runs with other settings; standbys follow the record")
    return lease_duration_seconds, "lease record", notes


@dataclass(frozen=True)
class _TakeoverWindow:
    """When a standby takes a lease its leader stopped renewing at t0: L, P and Pmax of
    failover_whatif, and the crash window [max(L, P), Pmax + L + Pmax] after t0."""

    lease: timedelta
    poll: timedelta
    poll_max: timedelta
    earliest: timedelta
    latest: timedelta

    @classmethod
    def of(cls, settings: LeaderElectionSettings, lease_seconds: int) -> "_TakeoverWindow":
        lease = timedelta(seconds=max(lease_seconds, 0))
        poll, poll_max = settings.retry_period, settings.standby_poll_max
        return cls(lease, poll, poll_max, max(lease, poll), poll_max + lease + poll_max)


def _taken_over_as_after_crash(name: str, summary: str, t0_meaning: str, window: _TakeoverWindow,
                               t0: datetime | None, leader_stops: timedelta, bounds: tuple[str, ...]
                               ) -> FailoverScenario:
    """A scenario in which standbys see no change after t0 and take over in the crash window, while
    the old leader stops ``leader_stops`` after t0: nobody schedules from then until the takeover,
    and both may act if it stops after the earliest takeover."""
    return FailoverScenario(
        name=name,
        summary=summary,
        t0_meaning=t0_meaning,
        leader_stops=leader_stops,
        takeover_earliest=window.earliest,
        takeover_latest=window.latest,
        pod_wait_min=window.earliest,
        pod_wait_max=window.latest,
        no_leader_min=_clip(window.earliest - leader_stops),
        no_leader_max=_clip(window.latest - leader_stops),
        overlap_max=_clip(leader_stops - window.earliest),
        bounds=bounds,
        t0=t0,
    )


def _crash(window: _TakeoverWindow, t0: datetime | None) -> FailoverScenario:
    l_s, p_s, pmax_s = _fmt(window.lease), _fmt(window.poll), _fmt(window.poll_max)
    return _taken_over_as_after_crash(
        "crash", "the leader dies right after its last renewal", "the leader's last renewal", window, t0,
        leader_stops=timedelta(0),
        bounds=(
            f"a standby sees the last renewal on its first poll after t0, 0 to retryPeriod x "
            f"(1 + {JITTER_FACTOR}) = {pmax_s} later",
            f"it takes the lease on its first poll at least leaseDurationSeconds {l_s} after that sighting "
            f"(polls are {p_s} to {pmax_s} apart)",
            f"earliest: max(L {l_s}, retryPeriod {p_s}) = {_fmt(window.earliest)} after t0",
            f"latest: {pmax_s} + {l_s} + {pmax_s} = {_fmt(window.latest)} after t0",
        ),
    )


def _renew_failure(window: _TakeoverWindow, renew_deadline: timedelta, t0: datetime | None) -> FailoverScenario:
    p_s, d_s = _fmt(window.poll), _fmt(renew_deadline)
    earliest, latest = window.earliest, window.latest
    gives_up = window.poll + renew_deadline
    return _taken_over_as_after_crash(
        "renew-failure", "the leader stays up but cannot renew from its last renewal on",
        "the leader's last successful renewal", window, t0,
        leader_stops=gives_up,
        bounds=(
            f"the leader retries {p_s} after its last success, then every {p_s} for renewDeadline {d_s}: "
            f"it stops leading at {p_s} + {d_s} = {_fmt(gives_up)} after t0 and kube-scheduler exits",
            "standbys saw nothing new after t0, so they take over as after a crash: "
            f"{_fmt(earliest)} to {_fmt(latest)} after t0",
            f"nobody schedules from {_fmt(gives_up)} until the takeover: "
            f"{_fmt(_clip(earliest - gives_up))} to {_fmt(_clip(latest - gives_up))}",
            (f"two leaders may act at once for up to {_fmt(gives_up)} - {_fmt(earliest)} = "
             f"{_fmt(gives_up - earliest)}" if gives_up > earliest else
             f"no overlap: the leader gives up {_fmt(earliest - gives_up)} before any standby may take over"),
        ),
    )


def _release(window: _TakeoverWindow, t0: datetime | None) -> FailoverScenario:
    zero = timedelta(0)
    return FailoverScenario(
        name="release",
        summary="the leader shuts down gracefully and releases the lease",
        t0_meaning="the moment the leader writes an empty holderIdentity",
        leader_stops=zero,
        takeover_earliest=zero,
        takeover_latest=window.poll_max,
        pod_wait_min=zero,
        pod_wait_max=window.poll_max,
        no_leader_min=zero,
        no_leader_max=window.poll_max,
        overlap_max=zero,
        bounds=(
            "an unheld lease may be taken at once, without waiting for expiry",
            f"a standby does so on its next poll: 0 to {_fmt(window.poll_max)} after t0",
        ),
        t0=t0,
    )


def _failover_notes(settings: LeaderElectionSettings, lease_seconds: int, window: _TakeoverWindow) -> list[str]:
    notes = []
    if lease_seconds <= 0:
        notes.append("leaseDurationSeconds is 0: standbys consider the lease expired whenever they look, "
                     "so they take it from a live leader on their next poll")
    if not settings.leader_elect:
        notes.append("leader election is disabled in these settings: no failover happens; a replica "
                     "that dies simply stops scheduling")
    notes.append("a candidate that starts fresh (e.g. a restarted scheduler, which gets a new identity) "
                 f"must watch an unchanged, held lease for a full {_fmt(window.lease)} itself before taking it")
    return notes


# --- verdicts ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaseVerdict:
    """How a scheduler lease looks at ``at``.

    status: "healthy" (renewed less than leaseDurationSeconds ago), "expired" (a standby may take
        over now) or "no-holder".
    renew_age: at - renewTime (acquireTime if renewTime is missing); negative when renewTime is
        later than ``at``. None without either timestamp.
    lease_duration: the expiry window applied (the record's leaseDurationSeconds, else the
        settings' leaseDuration).
    expires_at / remaining: renewTime + lease_duration, and how long until then (negative once
        expired).
    held_for: at - acquireTime, how long the current holder has led.
    consequence: one plain sentence or two about what this means for pods.
    """

    lease: LeaseRecord
    at: datetime
    status: str
    renew_age: timedelta | None
    lease_duration: timedelta
    lease_duration_source: str
    expires_at: datetime | None
    remaining: timedelta | None
    held_for: timedelta | None
    scheduler_names: tuple[str, ...]
    consequence: str
    notes: tuple[str, ...]
    failover: FailoverReport

    @property
    def healthy(self) -> bool:
        return self.status == HEALTHY

    def to_dict(self) -> dict[str, Any]:
        return {
            "lease": self.lease.to_dict(),
            "at": format_time(self.at),
            "status": self.status,
            "renewAgeSeconds": _seconds(self.renew_age),
            "leaseDurationSeconds": _seconds(self.lease_duration),
            "leaseDurationSource": self.lease_duration_source,
            "expiresAt": format_time(self.expires_at),
            "remainingSeconds": _seconds(self.remaining),
            "heldForSeconds": _seconds(self.held_for),
            "schedulerNames": list(self.scheduler_names),
            "consequence": self.consequence,
            "notes": list(self.notes),
            "failover": self.failover.to_dict(),
        }


def _names_phrase(names: Sequence[str], lease: LeaseRecord) -> str:
    if names:
        return "pods with schedulerName " + ", ".join(names)
    return f"pods of the scheduler that locks {lease.key}"


def _human(value: timedelta) -> str:
    """A duration for sentences: Go style, rounded to the millisecond (to the second past a minute);
    past two days as kubectl prints ages (``922d``, not ``22147h52m20s``)."""
    if abs(value) >= timedelta(days=2):
        return goduration.human_duration(abs(value).total_seconds())
    ns = abs(duration_ns(value))
    unit = 1_000_000_000 if ns >= 60_000_000_000 else 1_000_000
    ns = (ns + unit // 2) // unit * unit
    return format_go_duration(timedelta(microseconds=ns // 1000))


def assess(
    lease: LeaseRecord,
    now: datetime,
    settings: LeaderElectionSettings | None = None,
    scheduler_names: Sequence[str] | None = None,
) -> LeaseVerdict:
    """Judge ``lease`` at ``now`` (a snapshot's capture time or ``--at``; naive means UTC).

    Healthy means renewTime + leaseDurationSeconds is still after ``now``, the same strict test
    client-go applies to its own observation time. ``now`` comes from another clock than
    renewTime (the leader's), so a verdict within VERDICT_SKEW_MARGIN of expiry is flagged.
    The schedulerNames named are ``scheduler_names`` if given, else the settings' profiles when
    the lease is the one the settings lock, else "default-scheduler" for kube-system/kube-scheduler.
    """
    settings = settings or LeaderElectionSettings()
    now = ensure_utc(now)
    names = _lease_scheduler_names(lease, settings, scheduler_names)
    if lease.lease_duration_seconds is not None:
        window, window_source = timedelta(seconds=lease.lease_duration_seconds), "lease record"
    else:
        window, window_source = settings.lease_duration, "settings"
    notes: list[str] = []
    renewed = lease.renew_time
    if renewed is None and lease.acquire_time is not None:
        renewed = lease.acquire_time
        notes.append("no renewTime recorded; using acquireTime")
    seen = _Observation(
        lease=lease, now=now, settings=settings, pods=_names_phrase(names, lease), window=window,
        window_source=window_source,
        age=None if renewed is None else now - renewed,
        remaining=None if renewed is None else renewed + window - now,
        failover=failover_whatif(settings, lease.renew_time or lease.acquire_time, lease.lease_duration_seconds),
    )
    if not lease.has_holder:
        status, consequence = NO_HOLDER, _unheld(seen, notes)
    elif renewed is None or seen.remaining <= timedelta(0):
        status, consequence = EXPIRED, _expired(seen, notes)
    else:
        status, consequence = HEALTHY, _healthy(seen, notes)
    held_for = None if lease.acquire_time is None or not lease.has_holder else now - lease.acquire_time
    notes += _lease_notes(seen, held_for)
    return LeaseVerdict(
        lease=lease,
        at=now,
        status=status,
        renew_age=seen.age,
        lease_duration=window,
        lease_duration_source=window_source,
        expires_at=None if renewed is None else renewed + window,
        remaining=seen.remaining,
        held_for=held_for,
        scheduler_names=names,
        consequence=consequence,
        notes=tuple(notes),
        failover=seen.failover,
    )


def _lease_scheduler_names(lease: LeaseRecord, settings: LeaderElectionSettings,
                           scheduler_names: Sequence[str] | None) -> tuple[str, ...]:
    """The schedulerNames whose pods the lease's holder schedules (see assess)."""
    if scheduler_names is not None:
        return tuple(scheduler_names)
    if lease.key == settings.lease_key:
        return settings.scheduler_names
    if lease.key == f"{DEFAULT_LEASE_NAMESPACE}/{DEFAULT_LEASE_NAME}":
        return (DEFAULT_SCHEDULER_NAME,)
    return ()


@dataclass(frozen=True)
class _Observation:
    """What assess saw of a lease at ``now``: ``age`` since the last renewal (or acquisition) and the
    ``remaining`` time before expiry, None without either timestamp."""

    lease: LeaseRecord
    now: datetime
    settings: LeaderElectionSettings
    pods: str
    window: timedelta
    window_source: str
    age: timedelta | None
    remaining: timedelta | None
    failover: FailoverReport

    @property
    def stalled(self) -> str:
        return f"{self.pods[0].upper()}{self.pods[1:]} are not being scheduled while no leader is active."


def _unheld(seen: _Observation, notes: list[str]) -> str:
    """The consequence of a lease nobody holds; adds its notes to ``notes``."""
    lease, age, poll_max = seen.lease, seen.age, seen.settings.standby_poll_max
    if age is not None:
        consequence = (f"No scheduler holds {lease.key}: the last leader released it {_human(age)} ago "
                       f"(a graceful shutdown). A running standby takes an unheld lease on its next poll, "
                       f"within {_human(poll_max)}. {seen.stalled}")
        if age > poll_max:
            notes.append(f"released {_human(age)} ago and still unheld after the {_human(poll_max)} a standby "
                         "needs: no candidate with leader election is running for this lease")
    else:
        consequence = (f"No scheduler has ever held {lease.key}. {seen.stalled}")
    notes.append("a scheduler running with leaderElect: false schedules without touching this lease")
    return consequence


def _expired(seen: _Observation, notes: list[str]) -> str:
    """The consequence of a held lease that is expired or shows no renewal; adds its notes to ``notes``."""
    lease, age, remaining, window = seen.lease, seen.age, seen.remaining, seen.window
    if age is None:
        return (f"{lease.holder_identity} holds {lease.key} but no renewal time is recorded, so nothing "
                f"shows it is alive; a standby may take over. {seen.stalled}")
    window_text = (f"leaseDurationSeconds {lease.lease_duration_seconds}" if seen.window_source == "lease record"
                   else f"leaseDuration {_human(window)}")
    consequence = (f"The lease expired {_human(-remaining)} ago: {lease.holder_identity} last renewed "
                   f"{_human(age)} ago with {window_text}. A standby may take over now. {seen.stalled}")
    worst = seen.failover.crash.takeover_latest
    if age > worst:
        notes.append(f"no standby took over within the worst case of {_human(worst)} after the last renewal: "
                     "no other candidate is running, or none can write the lease. A candidate that starts "
                     f"now must still watch the record for {_human(window)} before it takes over")
    notes.append("a scheduler running with leaderElect: false schedules without renewing this lease, "
                 "so a stale lease can be a leftover rather than an outage")
    return consequence


def _healthy(seen: _Observation, notes: list[str]) -> str:
    """The consequence of a lease renewed in time; adds its notes to ``notes``."""
    lease, age, settings = seen.lease, seen.age, seen.settings
    if age < timedelta(0):
        notes.append(f"renewTime is {_human(-age)} after the evaluation time: the leader's clock runs ahead of "
                     "the capture host, or --at is earlier than the capture")
    elif age > settings.retry_period + settings.renew_deadline:
        notes.append(f"the last renewal is {_human(age)} old; a leader with these settings gives up after "
                     f"retryPeriod + renewDeadline = {_human(settings.retry_period + settings.renew_deadline)} "
                     "without renewing, so this one is failing to renew or runs other settings")
    elif age > 2 * settings.retry_period:
        notes.append(f"renewal overdue: a live leader renews every {_human(settings.retry_period)}, the last "
                     f"renewal is {_human(age)} old")
    return (f"{lease.holder_identity} leads and renewed {_human(age)} ago; the lease holds for "
            f"{_human(seen.remaining)} more without a renewal. {seen.pods[0].upper()}{seen.pods[1:]} are being "
            "scheduled.")


def _lease_notes(seen: _Observation, held_for: timedelta | None) -> list[str]:
    """Notes on any lease: a verdict near expiry, a recent change of leader, a preferred holder."""
    lease, remaining = seen.lease, seen.remaining
    notes = []
    if remaining is not None and lease.has_holder and abs(remaining) < VERDICT_SKEW_MARGIN:
        notes.append(f"within {_human(VERDICT_SKEW_MARGIN)} of expiry: clock differences between the leader and "
                     "the capture host can flip this verdict")
    if lease.has_holder and lease.lease_transitions and held_for is not None and timedelta(0) <= held_for < timedelta(minutes=10):
        notes.append(f"leadership changed hands {_human(held_for)} ago (transition {lease.lease_transitions}): "
                     "a recent failover or rolling upgrade")
    if lease.preferred_holder:
        notes.append(f"coordinated leader election prefers {lease.preferred_holder}; kwhatif models only the "
                     "classic election")
    return notes


def scheduling_warning(
    leases: Iterable[LeaseRecord],
    now: datetime,
    settings: LeaderElectionSettings | None = None,
    scheduler_name: str = DEFAULT_SCHEDULER_NAME,
) -> str | None:
    """A one-line warning for ``place`` when the lease of the scheduler serving ``scheduler_name``
    is missing, expired or unheld at ``now``; None when it is healthy or leader election is off."""
    settings = settings or LeaderElectionSettings()
    if not settings.leader_elect:
        return None
    lease = find_lease(leases, settings.resource_namespace, settings.resource_name)
    if lease is None:
        return (f"no lease {settings.lease_key}: no scheduler with leader election has run against this "
                f"cluster, so pods with schedulerName {scheduler_name} may not be scheduled at all")
    verdict = assess(lease, now, settings, scheduler_names=(scheduler_name,))
    if verdict.healthy:
        return None
    return f"scheduler lease {lease.key} is {verdict.status}: {verdict.consequence}"


__all__ = [
    "DEFAULT_LEASE_NAME", "DEFAULT_LEASE_NAMESPACE", "DEFAULT_SCHEDULER_NAME", "EXPIRED", "HEALTHY",
    "JITTER_FACTOR", "MIN_SAFE_LEASE_DURATION", "NO_HOLDER", "FailoverReport", "FailoverScenario",
    "LeaderElectionSettings", "LeaseRecord", "LeaseVerdict", "SettingsIssue", "assess", "duration_ns",
    "failover_whatif", "find_lease", "format_go_duration", "format_time", "is_scheduler_lease",
    "iter_objects", "parse_go_duration", "parse_go_duration_ns", "parse_time", "scheduler_lease_keys",
    "scheduler_names", "scheduling_warning", "select_scheduler_leases",
]
