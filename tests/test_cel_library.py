"""The Kubernetes CEL libraries of the DRA environment beyond quantity/semver/strings: lists, regex,
IP and CIDR, sets and string format, each function with upstream's examples and errors, and a
selector error reaching DynamicResources' Filter as an Error status (never a traceback)."""

from __future__ import annotations

import pytest

from kwhatif.api.dra_cel import CelError, DeviceEnv, compile_selector

NIC = DeviceEnv("dra.net", {"ip": {"string": "10.1.2.3"}, "cidr": {"string": "10.0.0.0/8"},
                            "ipv6": {"string": "fd00::1"}, "queues": {"int": 8}}, {})


def matches(expression: str) -> bool:
    return compile_selector(expression).matches(NIC)


@pytest.mark.parametrize("expression", [
    # lists (kubernetes.lists), the library's own examples
    "[1, 2, 3].isSorted() && ['a', 'b', 'b', 'c'].isSorted() && ![2.0, 1.0].isSorted()",
    "[1].isSorted() && [].isSorted()",
    "[1, 3].sum() == 4 && [1.0, 3.0].sum() == 4.0 && [].sum() == 0",
    "[duration('1m'), duration('1s')].sum() == duration('61s')",
    "[1, 3].min() == 1 && [1, 3].max() == 3 && [1].min() == 1",
    "['b', 'a', 'c'].min() == 'a' && ['b', 'a', 'c'].max() == 'c'",
    "[device.attributes['dra.net'].queues, 4].min() == 4",
    "[1, 2, 2, 3].indexOf(2) == 1 && ['a', 'b', 'b', 'c'].lastIndexOf('b') == 2",
    "[1.0].indexOf(1.1) == -1 && [].indexOf('string') == -1",
    "[true, 1].indexOf(1) == 1",  # true is not 1
    "'abca'.indexOf('a') == 0 && 'abca'.lastIndexOf('a') == 3",  # the strings overloads still apply
    # cel-go ext.Lists
    "[1, 2, 3, 4].slice(1, 3) == [2, 3] && [1].slice(1, 1) == []",
    "[1, [2, [3]]].flatten() == [1, 2, [3]] && [1, [2, [3]]].flatten(2) == [1, 2, 3] && [[1]].flatten(0) == [[1]]",
    "lists.range(3) == [0, 1, 2] && lists.range(0) == []",
    "[1, 2, 1, 3].distinct() == [1, 2, 3] && [3, 1, 2].sort() == [1, 2, 3] && [1, 2].reverse() == [2, 1]",
    "['b', 'a'].sort() == ['a', 'b']",
    # regex (kubernetes.regex)
    "'abc 123'.find('[0-9]+') == '123' && 'abc 123'.find('xyz') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456'] && '123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    "'123 abc 456'.findAll('xyz') == [] && 'abc'.findAll('[a-z]', 0) == []",
    # Go's FindAllString: an empty match right after a match is skipped (Python's finditer keeps it)
    "'123 abc 456'.findAll('[0-9]*') == ['123', '', '', '', '', '456']",
    # IP addresses (kubernetes.net.ip)
    "isIP('127.0.0.1') && isIP('::1') && !isIP('127.0.0.256') && !isIP(':::1')",
    "!isIP('01.2.3.4') && !isIP('fe80::1%eth0') && !isIP('::ffff:1.2.3.4')",
    "ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::abcd')",
    "!ip.isCanonical('2001:DB8::ABCD') && !ip.isCanonical('2001:db8::0:0:0:abcd')",
    "ip('127.0.0.1').family() == 4 && ip('::1').family() == 6",
    "ip(device.attributes['dra.net'].ip) == ip('10.1.2.3') && string(ip('::1')) == '::1'",
    "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified() && !ip('127.0.0.1').isUnspecified()",
    "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('10.0.0.1').isLoopback()",
    "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()",
    "!ip('224.0.1.1').isLinkLocalMulticast() && !ip('ff05::1').isLinkLocalMulticast()",
    "ip('169.254.1.1').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast() && !ip('10.0.0.1').isLinkLocalUnicast()",
    "ip('10.0.0.1').isGlobalUnicast() && ip('fd00::1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
    "!ip('::').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast() && !ip('127.0.0.1').isGlobalUnicast()",
    # CIDRs (kubernetes.net.cidr)
    "isCIDR('192.168.0.0/16') && isCIDR('::1/128') && !isCIDR('192.168.0.0/33') && !isCIDR('192.168.0.0')",
    "!isCIDR('192.168.0.0/016') && !isCIDR('10.0.0.0/255.0.0.0')",
    "cidr(device.attributes['dra.net'].cidr).containsIP(device.attributes['dra.net'].ip)",
    "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1')) && !cidr('192.168.0.0/24').containsIP('192.168.1.1')",
    "!cidr('10.0.0.0/8').containsIP(device.attributes['dra.net'].ipv6)",  # another family: not contained
    "cidr('192.168.0.0/24').containsCIDR('192.168.0.0/25') && !cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')",
    "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/24')) && !cidr('::/0').containsCIDR('10.0.0.0/8')",
    "cidr('192.168.0.1/24').ip() == ip('192.168.0.1') && cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
    "cidr('192.168.0.0/24').prefixLength() == 24 && string(cidr('192.168.0.1/24')) == '192.168.0.1/24'",
    "cidr('192.168.0.1/24') != cidr('192.168.0.0/24')",
    # sets (cel-go ext.Sets)
    "sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1], [1, 2]) && sets.contains([1], [])",
    "sets.equivalent([1, 2, 2], [2, 1]) && !sets.equivalent([1], [1, 2])",
    "sets.intersects([1, 2], [2, 3]) && !sets.intersects([1], [2]) && !sets.intersects([], [])",
    # format (cel-go ext.Strings)
    "'%s has %d queues'.format([device.driver, device.attributes['dra.net'].queues]) == 'dra.net has 8 queues'",
    "'%.2f%%'.format([12.5]) == '12.50%' && '%f'.format([1.0]) == '1.000000' && '%e'.format([1234.5]) == '1.234500e+03'",
    "'%b %o %x %X'.format([5, 8, 255, 255]) == '101 10 ff FF' && '%x'.format(['ab']) == '6162'",
    "'%s'.format([[1, 'a', true]]) == '[1, a, true]' && '%s'.format([null]) == 'null'",
])
def test_library_function(expression):
    assert matches(expression) is True


