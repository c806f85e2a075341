"""The one list of shared conformance cases that fail until the open issue covering them lands.

Each entry is strict: a case that starts passing fails the run, so its mark is deleted in the commit
that fixes it. Nothing else in the suite is skipped or expected to fail.
"""

from __future__ import annotations

FIDELITY = "Fidelity: CSI volume limits and pods that are already nominated (new conformance categories fail)"
DRA = "Dynamic Resource Allocation: GPU claims evaluated exactly as kube-scheduler v1.34 allocates them"

_DRA_CASES = [
    "gen-4001-dra", "gen-4004-dra", "gen-4005-dra", "gen-4007-dra", "gen-4008-dra", "gen-4009-dra",
    "gen-4010-dra", "gen-4011-dra", "gen-4012-dra", "gen-4013-dra", "gen-4014-dra", "gen-4015-dra",
    "gen-4016-dra", "gen-4017-dra", "gen-4018-dra", "gen-4019-dra", "gen-4020-dra", "gen-4021-dra",
    "gen-4023-dra", "gen-4024-dra", "gen-4028-dra", "gen-4029-dra", "gen-4030-dra", "gen-4031-dra",
    "gen-4032-dra", "gen-4033-dra", "gen-4034-dra", "gen-4035-dra", "gen-4036-dra", "gen-4037-dra",
    "gen-4038-dra", "gen-4039-dra", "gen-4040-dra",
]

#: case name (file stem) -> title of the open issue that makes it pass
KNOWN_FAILURES: dict[str, str] = {
    "gen-3010-nominated-node": FIDELITY,
    "gen-3030-nominated-node": FIDELITY,
    **{name: DRA for name in _DRA_CASES},
}
