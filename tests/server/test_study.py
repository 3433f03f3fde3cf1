"""The lesson for one person (``/study``, ``server.study_routes``) on a real server, as a phone asks for it: the
page in either language, compressed and asked for afresh, naming (in words, never as markup) a link's setting it
cannot use; every file it reads made once, compressed once and kept for good, none of them Streamlit's."""

from __future__ import annotations

import gzip
import http.client
import json
import re

import pytest

from support import ROOT
from testbed.local_server import PHONE_USER_AGENT, ServerFailed, streamlit_server
from ui.text import Text


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    try:
        with streamlit_server("app.py", tmp_path_factory.mktemp("study") / "server.log", ROOT) as (base, _):
            yield int(base.rsplit(":", 1)[1])
    except ServerFailed as error:
        pytest.fail(str(error), pytrace=False)


def get(port: int, path: str, **headers) -> tuple[int, http.client.HTTPMessage, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    connection.request("GET", path, headers={"Accept-Encoding": "gzip", **headers})
    response = connection.getresponse()
    answer = response.status, response.headers, response.read()
    connection.close()
    return answer


def page(port: int, path: str, **headers) -> str:
    status, sent, body = get(port, path, **headers)
    assert status == 200 and sent["Content-Encoding"] == "gzip" and sent["Cache-Control"] == "no-cache"
    return gzip.decompress(body).decode()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_and_every_file_it_reads_are_compressed_and_its_files_kept_for_good(port, lang):
    html = page(port, f"/study?lang={lang}&part=explorer&scenario=confirmed", **{"User-Agent": PHONE_USER_AGENT})
    assert f"<h1>{Text(lang)('study.title')}</h1>" in html and Text(lang)("url.ignored")[:8] not in html
    files = re.search(r'"files": "([^"]+)"', html)[1]
    assert re.findall(r'(?:src|href)="(/[^"]*)"', html) == [files + "student.css", files + "study.js",
                                                           files + "plotly-basic.min.js"]  # no Streamlit asset
    for name in ("study.js", "student.css", "plotly-basic.min.js", "tour-0-" + lang + "-phone.json",
                 f"explorer-{lang}-free.json", f"exercises-{lang}.json", f"bundle/phone-confirmed-{lang}/index.js"):
        status, sent, body = get(port, files + name)
        assert status == 200 and sent["Cache-Control"] == "public, max-age=31536000, immutable", name
        assert sent["Content-Encoding"] == "gzip" and get(port, files + name)[1]["X-Gzip-Kept"] == "hit", name
    exercises = json.loads(gzip.decompress(get(port, files + f"exercises-{lang}.json")[2]))
    assert [len(exercise["questions"]) for exercise in exercises] == [3, 4]


def test_a_bad_step_or_setting_is_named_in_the_pages_language_as_text_and_the_page_opens_at_its_default(port):
    html = page(port, "/study?lang=zh&step=12&depth=%3Cb%3E1%3C/b%3E", **{"Accept-Language": "en"})
    said = re.search(r'<p class="problem" role="alert">(.*?)</p>', html)[1]
    assert said.startswith(Text("zh")("url.ignored_list", settings="")[:8])
    assert "<code>step=12</code>" in said and "<code>depth=&lt;b&gt;1&lt;/b&gt;</code>" in said and "<b>" not in html
    data = json.loads(re.search(r'id="study-data">(.*?)</script>', html, re.S)[1])
    assert (data["step"], data["view"]["depth"], data["look"]) == (1, 24, "computer")
    html = page(port, "/study", **{"Accept-Language": "zh-CN,zh;q=0.9"})  # no lang: the browser's
    assert '<html lang="zh-Hans">' in html and 'role="alert"' not in html


def test_only_the_study_files_names_are_served(port):
    html = page(port, "/study")
    files = re.search(r'"files": "([^"]+)"', html)[1]
    for name in ("exercises-fr.json", "study.js.map", "../study_routes.py", "study.css"):
        assert get(port, files + name)[0] in (400, 404), name