@pytest.mark.parametrize("expression,error", [
    ("[].min() == 1", "min called on empty list"),
    ("[].max() == 1", "max called on empty list"),
    ("[1, 2].slice(-1, 1) == []", "cannot slice(-1, 1), negative indexes not supported"),
    ("[1, 2].slice(2, 1) == []", "cannot slice(2, 1), start index must be less than or equal to end index"),
    ("[1, 2].slice(0, 3) == []", "cannot slice(0, 3), list is length 2"),
    ("[1].flatten(-1) == []", "level must be non-negative"),
    ("'a'.find('(') == ''", "Illegal regex: error parsing regexp"),
    ("'a'.matches('[')", "error parsing regexp: missing closing ]: `[`"),
    ("'a'.matches('a**')", "error parsing regexp: invalid nested repetition operator: `**`"),
    ("matches('a', '(?=a)')", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("'a'.find('(?=a)') == ''", "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
    ("'aa'.findAll('(a)\\\\1').size() == 1", "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax"),
    ("ip('127.0.0.256').family() == 4", 'IP Address "127.0.0.256" parse error during conversion from string'),
    ("ip('fe80::1%eth0').family() == 6", 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ("ip('::ffff:1.2.3.4').family() == 6", 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ("ip.isCanonical('x')", 'IP Address "x" parse error during conversion from string'),
    ("cidr('10.0.0.0').prefixLength() == 8", "network address parse error during conversion from string"),
    ("cidr('10.0.0.0/8').containsIP('nope')", 'IP Address "nope" parse error'),
    ("'%d'.format([1.5]) == ''", "error during formatting: decimal clause can only be used on integers, was given double"),
    ("'%s %s'.format(['a']) == ''", "index 1 out of range"),
    ("'%q'.format([1]) == ''", "could not parse formatting clause"),
    ("[1, 2].sum()", "CEL result of type IntType could not be converted to bool"),
])
def test_library_error(expression, error, capfd):
    with pytest.raises(CelError) as info:
        matches(expression)
    assert str(info.value).startswith(error)
    assert capfd.readouterr().err == ""  # RE2 logs a bad pattern to the process's stderr unless told not to


def test_a_library_error_is_the_filters_error_status():
    """kube-scheduler's Filter fails with the CEL run-time error; kwhatif reports it as the attempt's error."""
    from tests.plugins.test_dynamic_resources import CLASSES, exactly, resource_slice
    from kwhatif.state.cluster import Cluster
    from kwhatif.whatif import SchedulerSetup, place_pod

    objects = [*CLASSES, resource_slice("n", [{"name": "nic-0", "attributes": {"rdma": {"bool": True}}}],
                                        driver="dra.net"),
               {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
                "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "10"}}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": "c", "namespace": "default"},
                "spec": {"devices": {"requests": [exactly("nic", "nic", 1, None,
                                                          "cidr('10.0.0.0/33').containsIP('10.0.0.1')")]}}}]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x"}],
                    "resourceClaims": [{"name": "nic", "resourceClaimName": "c"}]}}
    result = place_pod(pod, "pod", Cluster.from_objects([(o, "t") for o in objects]), SchedulerSetup())
    assert not result.fits
    assert result.error.startswith('running "DynamicResources" filter plugin: claim default/c: selector #0: '
                                   'CEL runtime error: network address parse error during conversion from string')
