"""kwhatif.leader: lease verdicts, leader-election settings and failover what-if arithmetic.

Arithmetic in the comments uses L = leaseDurationSeconds standbys enforce, P = retryPeriod,
Pmax = P * (1 + 1.2) (client-go JitterFactor), D = renewDeadline:
    crash / renew-failure takeover in [max(L, P), Pmax + L + Pmax]; the failing leader gives up at
    P + D; release takeover in [0, Pmax].
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from kwhatif.leader import (
    ERROR,
    EXPIRED,
    HEALTHY,
    NO_HOLDER,
    WARNING,
    LeaderElectionSettings,
    LeaseRecord,
    assess,
    failover_whatif,
    format_go_duration,
    parse_go_duration,
    parse_go_duration_ns,
    parse_time,
    scheduler_names,
    scheduling_warning,
    select_scheduler_leases,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "leases"
UTC = timezone.utc
CAPTURE = datetime(2024, 5, 14, 9, 30, 0, tzinfo=UTC)
IDENTITY = "cp-1_8f3b1c2e-5d6a-4f7b-9c0d-1e2f3a4b5c6d"


def s(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def make_lease(name: str = "kube-scheduler", namespace: str = "kube-system", **spec) -> dict:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {k: v for k, v in spec.items() if v is not None},
    }


def settings(**leader_election) -> LeaderElectionSettings:
    return LeaderElectionSettings.from_config({"leaderElection": leader_election})


# --- durations ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, want",
    [
        ("15s", s(15)),
        ("1m30s", s(90)),
        ("500ms", s(0.5)),
        ("1.5h", s(5400)),        # 1.5 * 3600
        ("2h45m", s(9900)),       # 7200 + 2700
        ("1h0m0s", s(3600)),      # Go's own String() form round-trips
        ("10s500ms", s(10.5)),
        ("3m0.25s", s(180.25)),
        ("0", s(0)),              # the only unitless number Go accepts
        ("-1.5s", s(-1.5)),
        ("+3s", s(3)),
        (".5s", s(0.5)),          # Go allows a missing integer part ...
        ("5.s", s(5)),            # ... or a missing fraction, not both
        ("1us", timedelta(microseconds=1)),
        ("1\u00b5s", timedelta(microseconds=1)),  # micro sign
        ("1\u03bcs", timedelta(microseconds=1)),  # Greek mu
        ("1500ns", timedelta(microseconds=1)),    # 1.5us, timedelta keeps whole microseconds
        ("0.000001s", timedelta(microseconds=1)),
    ],
)
def test_parse_go_duration(text, want):
    assert parse_go_duration(text) == want


@pytest.mark.parametrize(
    "text, want_ns",
    [
        ("1500ns", 1500),
        ("1.5us", 1500),
        ("2.4s", 2_400_000_000),
        ("2562047h47m16.854775807s", 2**63 - 1),  # math.MaxInt64 nanoseconds, Go's largest Duration
    ],
)
def test_parse_go_duration_ns(text, want_ns):
    assert parse_go_duration_ns(text) == want_ns


@pytest.mark.parametrize(
    "text",
    ["", "15", "s", "1x", "1.2.3s", "--1s", "-", " 15s", "15s ", "1m 30s", ".s", "1d",
     "2562047h47m16.854775808s",  # one nanosecond past MaxInt64
     15, 1.5, None],
)
def test_parse_go_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_go_duration(text)


@pytest.mark.parametrize(
    "value, want",
    [
        (s(15), "15s"),
        (s(90), "1m30s"),
        (s(7200), "2h0m0s"),
        (s(3661.5), "1h1m1.5s"),
        (s(4.4), "4.4s"),
        (s(0.5), "500ms"),
        (timedelta(microseconds=1500), "1.5ms"),
        (timedelta(microseconds=1), "1\u00b5s"),
        (s(0), "0s"),
        (s(-2), "-2s"),
    ],
)
def test_format_go_duration(value, want):
    assert format_go_duration(value) == want


# --- timestamps -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, want",
    [
        ("2024-05-14T09:29:58.412907Z", datetime(2024, 5, 14, 9, 29, 58, 412907, tzinfo=UTC)),
        ("2024-05-14T09:29:58Z", datetime(2024, 5, 14, 9, 29, 58, tzinfo=UTC)),
        ("2024-05-14T11:29:58.5+02:00", datetime(2024, 5, 14, 9, 29, 58, 500000, tzinfo=UTC)),
        ("2024-05-14T09:29:58.123456789Z", datetime(2024, 5, 14, 9, 29, 58, 123456, tzinfo=UTC)),
        (datetime(2024, 5, 14, 9, 29, 58), datetime(2024, 5, 14, 9, 29, 58, tzinfo=UTC)),  # naive = UTC
        (None, None),
        ("", None),
    ],
)
def test_parse_time(value, want):
    assert parse_time(value) == want


@pytest.mark.parametrize("value", ["2024-05-14 09:29", "yesterday", "2024-13-01T00:00:00Z", 12])
def test_parse_time_rejects(value):
    with pytest.raises(ValueError):
        parse_time(value)


# --- lease records ----------------------------------------------------------------------------------


def test_lease_record_from_object():
    lease = LeaseRecord.from_object(make_lease(
        holderIdentity=IDENTITY,
        acquireTime="2024-05-13T22:04:11.305112Z",
        renewTime="2024-05-14T09:29:58.412907Z",
        leaseDurationSeconds=15,
        leaseTransitions=3,
    ))
    assert lease.key == "kube-system/kube-scheduler"
    assert lease.holder_identity == IDENTITY
    assert lease.holder_host == "cp-1"  # kube-scheduler identities are <hostname>_<uuid>
    assert lease.acquire_time == datetime(2024, 5, 13, 22, 4, 11, 305112, tzinfo=UTC)
    assert lease.renew_time == datetime(2024, 5, 14, 9, 29, 58, 412907, tzinfo=UTC)
    assert (lease.lease_duration_seconds, lease.lease_transitions) == (15, 3)
    assert lease.to_dict()["renewTime"] == "2024-05-14T09:29:58.412907Z"


@pytest.mark.parametrize(
    "holder, has_holder, host",
    [
        (IDENTITY, True, "cp-1"),
        ("node_a_8f3b1c2e-5d6a-4f7b-9c0d-1e2f3a4b5c6d", True, "node_a"),
        ("my-custom-id", True, "my-custom-id"),
        ("", False, None),      # released
        (None, False, None),    # never acquired
    ],
)
def test_lease_holder(holder, has_holder, host):
    lease = LeaseRecord.from_object(make_lease(holderIdentity=holder))
    assert (lease.has_holder, lease.holder_host) == (has_holder, host)


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"renewTime": "soon"}, "spec.renewTime"),
        ({"leaseDurationSeconds": "15"}, "spec.leaseDurationSeconds"),
        ({"leaseTransitions": True}, "spec.leaseTransitions"),
        ({"holderIdentity": 7}, "spec.holderIdentity"),
    ],
)
def test_lease_record_rejects(spec, field):
    with pytest.raises(ValueError, match=field):
        LeaseRecord.from_object(make_lease(**spec))


def test_select_scheduler_leases():
    objects = {
        "kind": "List",
        "items": [
            make_lease("kube-scheduler"),
            make_lease("kube-controller-manager"),
            make_lease("my-scheduler"),                        # kube-system + "scheduler" in the name
            make_lease("custom-lock", namespace="team-a"),     # only when a config names it
            make_lease("scheduler-x", namespace="team-b"),     # not kube-system, not configured
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "kube-scheduler-cp-1"}},
        ],
    }
    config = {"leaderElection": {"resourceNamespace": "team-a", "resourceName": "custom-lock"}}
    assert [l.key for l in select_scheduler_leases(objects)] == [
        "kube-system/kube-scheduler", "kube-system/my-scheduler"]
    assert [l.key for l in select_scheduler_leases(objects, [config])] == [
        "kube-system/kube-scheduler", "kube-system/my-scheduler", "team-a/custom-lock"]
    assert [l.key for l in select_scheduler_leases(objects["items"], [LeaderElectionSettings.from_config(config)])] == [
        "kube-system/kube-scheduler", "kube-system/my-scheduler", "team-a/custom-lock"]


@pytest.mark.parametrize(
    "config, want",
    [
        (None, ("default-scheduler",)),
        ({}, ("default-scheduler",)),
        ({"profiles": [{"plugins": {}}]}, ("default-scheduler",)),  # a lone unnamed profile is defaulted
        ({"profiles": [{"schedulerName": "batch"}]}, ("batch",)),
        ({"profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "batch"}]},
         ("default-scheduler", "batch")),
    ],
)
def test_scheduler_names(config, want):
    assert scheduler_names(config) == want


# --- settings ---------------------------------------------------------------------------------------


def test_settings_defaults():
    got = LeaderElectionSettings.from_config(None)
    assert (got.lease_duration, got.renew_deadline, got.retry_period) == (s(15), s(10), s(2))
    assert (got.leader_elect, got.resource_lock, got.lease_key) == (True, "leases", "kube-system/kube-scheduler")
    assert got.record_lease_duration_seconds == 15
    assert got.standby_poll_max == s(4.4)  # 2s + 1.2 * 2s
    assert set(got.defaulted) == {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod",
                                  "resourceLock", "resourceNamespace", "resourceName"}
    assert got.validate() == []


def test_settings_from_config():
    got = LeaderElectionSettings.from_config({
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaseDuration": "1m30s", "renewDeadline": "1m", "retryPeriod": "500ms",
                           "resourceNamespace": "sched", "resourceName": "batch-lock"},
        "profiles": [{"schedulerName": "batch"}],
    })
    assert (got.lease_duration, got.renew_deadline, got.retry_period) == (s(90), s(60), s(0.5))
    assert got.lease_key == "sched/batch-lock"
    assert got.scheduler_names == ("batch",)
    assert got.to_dict()["leaseDuration"] == "1m30s"


def test_settings_zero_duration_means_default():
    # Go defaulting replaces a zero metav1.Duration, so "0s" is 15s rather than an invalid zero.
    got = settings(leaseDuration="0s")
    assert got.lease_duration == s(15)
    assert "leaseDuration" in got.defaulted
    assert got.validate() == []


@pytest.mark.parametrize(
    "section",
    [{"leaseDuration": 15}, {"renewDeadline": "10 s"}, {"leaderElect": "yes"}, {"resourceName": 3}],
)
def test_settings_reject_undecodable(section):
    with pytest.raises(ValueError, match="leaderElection"):
        settings(**section)


@pytest.mark.parametrize(
    "section, want",
    [
        ({}, []),
        # component-base: leaseDuration must exceed renewDeadline (equal is rejected too)
        ({"leaseDuration": "10s", "renewDeadline": "10s"}, [(ERROR, "leaderElection.leaseDuration")]),
        ({"leaseDuration": "15s", "renewDeadline": "20s"}, [(ERROR, "leaderElection.leaseDuration")]),
        # client-go: renewDeadline must exceed time.Duration(1.2 * retryPeriod)
        #   RP 2s: limit 2.4s -> RD 2.4s rejected, RD 2.5s accepted
        ({"retryPeriod": "2s", "renewDeadline": "2.4s"}, [(ERROR, "leaderElection.renewDeadline")]),
        ({"retryPeriod": "2s", "renewDeadline": "2.5s"}, []),
        #   retryPeriod == renewDeadline (the case usually quoted): 5s <= 6s
        ({"retryPeriod": "5s", "renewDeadline": "5s"}, [(ERROR, "leaderElection.renewDeadline")]),
        #   RP 10s: limit 12s -> RD 12s rejected; and P + D = 22s > L 15s may overlap
        ({"retryPeriod": "10s", "renewDeadline": "12s"},
         [(ERROR, "leaderElection.renewDeadline"), (WARNING, "leaderElection.renewDeadline")]),
        # each duration must be > 0; a negative leaseDuration is also <= renewDeadline
        ({"leaseDuration": "-1s"}, [(ERROR, "leaderElection.leaseDuration"), (ERROR, "leaderElection.leaseDuration")]),
        ({"retryPeriod": "-2s"}, [(ERROR, "leaderElection.retryPeriod")]),
        # kube-scheduler: only "leases"
        ({"resourceLock": "endpoints"}, [(ERROR, "leaderElection.resourceLock")]),
        # leaderElect false: kube-scheduler skips all checks
        ({"leaderElect": False, "leaseDuration": "5s", "renewDeadline": "10s"}, [(WARNING, "leaderElection.leaderElect")]),
        # 4s < 5s: flaps on ordinary hiccups. P + D = 4s is not beyond L 4s: no overlap warning
        ({"leaseDuration": "4s", "renewDeadline": "3s", "retryPeriod": "1s"}, [(WARNING, "leaderElection.leaseDuration")]),
        # 15.5s is written as leaseDurationSeconds 15
        ({"leaseDuration": "15.5s"}, [(WARNING, "leaderElection.leaseDuration")]),
        # 800ms: short, written as 0, and P + D = 600ms > max(0, 100ms)
        ({"leaseDuration": "800ms", "renewDeadline": "500ms", "retryPeriod": "100ms"},
         [(WARNING, "leaderElection.leaseDuration"), (WARNING, "leaderElection.leaseDuration"),
          (WARNING, "leaderElection.renewDeadline")]),
        # P + D = 2 + 14 = 16s > L 15s
        ({"renewDeadline": "14s"}, [(WARNING, "leaderElection.renewDeadline")]),
    ],
)
def test_validate(section, want):
    issues = settings(**section).validate()
    assert [(i.severity, i.field) for i in issues] == want


@pytest.mark.parametrize(
    "section, message",
    [
        ({"leaseDuration": "10s", "renewDeadline": "10s"},
         "must be greater than renewDeadline: leaseDuration 10s, renewDeadline 10s"),
        ({"retryPeriod": "10s", "renewDeadline": "12s"},
         "must be greater than retryPeriod * JitterFactor = 10s * 1.2 = 12s, got 12s"),
        ({"resourceLock": "endpoints"}, "must be \"leases\", got 'endpoints'"),
        ({"retryPeriod": "-2s"}, "must be greater than zero, got -2s"),
        ({"leaseDuration": "15.5s"},
         "15.5s is written to the lease as leaseDurationSeconds: 15 (whole seconds) and standbys wait 15s, not 15.5s"),
        ({"renewDeadline": "14s"},
         "a leader that cannot renew keeps scheduling until retryPeriod + renewDeadline = 16s after its last "
         "renewal, but a standby may take over 15s after it: two schedulers may act at once for up to 1s"),
    ],
)
def test_validate_messages(section, message):
    assert settings(**section).validate()[0].message == message


# --- failover what-if ---------------------------------------------------------------------------------

# (settings, record L) -> crash (earliest, latest), renew-failure (stops, no-leader min, max, overlap),
# release latest; all in seconds after the last renewal t0.
@pytest.mark.parametrize(
    "section, record_seconds, crash, renew, release",
    [
        # defaults: L 15, P 2, Pmax 4.4, D 10
        #   crash: max(15, 2) = 15; 4.4 + 15 + 4.4 = 23.8
        #   renew: stops 2 + 10 = 12; nobody leads 15 - 12 = 3 .. 23.8 - 12 = 11.8; no overlap
        ({}, None, (15, 23.8), (12, 3, 11.8, 0), 4.4),
        # L 60, P 8, Pmax 8 + 9.6 = 17.6, D 40
        #   crash: 60; 17.6 + 60 + 17.6 = 95.2. renew: stops 48; 60 - 48 = 12 .. 95.2 - 48 = 47.2
        ({"leaseDuration": "60s", "renewDeadline": "40s", "retryPeriod": "8s"}, None,
         (60, 95.2), (48, 12, 47.2, 0), 17.6),
        # D 14: stops 16 > earliest 15, so both may lead for 1s; nobody leads 0 .. 23.8 - 16 = 7.8
        ({"renewDeadline": "14s"}, None, (15, 23.8), (16, 0, 7.8, 1), 4.4),
        # the record (30) overrides the settings' 15 for standbys: 30; 4.4 + 30 + 4.4 = 38.8;
        #   renew: stops 12; 30 - 12 = 18 .. 38.8 - 12 = 26.8
        ({}, 30, (30, 38.8), (12, 18, 26.8, 0), 4.4),
        # leaseDuration 2.9s is written as 2: max(2, 2) = 2; 4.4 + 2 + 4.4 = 10.8;
        #   renew: stops 2 + 2.5 = 4.5 -> nobody leads 0 .. 10.8 - 4.5 = 6.3, overlap 4.5 - 2 = 2.5
        ({"leaseDuration": "2.9s", "renewDeadline": "2.5s", "retryPeriod": "2s"}, None,
         (2, 10.8), (4.5, 0, 6.3, 2.5), 4.4),
        # 800ms is written as 0: P 0.1, Pmax 0.1 + 0.12 = 0.22: max(0, 0.1) = 0.1; 0.22 + 0 + 0.22 = 0.44;
        #   renew: stops 0.1 + 0.5 = 0.6 (after every takeover): nobody leads 0 .. 0; overlap 0.6 - 0.1 = 0.5
        ({"leaseDuration": "800ms", "renewDeadline": "500ms", "retryPeriod": "100ms"}, None,
         (0.1, 0.44), (0.6, 0, 0, 0.5), 0.22),
    ],
)
def test_failover_arithmetic(section, record_seconds, crash, renew, release):
    report = failover_whatif(settings(**section), lease_duration_seconds=record_seconds)
    c, r, g = report.crash, report.renew_failure, report.release
    assert (c.takeover_earliest, c.takeover_latest) == (s(crash[0]), s(crash[1]))
    assert (c.leader_stops, c.overlap_max) == (s(0), s(0))
    # a pod created at the crash waits until the takeover; so does nobody-leads
    assert (c.pod_wait_min, c.pod_wait_max) == (s(crash[0]), s(crash[1]))
    assert (c.no_leader_min, c.no_leader_max) == (s(crash[0]), s(crash[1]))
    # standbys see nothing new after t0 either way: same takeover window
    assert (r.takeover_earliest, r.takeover_latest) == (s(crash[0]), s(crash[1]))
    assert (r.leader_stops, r.no_leader_min, r.no_leader_max, r.overlap_max) == tuple(s(x) for x in renew)
    assert (g.takeover_earliest, g.takeover_latest, g.pod_wait_max) == (s(0), s(release), s(release))


def test_failover_absolute_times_and_notes():
    t0 = datetime(2024, 5, 14, 9, 29, 58, 412907, tzinfo=UTC)
    report = failover_whatif(LeaderElectionSettings(), t0, lease_duration_seconds=30)
    # 09:29:58.412907 + 30s = 09:30:28.412907; + 38.8s = 09:30:37.212907
    assert report.crash.takeover_earliest_at == datetime(2024, 5, 14, 9, 30, 28, 412907, tzinfo=UTC)
    assert report.crash.takeover_latest_at == datetime(2024, 5, 14, 9, 30, 37, 212907, tzinfo=UTC)
    assert (report.lease_duration_seconds, report.lease_duration_source) == (30, "lease record")
    assert any("runs with other settings" in n for n in report.notes)
    assert report.crash.bounds[-1] == "latest: 4.4s + 30s + 4.4s = 38.8s after t0"
    assert report.renew_failure.bounds[0].startswith("the leader retries 2s after its last success")


def test_failover_to_dict_is_json():
    d = json.loads(json.dumps(failover_whatif(LeaderElectionSettings(), CAPTURE).to_dict()))
    assert [x["name"] for x in d["scenarios"]] == ["crash", "renew-failure", "release"]
    assert d["scenarios"][0]["takeoverLatestSeconds"] == 23.8
    assert d["scenarios"][0]["takeoverLatestAt"] == "2024-05-14T09:30:23.800000Z"
    assert d["standbyPollMaxSeconds"] == 4.4


# --- verdicts ---------------------------------------------------------------------------------------

# Evaluated at 09:30:00Z with default settings (L 15 unless the record says otherwise).
@pytest.mark.parametrize(
    "spec, status, age, remaining, note",
    [
        # 09:30:00 - 09:29:58.412907 = 1.587093s old; 15 - 1.587093 = 13.412907s left
        ({"renewTime": "2024-05-14T09:29:58.412907Z"}, HEALTHY, 1.587093, 13.412907, None),
        # 78.872437s old; expired 78.872437 - 15 = 63.872437s ago, beyond the 23.8s worst case
        ({"renewTime": "2024-05-14T09:28:41.127563Z"}, EXPIRED, 78.872437, -63.872437, "no standby took over"),
        # 20s old: expired 5s ago but still inside 23.8s, a standby may yet take over
        ({"renewTime": "2024-05-14T09:29:40Z"}, EXPIRED, 20, -5, "leftover rather than an outage"),
        # exactly 15s old: client-go's "observed + L after now" is false at equality -> expired
        ({"renewTime": "2024-05-14T09:29:45Z"}, EXPIRED, 15, 0, "within 2s of expiry"),
        # one microsecond younger -> still healthy
        ({"renewTime": "2024-05-14T09:29:45.000001Z"}, HEALTHY, 14.999999, 0.000001, "within 2s of expiry"),
        # the record's 60s governs, not the settings' 15s: 30s old, 30s left
        ({"renewTime": "2024-05-14T09:29:30Z", "leaseDurationSeconds": 60}, HEALTHY, 30, 30,
         "gives up after retryPeriod + renewDeadline"),
        # 6s old > 2 * P = 4s: renewals are overdue, but 6s < P + D = 12s
        ({"renewTime": "2024-05-14T09:29:54Z"}, HEALTHY, 6, 9, "renewal overdue"),
        # renewTime 3s in the future: the leader's clock is ahead; 15 + 3 = 18s left
        ({"renewTime": "2024-05-14T09:30:03Z"}, HEALTHY, -3, 18, "clock runs ahead"),
        # no renewTime: acquireTime stands in; 10s old
        ({"acquireTime": "2024-05-14T09:29:50Z"}, HEALTHY, 10, 5, "using acquireTime"),
        # a holder with no timestamps at all
        ({"renewTime": None}, EXPIRED, None, None, None),
    ],
)
def test_assess_held(spec, status, age, remaining, note):
    spec = {"holderIdentity": IDENTITY, "leaseDurationSeconds": 15, **spec}
    verdict = assess(LeaseRecord.from_object(make_lease(**spec)), CAPTURE)
    assert verdict.status == status
    assert verdict.renew_age == (None if age is None else s(age))
    assert verdict.remaining == (None if remaining is None else s(remaining))
    if note:
        assert any(note in n for n in verdict.notes), verdict.notes
    if status == EXPIRED:
        assert "not being scheduled while no leader is active" in verdict.consequence
    else:
        assert "are being scheduled" in verdict.consequence


@pytest.mark.parametrize(
    "spec, age, phrase, note",
    [
        # never acquired: no holder, no times
        ({}, None, "No scheduler has ever held kube-system/kube-scheduler", None),
        # released 50s ago (holder "", leaseDurationSeconds 1): a standby needed at most 4.4s
        ({"holderIdentity": "", "renewTime": "2024-05-14T09:29:10Z", "leaseDurationSeconds": 1}, 50,
         "the last leader released it 50s ago", "still unheld"),
        # released 3s ago: within the 4.4s a standby needs
        ({"holderIdentity": "", "renewTime": "2024-05-14T09:29:57Z", "leaseDurationSeconds": 1}, 3,
         "within 4.4s", None),
    ],
)
def test_assess_no_holder(spec, age, phrase, note):
    verdict = assess(LeaseRecord.from_object(make_lease(**spec)), CAPTURE)
    assert verdict.status == NO_HOLDER
    assert verdict.renew_age == (None if age is None else s(age))
    assert phrase in verdict.consequence
    assert verdict.consequence.endswith(
        "Pods with schedulerName default-scheduler are not being scheduled while no leader is active.")
    if note:
        assert any(note in n for n in verdict.notes)
    else:
        assert not any("still unheld" in n for n in verdict.notes)


@pytest.mark.parametrize(
    "acquire, transitions, held_for, recent",
    [
        # acquired 3 minutes ago after 4 transitions: a recent failover
        ("2024-05-14T09:27:00Z", 4, 180, True),
        # acquired 3 minutes ago but never changed hands (transitions 0): first leader
        ("2024-05-14T09:27:00Z", 0, 180, False),
        # led for 11h25m48.694888s: not recent
        ("2024-05-13T22:04:11.305112Z", 3, 41148.694888, False),
    ],
)
def test_assess_transitions(acquire, transitions, held_for, recent):
    lease = LeaseRecord.from_object(make_lease(
        holderIdentity=IDENTITY, acquireTime=acquire, renewTime="2024-05-14T09:29:59Z",
        leaseDurationSeconds=15, leaseTransitions=transitions))
    verdict = assess(lease, CAPTURE)
    assert verdict.held_for == s(held_for)
    assert any("changed hands" in n for n in verdict.notes) == recent


def test_assess_scheduler_names():
    lease = LeaseRecord.from_object(make_lease("batch-lock", namespace="sched", holderIdentity=IDENTITY))
    config = {"leaderElection": {"resourceNamespace": "sched", "resourceName": "batch-lock"},
              "profiles": [{"schedulerName": "batch"}, {"schedulerName": "gpu"}]}
    verdict = assess(lease, CAPTURE, LeaderElectionSettings.from_config(config))
    assert verdict.scheduler_names == ("batch", "gpu")
    assert "Pods with schedulerName batch, gpu are not being scheduled" in verdict.consequence
    other = assess(LeaseRecord.from_object(make_lease("my-scheduler")), CAPTURE)
    assert other.scheduler_names == ()
    assert "Pods of the scheduler that locks kube-system/my-scheduler are not being scheduled" in other.consequence


def test_assess_naive_now_is_utc():
    lease = LeaseRecord.from_object(make_lease(holderIdentity=IDENTITY, renewTime="2024-05-14T09:29:58Z"))
    assert assess(lease, datetime(2024, 5, 14, 9, 30)).renew_age == s(2)


def test_verdict_to_dict_is_json():
    lease = LeaseRecord.from_object(make_lease(
        holderIdentity=IDENTITY, renewTime="2024-05-14T09:29:58.412907Z", leaseDurationSeconds=15))
    d = json.loads(json.dumps(assess(lease, CAPTURE).to_dict()))
    assert d["status"] == "healthy"
    assert d["at"] == "2024-05-14T09:30:00.000000Z"
    assert d["expiresAt"] == "2024-05-14T09:30:13.412907Z"
    assert d["renewAgeSeconds"] == 1.587093
    assert d["lease"]["holderHost"] == "cp-1"
    assert d["failover"]["scenarios"][0]["takeoverEarliestAt"] == "2024-05-14T09:30:13.412907Z"


# --- fixtures and the place warning ---------------------------------------------------------------------


def load_fixture(name: str) -> tuple[dict, datetime]:
    doc = yaml.safe_load((FIXTURES / name).read_text())
    captured = parse_time(doc["metadata"]["annotations"]["kwhatif.io/captured-at"])
    return doc, captured


@pytest.mark.parametrize(
    "name, want",
    [
        # kube-scheduler renewed 1.587093s before the capture
        ("healthy.yaml", [("kube-system/kube-scheduler", HEALTHY, 1.587093)]),
        # kube-scheduler 78.872437s old (expired); my-scheduler released 17m55s = 1075s earlier
        ("stale.yaml", [("kube-system/kube-scheduler", EXPIRED, 78.872437),
                        ("kube-system/my-scheduler", NO_HOLDER, 1075)]),
    ],
)
def test_fixtures(name, want):
    doc, captured = load_fixture(name)
    assert captured == CAPTURE
    verdicts = [assess(lease, captured) for lease in select_scheduler_leases(doc)]
    assert [(v.lease.key, v.status, v.renew_age) for v in verdicts] == [(k, st, s(a)) for k, st, a in want]


def test_scheduling_warning():
    healthy, _ = load_fixture("healthy.yaml")
    stale, _ = load_fixture("stale.yaml")
    assert scheduling_warning(select_scheduler_leases(healthy), CAPTURE) is None
    warning = scheduling_warning(select_scheduler_leases(stale), CAPTURE)
    assert warning.startswith("scheduler lease kube-system/kube-scheduler is expired: The lease expired 1m4s ago")
    assert "no lease kube-system/kube-scheduler" in scheduling_warning([], CAPTURE)
    assert scheduling_warning([], CAPTURE, settings(leaderElect=False)) is None
