"""ImageLocality: image sizes scaled by spread, clamped to [23MB, 1000MB x containers]."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kwhatif.accelerators.image_locality import image_scores_at
from kwhatif.framework.cycle_state import CycleState
from kwhatif.framework.interface import Handle
from kwhatif.plugins.image_locality import ImageLocality, normalized_image_name
from kwhatif.versions import features_for
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


# Image volumes (v1.36.2's sumImageScores: in the sum; the v1.37 preview, kubernetes#138951: in the threshold
# too); hand-computed.
def _image_volume_plugin(snap, version: str) -> ImageLocality:
    return ImageLocality({}, Handle(snap, None, features_for(version)))


@pytest.mark.parametrize("version,expected", [
    ("1.34", [0, 0]), ("1.35", [0, 0]),  # image volumes are not looked at
    # 500MB on 1 of 2 nodes scales to 250MB, one container: (250 - 23) * 100 / (1000 - 23) = 23
    ("1.36", [23, 0]),
    # two image sources, max 2000MB: 22700 / 1977 = 11
    ("1.37", [11, 0]),
])
def test_image_volumes(version, expected):
    n1 = make_node("n1").images(("registry.example.com/data:latest", 500 * MB)).obj()
    snap = snapshot([n1, make_node("n2").obj()])
    pod = (make_pod().set("spec.volumes", [
        {"name": "data", "image": {"reference": "registry.example.com/data"}},  # normalized to :latest
        {"name": "scratch", "emptyDir": {}},  # not an image volume: not counted
    ]).info())
    plugin = _image_volume_plugin(snap, version)
    assert [plugin.score(CycleState(), pod, ni) for ni in snap.node_info_list] == expected


def test_image_volume_missing_from_every_node_still_counts_in_the_v1_37_threshold():
    # Container image 1500MB on both nodes (spread 1): v1.36 clamps at 1000MB -> 100; v1.37 counts the
    # absent image volume too: (1500 - 23) * 100 / (2000 - 23) = 74
    nodes = [make_node(n).images(("registry.example.com/app:1", 1500 * MB)).obj() for n in ("n1", "n2")]
    snap = snapshot(nodes)
    pod = make_pod().set("spec.volumes", [{"name": "d", "image": {"reference": "registry.example.com/x:2"}}]).info()
    assert _image_volume_plugin(snap, "1.36").score(CycleState(), pod, snap.node_info_list[0]) == 100
    assert _image_volume_plugin(snap, "1.37").score(CycleState(), pod, snap.node_info_list[0]) == 74


# image_locality_test.go (v1.36.2) TestImageLocalityPriority: node image lists and pods as upstream's.
NODE_IMAGES = {
    "node403002000": [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40), (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
                      (["gcr.io/2000:latest"], 2000)],
    "node25010": [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)],
    "node60040900": [(["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)],
    "node300600900": [(["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900)],
    "node400030": [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)],
    "node203040": [(["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)],
    "nodeWithNoImages": [],
}


def _spec(*images: str, init: tuple[str, ...] = (), volumes: tuple[str, ...] = ()) -> dict:
    spec: dict = {"containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]
    if volumes:
        spec["volumes"] = [{"name": f"v{i}", "image": {"reference": ref}} for i, ref in enumerate(volumes)]
    return spec


@pytest.mark.parametrize("name,spec,nodes,expected", [
    ("two images spread on two nodes, prefer the larger image one", _spec("gcr.io/40", "gcr.io/250"),
     ["node403002000", "node25010"], [0, 5]),
    ("two images on one node, prefer this node", _spec("gcr.io/40", "gcr.io/300"), ["node403002000", "node25010"],
     [7, 0]),
    ("if exceed limit, use limit", _spec("gcr.io/10", "gcr.io/4000"), ["node400030", "node25010"], [100, 0]),
    ("if exceed limit, use limit (with node which has no images present)", _spec("gcr.io/10", "gcr.io/4000"),
     ["node400030", "node25010", "nodeWithNoImages"], [66, 0, 0]),
    ("pod with multiple large images, node2 is preferred", _spec("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     ["node60040900", "node300600900", "nodeWithNoImages"], [32, 36, 0]),
    ("pod with multiple small images", _spec("gcr.io/30", "gcr.io/40"), ["node203040", "node400030"], [1, 0]),
    ("pod with ImageVolume", _spec("gcr.io/30", volumes=("gcr.io/300",)), ["node300600900", "node400030"], [12, 0]),
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     _spec("gcr.io/30", init=("gcr.io/300",)), ["node403002000", "node203040"], [6, 0]),
])
def test_image_locality_priority_v1_36(name, spec, nodes, expected):
    objs = []
    for i, status in enumerate(nodes, 1):
        node = make_node(f"node{i}").obj()
        node["status"]["images"] = [{"names": names, "sizeBytes": size * MB} for names, size in NODE_IMAGES[status]]
        objs.append(node)
    snap = snapshot(objs)
    pod = make_pod().set("spec.containers", spec["containers"])
    for key in ("initContainers", "volumes"):
        if key in spec:
            pod = pod.set(f"spec.{key}", spec[key])
    plugin = _image_volume_plugin(snap, "1.36")
    assert [plugin.score(CycleState(), pod.info(), ni) for ni in snap.node_info_list] == expected


# The bulk form (kwhatif.accelerators.image_locality) against Score node by node: random image lists, sizes
# from tiny to past int64's reach (the bulk form then declines), duplicated and unnormalized names, image
# volumes in every release's reading.
IMAGE_NAMES = ("nginx", "nginx:latest", "redis:7", "registry:5000/app", "registry:5000/app:2", "gcr.io/big")


def _size(rng) -> int:
    pick = rng.random()
    if pick < 0.05:
        return rng.choice([0, 1, 1 << 62, 1 << 70])
    return rng.randint(1, 3000) * MB


@pytest.mark.parametrize("seed", range(200))
def test_image_scores_at_equals_scoring_node_by_node(seed):
    rng = random.Random(seed)
    objs = []
    for i in range(rng.randint(1, 30)):
        node = make_node(f"n{i}").obj()
        node["status"]["images"] = [{"names": rng.sample(IMAGE_NAMES, rng.randint(1, 2)), "sizeBytes": _size(rng)}
                                    for _ in range(rng.randint(0, 4))]
        objs.append(node)
    snap = snapshot(objs)
    plugin = _image_volume_plugin(snap, rng.choice(["1.35", "1.36", "1.37"]))
    for _ in range(10):
        spec = _spec(*rng.choices(IMAGE_NAMES, k=rng.randint(0, 3)),
                     init=tuple(rng.choices(IMAGE_NAMES, k=rng.randint(0, 1))),
                     volumes=tuple(rng.choices(IMAGE_NAMES, k=rng.randint(0, 2))))
        pod = make_pod().set("spec.containers", spec["containers"])
        for key in ("initContainers", "volumes"):
            if key in spec:
                pod = pod.set(f"spec.{key}", spec[key])
        pod = pod.info()
        positions = [rng.randrange(len(objs)) for _ in range(rng.randint(1, 2 * len(objs)))]
        at = image_scores_at(plugin, CycleState(), pod, None, np.array(positions, dtype=np.intp))
        nodes = snap.node_info_list
        try:
            expected = [plugin.score(CycleState(), pod, nodes[p]) for p in positions]
        except (OverflowError, ZeroDivisionError):  # what the per-node form raises, the bulk form declines
            assert at is None
            continue
        assert at is None or at == expected
        assert at is not None or not spec["containers"] or any(s.size >= 1 << 55 for ni in nodes
                                                               for s in ni.image_states.values())
