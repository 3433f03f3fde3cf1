"""Where students' phones reach the app: the join link's address, from the server's setting, the teacher's
browser and this machine's own interfaces (read locally: no request leaves the machine)."""

from __future__ import annotations

import ipaddress
import socket
from types import SimpleNamespace

import psutil
import pytest

from server import lan
from server.lan import is_loopback, lan_address, students_address


@pytest.mark.parametrize(("host", "loopback"), [("localhost", True), ("127.0.0.1", True), ("127.0.1.1", True),
                                                ("::1", True), ("0.0.0.0", False), ("10.0.0.5", False),
                                                ("school-pc", False), ("", False)])
def test_loopback_is_this_machine_only(host, loopback):
    assert is_loopback(host) is loopback


def test_listening_on_this_machine_only_the_link_is_the_browsers_and_phones_cannot_reach_it():
    assert students_address("localhost", 8501, "http://localhost:8501") == ("http://localhost:8501", False)
    assert students_address("127.0.0.1", 8501, "http://127.0.0.1:8501") == ("http://127.0.0.1:8501", False)


def test_on_the_lan_the_link_is_never_localhost():
    address, reachable = students_address("0.0.0.0", 8599, "http://localhost:8599")
    mine = lan_address()
    assert (address, reachable) == ((f"http://{mine}:8599", True) if mine else ("http://localhost:8599", False))


def test_a_teacher_browsing_by_the_lan_address_keeps_it():
    assert students_address("0.0.0.0", 8501, "http://192.168.1.20:8501") == ("http://192.168.1.20:8501", True)
    assert students_address("10.0.0.7", 8501, "") == ("http://10.0.0.7:8501", True)


def test_a_teacher_on_https_gives_phones_an_https_link():
    assert students_address("10.0.0.7", 8443, "https://localhost:8443") == ("https://10.0.0.7:8443", True)
    assert students_address("0.0.0.0", 443, "https://school.example:443") == ("https://school.example:443", True)


def test_the_lan_address_is_one_of_this_machines_own():
    mine = lan_address()
    own = {a.address for addresses in psutil.net_if_addrs().values() for a in addresses if a.family == socket.AF_INET}
    assert mine is None or (mine in own and not ipaddress.ip_address(mine).is_loopback)


def test_a_private_address_of_an_interface_that_is_up_is_preferred(monkeypatch):
    def address(text):
        return SimpleNamespace(family=socket.AF_INET, address=text)

    interfaces = {"lo": [address("127.0.0.1")], "docker0": [address("172.17.0.1")],
                  "eth0": [address("203.0.113.5")], "wlan0": [address("169.254.3.4"), address("10.1.2.3")]}
    up = {"lo": True, "docker0": False, "eth0": True, "wlan0": True}
    monkeypatch.setattr(lan.psutil, "net_if_addrs", lambda: interfaces)
    monkeypatch.setattr(lan.psutil, "net_if_stats", lambda: {n: SimpleNamespace(isup=u) for n, u in up.items()})
    assert lan_address() == "10.1.2.3"  # not the interface that is down, nor link-local, nor public first
    up["wlan0"] = False
    assert lan_address() == "203.0.113.5"
    up["eth0"] = False
    assert lan_address() is None
