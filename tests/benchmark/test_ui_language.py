"""The ui_language perturbation: the phone's strings in Spanish, German or Chinese from
the string tables (benchmark/data/locale/), goals in English; the robust oracle still
solves every task in every language; the device is back in English afterwards."""

from __future__ import annotations

import json
from importlib import resources

import pytest
import yaml

import perturb
from benchmark import SimDevice, make_task, run_episode, task_names
from benchmark.agents import OracleAgent
from benchmark.ui import i18n
from benchmark.ui.metrics import FALLBACK_FONT, UI_FONT
from ttir.core.types import Action

LOCALES = ["es-ES", "de-DE", "zh-CN"]


def titles(obs, package: str) -> list[str]:
    return [e.text for e in obs.elements if e.package == package and e.short_id == "title"]


def test_every_table_loads_and_its_templates_name_only_their_own_placeholders():
    assert set(i18n.languages()) >= {"en", "es", "de", "zh"}
    for lang in i18n.languages():
        t = i18n.table(lang)
        assert t.dates["weekdays"] and len(t.dates["months"]) == 12
        if lang != "en":
            assert len(t.exact) > 250 and t.templates
    with pytest.raises(ValueError, match="language='fr' has no string table; available: en"):
        i18n.table("fr")


def test_tables_translate_the_same_english_strings():
    """No language silently lacks what the others translate (a table one row short shows
    English in the middle of a Spanish screen)."""
    raw = {lang: yaml.safe_load(resources.files("benchmark.data").joinpath(f"locale/{lang}.yaml").read_text("utf-8"))
           for lang in i18n.languages() if lang != "en"}
    keys = {lang: (set(d["strings"]), set(d["templates"])) for lang, d in raw.items()}
    first = next(iter(keys.values()))
    for lang, k in keys.items():
        assert k == first, f"{lang}: differs in {sorted((k[0] ^ first[0]) | (k[1] ^ first[1]))[:8]}"


def test_the_bundled_fonts_draw_every_character_of_every_table():
    cover = json.loads(resources.files("benchmark.ui").joinpath("fonts/coverage.json").read_text("utf-8"))
    points = {p for name in (UI_FONT, FALLBACK_FONT) for a, b in cover[name] for p in range(a, b + 1)}
    for lang in i18n.languages():
        text = resources.files("benchmark.data").joinpath(f"locale/{lang}.yaml").read_text("utf-8")
        missing = sorted({c for c in text if ord(c) >= 0x20 and ord(c) not in points})
        assert not missing, f"{lang}: no glyph for {missing[:10]}; run `python -m benchmark.ui.fontbuild`"


def test_translations_exact_templates_lists_and_untouched_content():
    assert i18n.translate("es-ES", "Save") == "Guardar"
    assert i18n.translate("de-DE", "More options for talk_copy") == "Weitere Optionen für talk_copy"
    assert i18n.translate("es-ES", "Today · Health Care") == "Hoy · Salud"  # both parts are table words
    assert i18n.translate("de-DE", "Mon, Tue, Wed") == "Mo., Di., Mi."  # the clock's words, item by item
    assert i18n.translate("zh-CN", "Settings") == "设置"
    assert i18n.translate("es-ES", "Kenji Ibrahim") == "Kenji Ibrahim"  # a name is nobody's string
    assert i18n.translate("en-US", "Save") == "Save"


@pytest.mark.parametrize("locale,settings,home,date", [
    ("es-ES", "Ajustes", "Contactos", "dom, 15 oct"),
    ("de-DE", "Einstellungen", "Kontakte", "So., 15. Okt."),
    ("zh-CN", "设置", "通讯录", "10月15日周日"),
])
def test_the_phone_speaks_the_language(device, locale, settings, home, date):
    device.configure(locale=locale)
    obs = device.observe()
    assert home in [e.text for e in obs.elements if e.short_id == "icon"]  # launcher labels
    assert obs.find(resource_id="date")[0].text == date  # the clock's words and order
    assert obs.find(resource_id="com.android.systemui:id/home")[0].content_desc != "Home"  # system UI too
    device.launch("Settings")
    obs = device.observe()
    assert settings in titles(obs, "com.android.settings")
    # the screenshot really shows the strings (a Chinese string is not drawn as boxes)
    title = next(e for e in obs.elements if e.text == settings)
    crop = obs.screenshot.crop(title.bounds).convert("L")
    assert len(set(crop.tobytes())) > 8


def test_what_the_user_typed_and_web_pages_stay_as_they_are(device):
    device.reset(make_task("BrowserMaze"))
    device.configure(locale="es-ES")
    device.launch("Contacts")
    tap = lambda e: device.execute(Action(action_type="click", x=e.center[0], y=e.center[1]))  # noqa: E731
    tap(device.observe().find(content_desc="Crear contacto")[0])
    first = device.observe().find(resource_id="first_name")[0]
    assert first.text == "Nombre"  # the hint is translated ...
    device.execute(Action(action_type="input_text", text="Save", x=first.center[0], y=first.center[1]))
    assert device.observe().find(resource_id="first_name")[0].text == "Save"  # ... what was typed is not
    device.open_url("file:///sdcard/Download/task.html")
    assert device.observe().find("Right")  # the page's own button
    assert device.observe().find(content_desc="Abrir la página principal")  # Chrome's own strings


def test_an_unknown_language_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="locale='fr-FR'.*languages: en, de, es, zh"):
        SimDevice().configure(locale="fr-FR")
    with pytest.raises(ValueError, match="locale"):
        perturb.make("ui_language", locale_choices=["Spanish"])


def test_the_perturbation_draws_a_language_per_episode_and_restores_english():
    seen = set()
    for seed in range(12):
        env = perturb.PerturbedDevice(SimDevice(), [perturb.make("ui_language")], seed=seed)
        with env:
            env.reset(make_task("SystemWifiTurnOff"))
            seen.add(env.settings.locale)
            applied = [e for e in env.event_log() if e["event"] == "applied"][0]
            assert applied["details"]["previous"] == {"locale": "en-US"}
        assert env.inner.settings.locale == "en-US"
    assert seen == set(LOCALES)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("task_name", task_names())
def test_oracle_solves_every_task_in_every_language(task_name, locale):
    task = make_task(task_name)
    env = perturb.PerturbedDevice(SimDevice(size=(540, 1200), dpi=210),
                                  [perturb.make("ui_language", locale_choices=[locale])], seed=0)
    with env:
        result = run_episode(env, task, OracleAgent.for_task(task))
    assert result.success, (f"{task_name} in {locale}: {result.termination} after {result.steps} steps; last steps: "
                            f"{[s.agent_step.get('summary') for s in result.trajectory[-6:]]}")
