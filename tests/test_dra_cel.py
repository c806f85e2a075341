"""The DRA CEL environment: the device variable as upstream builds it, each Kubernetes extension
function with upstream's semantics, and the errors a selector can raise (compile and run time)."""

from __future__ import annotations

import pytest

from kwhatif.api.dra_cel import CelError, DeviceEnv, Semver, compile_selector

GPU = DeviceEnv(
    "gpu.nvidia.com",
    {"productName": {"string": "NVIDIA H100 80GB HBM3"}, "type": {"string": "gpu"}, "index": {"int": 3},
     "mig": {"bool": False}, "driverVersion": {"version": "570.133.20"}, "cudaComputeCapability": {"version": "9.0.0"},
     "resource.kubernetes.io/pcieRoot": {"string": "pci0000:15"}},
    {"memory": {"value": "81559Mi"}, "example.com/slots": {"value": "4"}},
)


def matches(expression: str, device: DeviceEnv = GPU) -> bool:
    return compile_selector(expression).matches(device)


@pytest.mark.parametrize("expression,expected", [
    # the variable: driver, attributes and capacity by domain; bare names belong to the driver's domain
    ('device.driver == "gpu.nvidia.com"', True),
    ('device.attributes["gpu.nvidia.com"].index == 3', True),
    ('device.attributes["gpu.nvidia.com"].mig == false', True),
    ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:15"', True),
    ('"productName" in device.attributes["gpu.nvidia.com"]', True),
    ('"gpu.nvidia.com" in device.attributes && !("dra.net" in device.attributes)', True),
    ('device.attributes["gpu.nvidia.com"].productName in ["NVIDIA L4", "NVIDIA H100 80GB HBM3"]', True),
    ('device.capacity["example.com"].slots == quantity("4")', True),
    # quantity(): compared by value, whatever the suffix
    ('device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("80Gi"))', True),
    ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("79Gi"))', True),
    ('device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("81559Mi")) == 0', True),
    ('quantity("1Gi").compareTo(quantity("1G")) == 1', True),
    ('quantity("1000m") == quantity("1")', True),
    ('quantity("1.5").isInteger() == false && quantity("2k").asInteger() == 2000', True),
    ('quantity("-3").sign() == -1 && quantity("0").sign() == 0', True),
    ('quantity("1Gi").add(quantity("1Gi")) == quantity("2Gi") && quantity("5").sub(2) == quantity("3")', True),
    ('quantity("0.5").asApproximateFloat() == 0.5', True),
    ('isQuantity("10Gi") && !isQuantity("ten")', True),
    # semver(): ordered by semantic version precedence (numeric parts, pre-releases lower)
    ('device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("560.0.0"))', True),
    ('device.attributes["gpu.nvidia.com"].driverVersion.compareTo(semver("570.133.20")) == 0', True),
    ('device.attributes["gpu.nvidia.com"].driverVersion.isLessThan(semver("570.133.3"))', False),
    ('device.attributes["gpu.nvidia.com"].cudaComputeCapability.major() == 9', True),
    ('device.attributes["gpu.nvidia.com"].driverVersion.minor() == 133', True),
    ('device.attributes["gpu.nvidia.com"].driverVersion.patch() == 20', True),
    ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    ('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))', True),
    ('semver("1.0.0-2").isLessThan(semver("1.0.0-11"))', True),
    ('semver("1.0.0+build1") == semver("1.0.0+build2")', True),
    ('semver("v1.2", true) == semver("1.2.0")', True),
    ('isSemver("1.2.3") && !isSemver("1.2") && isSemver("1.2", true)', True),
    # the extended strings library and the standard string functions
    ('device.attributes["gpu.nvidia.com"].productName.lowerAscii() == "nvidia h100 80gb hbm3"', True),
    ('"ÄbC".lowerAscii() == "Äbc" && "abc".upperAscii() == "ABC"', True),
    ('device.attributes["gpu.nvidia.com"].productName.contains("H100")', True),
    ('device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA")', True),
    ('device.attributes["gpu.nvidia.com"].productName.endsWith("HBM3")', True),
    ('device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA H1[0-9]{2}")', True),
    ('" x ".trim() == "x" && "a-b-c".replace("-", "+") == "a+b+c" && "a,b".split(",") == ["a", "b"]', True),
    ('"abc".indexOf("c") == 2 && "abca".lastIndexOf("a") == 3 && "abc".substring(1) == "bc"', True),
    ('"abc".charAt(1) == "b" && ["a", "b"].join("-") == "a-b"', True),
    # cel.bind: the bound name, shadowed by a macro variable of the same name
    ('cel.bind(gpu, device.attributes["gpu.nvidia.com"], gpu.type == "gpu" && '
     'gpu.cudaComputeCapability.compareTo(semver("9.0.0")) >= 0)', True),
    ('cel.bind(x, 5, [1, 2].all(x, x < 3) && x == 5)', True),
    ('cel.bind(a, 1, cel.bind(b, a + 1, b == 2))', True),
    # && and || absorb an error when the other side decides (CEL's commutative logic)
    ('device.attributes["gpu.nvidia.com"].missing == 1 && false', False),
    ('device.attributes["gpu.nvidia.com"].missing == 1 || true', True),
])
def test_expression_value(expression, expected):
    assert matches(expression) is expected


@pytest.mark.parametrize("expression,error", [
    ('device.attributes["gpu.nvidia.com"].missing == "x"', "no such key: missing"),
    ('device.attributes["dra.net"].rdma == true', "no such key: rdma"),
    ('device.attributes["gpu.nvidia.com"].productName.major() == 1', "no such overload"),
    ('device.capacity["gpu.nvidia.com"].memory.isGreaterThan(semver("1.0.0"))', "no such overload"),
    ('semver("1.2") == semver("1.2.0")', "invalid semantic version '1.2'"),
    ('quantity("ten").isZero()', "quantities must match the regular expression"),
    ('quantity("1.5").asInteger() == 1', "cannot convert value to integer"),
    ('device.attributes["gpu.nvidia.com"].productName.frobnicate()', "no such function: frobnicate"),
    ('device.driver', "CEL result of type StringType could not be converted to bool"),
    ('device.driver ==', "compilation failed"),
    ('cel.bind(1, 2, true)', "compilation failed: cel.bind() variable name must be a simple identifier"),
])
def test_expression_error(expression, error):
    with pytest.raises(CelError) as info:
        matches(expression)
    assert str(info.value).startswith(error)


def test_invalid_version_attribute_fails_every_selector_on_the_device():
    broken = DeviceEnv("gpu.nvidia.com", {"driverVersion": {"version": "v570"}}, {})
    with pytest.raises(CelError, match="attribute driverVersion: parse semantic version"):
        matches('device.driver == "gpu.nvidia.com"', broken)


def test_each_expression_is_compiled_once():
    expression = 'device.attributes["gpu.nvidia.com"].index >= 0'
    assert compile_selector(expression) is compile_selector(expression)


def test_semver_rejects_what_blang_semver_rejects():
    for text in ("01.2.3", "1.2.3-01", "1.2", "v1.2.3", "1.2.3-"):
        with pytest.raises(ValueError):
            Semver(text)
