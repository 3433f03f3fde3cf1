"""The take-home Explorer's command (``python -m ui.take_home``): an example it cannot use is refused, and
nothing is written. (The folder it writes, opened in Chromium: tests/browser/test_take_home_browser.py.)"""

import pytest

from ui.take_home import main


@pytest.mark.parametrize("sc", ["v1.not-an-example", "nonsense"])
def test_an_example_the_app_cannot_use_is_refused_and_nothing_written(capsys, tmp_path, sc):
    with pytest.raises(SystemExit) as stopped:
        main(["--out", str(tmp_path / "out"), "--sc", sc])
    assert stopped.value.code == 2 and "not an example the app can use" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
