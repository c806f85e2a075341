"""ImageLocality: favours nodes that already have the pod's images, scaled by how widespread each
image is so that one ubiquitous image does not dominate. From v1.36 (sumImageScores, kubernetes#130231)
the images of the pod's image volumes count too, in the sum only; the v1.37 preview (kubernetes#138951)
counts them in the threshold as well."""

from __future__ import annotations

from kwhatif.framework.gomath import go_div
from kwhatif.framework.interface import MAX_NODE_SCORE, Plugin
from kwhatif.versions import IMAGE_LOCALITY_IMAGE_VOLUMES, IMAGE_LOCALITY_VOLUME_THRESHOLD

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


class ImageLocality(Plugin):
    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.image_volumes = self.features.has(IMAGE_LOCALITY_IMAGE_VOLUMES)
        self.image_volumes_in_threshold = self.features.has(IMAGE_LOCALITY_VOLUME_THRESHOLD)

    def images(self, pod) -> tuple[list[str], int]:
        """The normalized names of the images whose scores the pod's sum adds (each as often as it is
        listed), and how many sources count in the threshold: the containers', and the image volumes'
        where this release reads them."""
        spec = pod.spec
        images = [c.get("image") or "" for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])]
        count = len(images)
        if self.image_volumes:
            volume_images = [v["image"].get("reference") or "" for v in spec.get("volumes") or []
                             if v.get("image") is not None]
            images += volume_images
            if self.image_volumes_in_threshold:
                count += len(volume_images)
        return list(map(normalized_image_name, images)), count

    def score(self, state, pod, node_info) -> int:
        total_nodes = self.handle.snapshot.num_nodes()
        names, count = self.images(pod)
        image_sum = 0
        for name in names:
            image_state = node_info.image_states.get(name)
            if image_state is not None:
                spread = float(image_state.num_nodes) / float(total_nodes)
                image_sum += int(float(image_state.size) * spread)
        return calculate_priority(image_sum, count)
