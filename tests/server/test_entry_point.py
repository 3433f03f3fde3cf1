"""``python -m server`` takes its port and address from the environment where its arguments name none (the image's
settings)."""

from __future__ import annotations

import pytest

from server.__main__ import streamlit_args


@pytest.mark.parametrize(("argv", "env", "expected"), [
    ([], {}, []),
    ([], {"PORT": "7860", "BLOCKSTAB_ADDRESS": "0.0.0.0"},
     ["--server.port", "7860", "--server.address", "0.0.0.0"]),
    (["--server.port", "8502", "--lan"], {"PORT": "7860", "BLOCKSTAB_ADDRESS": "127.0.0.1"},
     ["--server.port", "8502", "--server.address", "0.0.0.0"]),
    (["--server.port=8502"], {"PORT": "7860"}, ["--server.port=8502"]),
    ([], {"PORT": ""}, []),
])
def test_the_environment_names_the_port_and_address_where_the_arguments_do_not(argv, env, expected):
    assert streamlit_args(argv, env) == expected
