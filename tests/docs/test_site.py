"""The docs site: ``mkdocs build --strict`` succeeds (every page in the nav, no broken link, every docstring the
reference renders parses, every quoted figure is docs/figures.yaml's), and the built site renders in headless
Chromium — the home page with its title and navigation, the API page with the guard's signature.

Needs the ``docs`` extra (``pip install -e ".[docs]"``) and skips without it, saying so; the browser half needs
Debian's ``chromium`` (.ci/run installs it) and skips without it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser_support import Chromium, file_url, find_chromium

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.xdist_group("chromium")  # one browser at a time on the 2-core CI machine


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    missing = [m for m in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")
               if importlib.util.find_spec(m.split(".")[0]) is None
               or (m == "mkdocstrings_handlers.python" and importlib.util.find_spec(m) is None)]
    if missing:
        pytest.skip(f"the docs extra is not installed (no {', '.join(missing)}): pip install -e \".[docs]\"")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def test_every_page_of_the_nav_is_built(site):
    import yaml

    class _Loader(yaml.SafeLoader):  # mkdocs.yml may hold !!python tags: this test reads only the nav
        pass

    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)["nav"]

    def pages(items):
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            yield from (pages(value) if isinstance(value, list) else [value])

    def html(page: str) -> Path:  # use_directory_urls: a/b.md -> a/b/index.html, a/index.md -> a/index.html
        stem = page[:-3]
        return site / (stem[: -len("index")] if stem.endswith("index") else stem + "/") / "index.html"

    built = [html(p) for p in pages(nav)]
    assert len(built) >= 30
    assert [p for p in built if not p.is_file()] == []
    assert (site / "gallery" / "home.png").is_file() and (site / "plots" / "real_screens_test.png").is_file()


@pytest.fixture(scope="module")
def browser():
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium here: install Debian's `chromium` package (apt-get install -y chromium; .ci/run does)")
    with Chromium(binary) as b:
        yield b


def test_the_home_page_renders(site, browser):
    browser.open(file_url(site / "index.html"), width=1200, height=900)
    assert "ttir" in browser.evaluate("document.title")
    assert "keep mobile GUI agents on track" in browser.evaluate("document.querySelector('h1').textContent")
    links = browser.evaluate("Array.from(document.querySelectorAll('nav a')).map(a => a.textContent.trim())")
    for wanted in ("Guard your agent on a real phone", "How the guard decides", "ttir", "Papers"):
        assert wanted in links, (wanted, links)
    assert browser.evaluate("document.body.innerText.includes('<!--fig')") is False  # the figure markers stay hidden
    # ... and do not break the list they sit in: each of the three items holds its quoted figures
    assert browser.evaluate("Array.from(document.querySelectorAll('article li')).some(li => "
                            "li.textContent.includes('A perturbation benchmark') && li.textContent.includes('AnTrap traps'))")


def test_the_api_page_shows_the_guards_signature(site, browser):
    browser.open(file_url(site / "reference" / "ttir" / "index.html"), width=1200, height=900)
    text = browser.evaluate("document.body.innerText")
    assert "guard(" in text
    for name in ("GuardedAgent", "Observation", "AgentStep", "TTIRConfig", "default_checks"):
        assert name in text, name
    headings = browser.evaluate("Array.from(document.querySelectorAll('[id]')).map(e => e.id)")
    assert "ttir.guard" in headings
