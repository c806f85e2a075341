"""ImageLocality: image sizes scaled by spread, clamped to [23MB, 1000MB x containers]."""

from __future__ import annotations

import pytest

from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Handle
from kwhatif.plugins.image_locality import ImageLocality, normalized_image_name
from tests.builders import make_node, make_pod, snapshot

MB = 1024 * 1024


@pytest.mark.parametrize("name,expected", [
    ("nginx", "nginx:latest"),
    ("nginx:1.25", "nginx:1.25"),
    ("registry:5000/app", "registry:5000/app:latest"),
    ("registry:5000/app:2", "registry:5000/app:2"),
])
def test_normalized_image_name(name, expected):
    assert normalized_image_name(name) == expected


def test_score_scales_by_spread():
    # 500MB image on 1 of 2 nodes: 500MB * 1/2 = 250MB. One container: max 1000MB.
    # (250 - 23) * 100 / (1000 - 23) = 22700 / 977 = 23.23 -> 23
    n1 = make_node("n1").images(("registry.example.com/app:1", 500 * MB)).obj()
    snap = snapshot([n1, make_node("n2").obj()])
    plugin = ImageLocality({}, Handle(snap))
    pod = make_pod().info()
    assert plugin.score(CycleState(), pod, snap.node_info_list[0]) == 23
    assert plugin.score(CycleState(), pod, snap.node_info_list[1]) == 0


def test_small_images_score_zero():
    n1 = make_node("n1").images(("registry.example.com/app:1", 10 * MB)).obj()
    snap = snapshot([n1])
    assert ImageLocality({}, Handle(snap)).score(CycleState(), make_pod().info(), snap.node_info_list[0]) == 0
