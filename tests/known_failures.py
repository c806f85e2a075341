"""The one list of shared conformance cases that fail until the open issue covering them lands.

Each entry is strict: a case that starts passing fails the run, so its mark is deleted in the commit
that fixes it. Nothing else in the suite is skipped or expected to fail.
"""

from __future__ import annotations

#: case name (file stem) -> title of the open issue that makes it pass
KNOWN_FAILURES: dict[str, str] = {}


SUGGEST = '"What would make it fit": counterfactuals, each proven by re-running the scheduler'

#: non-fitting case -> what blocks it that `place --suggest` does not change yet (tests/test_suggest.py)
NO_SUGGESTION_YET: dict[str, str] = {
    **{case: "DRA claims that cannot be allocated" for case in
       ("gen-4009-dra", "gen-4010-dra", "gen-4011-dra", "gen-4016-dra", "gen-4017-dra", "gen-4018-dra",
        "gen-4029-dra", "gen-4030-dra", "gen-4031-dra", "gen-4036-dra", "gen-4037-dra", "gen-4038-dra",
        "gen-4040-dra")},
}
