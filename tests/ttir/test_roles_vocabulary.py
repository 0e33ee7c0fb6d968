"""The one vocabulary of control roles, shared by the diagnosers, the recoveries and
the reference agents (ttir/core/data/roles)."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from diagnosers.signals.lexicon import flat, load_lexicon
from ttir.core.lexicon import control_role, norm, resolve_roles, role_of, vocabulary
from ttir.core.types import UIElement

LANGUAGES = ("en", "zh", "es", "pt", "de", "fr", "ja", "ko", "ru", "tr")


def el(text="", rid="", desc=""):
    return UIElement(text=text, resource_id=rid, content_desc=desc, clickable=True, bounds=(0, 0, 100, 50))


def test_every_required_language_has_dismiss_engage_and_destructive_words():
    folder = resources.files("ttir.core").joinpath("data/roles")
    for lang in LANGUAGES:
        data = yaml.safe_load(folder.joinpath(f"{lang}.yaml").read_text(encoding="utf-8"))
        assert data["language"] == lang
        for role in ("dismiss", "engage", "destructive"):
            assert data.get(role), f"{lang}.yaml has no {role} words"


def test_a_phrase_has_one_role_across_all_files():
    folder = resources.files("ttir.core").joinpath("data/roles")
    seen: dict[str, tuple[str, str]] = {}
    for f in folder.iterdir():
        if not f.name.endswith(".yaml") or f.name == "ids.yaml":
            continue
        for role, phrases in yaml.safe_load(f.read_text(encoding="utf-8")).items():
            if role in ("language", "agreement"):  # not roles: a dialog's wording, not a control's
                continue
            for p in phrases:
                assert isinstance(p, str), f"{f.name}: {p!r} is not a string"
                key = norm(p)
                if key in seen:
                    assert seen[key][0] == role, f"{p!r}: {seen[key][0]} in {seen[key][1]}, {role} in {f.name}"
                seen[key] = (role, f.name)


@pytest.mark.parametrize("label, role", [
    ("Close app", "destructive"), ("Wait", "dismiss"), ("Don’t allow", "dismiss"), ("Allow", "engage"),
    ("NOT NOW.", "dismiss"), ("OK", "acknowledge"), ("Start free trial now", "engage"),
    ("关闭应用", "destructive"), ("等待", "dismiss"), ("仅在使用该应用时允许", "engage"), ("不允许", "dismiss"),
    ("App schließen", "destructive"), ("Nicht zulassen", "dismiss"), ("Fermer l'application", "destructive"),
    ("Cerrar aplicación", "destructive"), ("Fechar app", "destructive"), ("アプリを終了", "destructive"),
    ("앱 닫기", "destructive"), ("Закрыть приложение", "destructive"), ("Uygulamayı kapat", "destructive"),
    ("Ahora no", "dismiss"), ("Agora não", "dismiss"), ("Nein danke", "dismiss"), ("Pas maintenant", "dismiss"),
    ("後で", "dismiss"), ("나중에", "dismiss"), ("Не сейчас", "dismiss"), ("Şimdi değil", "dismiss"),
])
def test_labels_in_ten_languages(label, role):
    assert vocabulary().phrase_role(label) == role


def test_single_words_do_not_count_inside_ordinary_labels():
    for label in ("Search settings", "Open navigation drawer", "Download", "Start", "Next"):
        assert role_of(el(label)) == "neutral", label


def test_android_ids_give_roles_in_any_language():
    assert control_role(el("Esperar", "android:id/aerr_wait")) == "dismiss"  # the label knows it too
    assert control_role(el("", "android:id/aerr_close")) == "destructive"
    assert control_role(el("", "com.android.permissioncontroller:id/permission_deny_button")) == "dismiss"
    assert control_role(el("", "com.android.permissioncontroller:id/permission_allow_button")) == "engage"


def test_acknowledge_depends_on_a_decline_beside_it():
    assert resolve_roles(["acknowledge"]) == ["dismiss"]
    assert resolve_roles(["dismiss", "acknowledge"]) == ["dismiss", "engage"]
    assert resolve_roles([None], unnamed="engage") == ["engage"]


def test_the_diagnosers_and_the_recoveries_read_the_same_roles():
    lex = load_lexicon()
    for label in ("Close app", "Wait", "Not now", "Update now", "Deny", "Rate now"):
        assert lex.role(label) == vocabulary().phrase_role(label)
        assert role_of(el(label)) in (lex.role(label), "dismiss")


def test_a_lone_ok_on_a_dialog_that_asks_to_agree_is_consent_not_a_way_out():
    from diagnosers.signals.overlays import Button, button_roles

    ok = [Button(label="OK", bounds=(0, 0, 10, 10), resource_id="android:id/button1", index=1)]
    lex = load_lexicon()
    terms = ["You need to agree to the terms regarding saved data storage."]
    assert button_roles(ok, lex, "window", terms) == ["engage"]
    assert button_roles(ok, lex, "window", ["Sync finished."]) == ["dismiss"]
    assert button_roles(ok, lex, "window", ["请阅读并同意用户协议"]) == ["engage"]
    assert resolve_roles(["acknowledge"], asks_agreement=True) == ["engage"]
    assert not vocabulary().asks_agreement(["Disagreement resolved"])  # whole words only


def test_turkish_dotted_capitals_read_like_the_lower_case_words():
    from diagnosers.signals.text import normalize

    assert norm("İZİN VER") == "izin ver" and normalize("Bildirimlere İzin Ver") == "bildirimlere izin ver"
    assert vocabulary().phrase_role("İPTAL") == vocabulary().phrase_role("iptal")


def test_remembered_roles_are_the_same_roles_and_the_memory_is_bounded():
    import ttir.core.lexicon as lexicon

    v = vocabulary()
    labels = ["Not now", "Weiter mit Google und mehr", "Search settings", "OK", "", "不允许"]
    first = [v.phrase_role(t) for t in labels]
    assert first == [v._phrase_role(t) for t in labels] == [v.phrase_role(t) for t in labels]
    for i in range(lexicon.MEMO_LABELS + 10):  # a hostile screen: endless distinct labels
        v.phrase_role(f"label {i}")
    assert len(v._memo) <= lexicon.MEMO_LABELS
    assert [v.phrase_role(t) for t in labels] == first


def test_interruption_terms_are_found_longest_first_as_before_the_index():
    lex = load_lexicon()
    texts = ["Rate us on Google Play", "Limited-time offer: upgrade to premium now", "立即更新", "Add item"]
    found = lex.hits(texts)
    blob = " | ".join(flat(t) for t in texts)
    expected = {t: lex.terms[t] for t, rx in lex._term_res if rx.search(blob)}  # the plain scan of every term
    assert found == expected and list(found) == list(expected) and found, blob
    assert "ad" not in found  # "Add" does not hold the word "ad"


def test_indexed_lookups_agree_with_the_plain_scans_on_dev_screens():
    """Role phrases inside a label and the intents of a dialog's text are looked up by their first
    word; on dev screens (every fifth readable one) they give what searching with every phrase in turn gives."""
    from diagnosers.signals.intents import dialog_intents, intents
    from experiments.real_screens.corpus import load_corpus
    from ttir.core.lexicon import label, term_pattern

    v = vocabulary()

    def plain_role(text: str):  # the whole label, else every inner phrase in turn, longest first
        lab = norm(text)
        return lab and (v.exact.get(lab) or next((v.exact[p] for p, rx in v.inner if rx.search(lab)), None)) or None

    plain = [(i.name, [term_pattern(t) for t in i.dialog.phrases], [term_pattern(t) for t in i.unless.phrases])
             for i in intents()]
    labels, asked = set(), 0
    for s in [s for s in load_corpus("dev") if not s.label.malformed][::5]:
        texts = [label(e) for e in s.observation().elements if label(e)]
        labels.update(texts)
        blob = " | ".join(flat(t) for t in texts)
        expected = frozenset(name for name, dialog, unless in plain
                             if any(rx.search(blob) for rx in dialog) and not any(rx.search(blob) for rx in unless))
        assert dialog_intents(texts) == expected, s.id
        asked += bool(expected)
    assert asked >= 20  # dialogs that ask for something are among them
    roles = {t: v._phrase_role(t) for t in labels}
    assert roles == {t: plain_role(t) for t in labels}
    assert sum(r is not None and norm(t) not in v.exact for t, r in roles.items()) >= 20  # found inside longer labels
