"""The one rule for a client's address (``server/client_address.py``): what each setting trusts, that a bad
setting is refused in a sentence, and, as a property, that nothing a client writes into its own headers makes
the address anything but the one the trusted proxies vouch for, or the connection's peer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.client_address import UNKNOWN, Trust, address_of, trust_from

HAPROXY, FLY, TWO_HOPS = Trust(hops=1), Trust(header="Fly-Client-IP"), Trust(hops=2)


def headers(*pairs: tuple[str, str]):
    """A request's headers as the callers pass them: a header's values by name (any case), in order."""
    return lambda name: [value for key, value in pairs if key.lower() == name.lower()]


@pytest.mark.parametrize(("peer", "sent", "trust", "address"), [
    ("10.0.0.5", [], Trust(), "10.0.0.5"),
    ("10.0.0.5", [("X-Forwarded-For", "1.1.1.1"), ("Fly-Client-IP", "2.2.2.2")], Trust(), "10.0.0.5"),
    ("127.0.0.1", [("X-Forwarded-For", "1.1.1.1, 2.2.2.2"), ("X-Forwarded-For", "3.3.3.3 , 4.4.4.4")], HAPROXY,
     "4.4.4.4"),
    ("127.0.0.1", [], HAPROXY, "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", "1.1.1.1,")], HAPROXY, "127.0.0.1"),  # an empty last entry names no one
    ("127.0.0.1", [("X-Forwarded-For", "1.1.1.1, not-an-address")], HAPROXY, "127.0.0.1"),
    ("127.0.0.1", [("X-Forwarded-For", "2001:DB8::1")], HAPROXY, "2001:db8::1"),
    ("10.0.0.2", [("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.0.0.3")], TWO_HOPS, "198.51.100.7"),
    ("10.0.0.2", [("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "198.51.100.7, 10.0.0.3")], TWO_HOPS,
     "198.51.100.7"),
    ("10.0.0.2", [("X-Forwarded-For", "10.0.0.3")], TWO_HOPS, "10.0.0.2"),  # fewer entries than trusted hops
    ("10.0.0.2", [("fly-client-ip", "203.0.113.9"), ("X-Forwarded-For", "1.1.1.1")], FLY, "203.0.113.9"),
    ("10.0.0.2", [("X-Forwarded-For", "1.1.1.1")], FLY, "10.0.0.2"),  # the named header alone counts
    ("10.0.0.2", [("Fly-Client-IP", "6.6.6.6"), ("Fly-Client-IP", "203.0.113.9")], FLY, "203.0.113.9"),
    ("10.0.0.2", [("Fly-Client-IP", "203.0.113.9, 6.6.6.6")], FLY, "10.0.0.2"),  # garbled: the peer
    (None, [], Trust(), UNKNOWN),
    (object(), [("X-Forwarded-For", "1.1.1.1")], Trust(), UNKNOWN),  # AppTest's stand-in session
    (None, [("Fly-Client-IP", "")], FLY, UNKNOWN),
])
def test_the_address_rule(peer, sent, trust, address):
    assert address_of(peer, headers(*sent), trust) == address


@pytest.mark.parametrize(("environ", "trust"), [
    ({}, Trust()),
    ({"BLOCKSTAB_BEHIND_PROXY": "1"}, Trust(hops=1)),
    ({"BLOCKSTAB_TRUSTED_HOPS": "2"}, Trust(hops=2)),
    ({"BLOCKSTAB_BEHIND_PROXY": "1", "BLOCKSTAB_TRUSTED_HOPS": "3"}, Trust(hops=3)),
    ({"BLOCKSTAB_CLIENT_ADDRESS_HEADER": "CF-Connecting-IP"}, Trust(header="CF-Connecting-IP")),
    ({"BLOCKSTAB_CLIENT_ADDRESS_HEADER": " Fly-Client-IP ", "BLOCKSTAB_BEHIND_PROXY": "1"}, FLY),
])
def test_the_settings_name_what_is_trusted(environ, trust):
    assert trust_from(environ) == trust


@pytest.mark.parametrize(("environ", "said"), [
    ({"BLOCKSTAB_TRUSTED_HOPS": "two"}, "BLOCKSTAB_TRUSTED_HOPS must be a whole number of proxies, 1 or more, "
                                        "not 'two'."),
    ({"BLOCKSTAB_TRUSTED_HOPS": "0"}, "not '0'"),
    ({"BLOCKSTAB_TRUSTED_HOPS": "-1"}, "not '-1'"),
    ({"BLOCKSTAB_CLIENT_ADDRESS_HEADER": "Fly Client IP"}, "must be a header's name"),
    ({"BLOCKSTAB_CLIENT_ADDRESS_HEADER": "x-forwarded-for"}, "cannot be X-Forwarded-For"),
    ({"BLOCKSTAB_CLIENT_ADDRESS_HEADER": "Fly-Client-IP", "BLOCKSTAB_TRUSTED_HOPS": "1"}, "not both"),
])
def test_a_bad_setting_is_refused_saying_which(environ, said):
    with pytest.raises(ValueError) as refused:
        trust_from(environ)
    assert said in str(refused.value)


# What a client can write: any of the headers the rule may read, any number of times, any text in them.
NAMES = st.sampled_from(["X-Forwarded-For", "x-forwarded-for", "Fly-Client-IP", "CF-Connecting-IP", "X-Real-IP"])
VALUES = st.one_of(st.text(max_size=40), st.ip_addresses().map(str),
                   st.lists(st.ip_addresses().map(str), max_size=4).map(", ".join))
SENT = st.lists(st.tuples(NAMES, VALUES), max_size=6)
ADDRESS = st.ip_addresses().map(str)  # (each in its usual spelling, as the rule gives it)


@given(sent=SENT, peer=ADDRESS)
def test_with_nothing_trusted_no_header_moves_the_address_from_the_peer(sent, peer):
    assert address_of(peer, headers(*sent), Trust()) == peer


@given(sent=SENT, client=ADDRESS, proxies=st.lists(ADDRESS, min_size=1, max_size=4))
def test_behind_trusted_hops_no_header_moves_the_address_from_the_client_the_first_proxy_saw(sent, client, proxies):
    """Each trusted proxy appends the address it was reached from: the first one the client's, each next one
    the proxy before it; the app's peer is the last proxy."""
    appended = [client, *proxies[:-1]]
    forwarded = [*sent, *(("X-Forwarded-For", entry) for entry in appended)]
    assert address_of(proxies[-1], headers(*forwarded), Trust(hops=len(proxies))) == client


@given(sent=SENT, client=ADDRESS, peer=ADDRESS, name=st.sampled_from(["Fly-Client-IP", "CF-Connecting-IP"]))
def test_behind_a_named_header_no_header_moves_the_address_from_the_one_the_platform_set(sent, client, peer, name):
    """The platform's proxy replaces the client's own values of its header with the client's address."""
    passed = [(key, value) for key, value in sent if key.lower() != name.lower()] + [(name, client)]
    assert address_of(peer, headers(*passed), Trust(header=name)) == client
