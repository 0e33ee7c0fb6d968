"""Reading dumps from strangers' phones: every format variant, and hostile documents
that end in a clear error within their bound (never a RecursionError, a hang or an
empty screen)."""

from __future__ import annotations

import pytest
from PIL import Image

from tests.support.adb_fake import FakePhone
from benchmark.devices import AdbDevice
from benchmark.devices.adb import cleanup as adb_cleanup
from ttir.core.dump import MAX_CHARS, MAX_DEPTH, DumpError, parse_dump
from ttir.core.types import Observation

NODE = ('<node index="0" text="{text}" resource-id="{rid}" class="{cls}" package="com.example.notes" '
        'content-desc="" checkable="false" checked="false" clickable="{click}" enabled="true" focusable="false" '
        'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
        'bounds="{bounds}"{close}')
HEAD = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


def node(text="", rid="", cls="android.widget.TextView", click="false", bounds="[0,0][1080,2400]", close=" />"):
    return NODE.format(text=text, rid=rid, cls=cls, click=click, bounds=bounds, close=close)


def dump(*inner: str, rotation: str = "0") -> str:
    body = node(cls="android.widget.FrameLayout", close=">") + "".join(inner) + "</node>"
    return f'{HEAD}<hierarchy rotation="{rotation}">{body}</hierarchy>'


PLAIN = dump(node("Notes", bounds="[42,150][500,230]"), node("Save", click="true", bounds="[800,150][1040,230]"))


def texts(obs: Observation) -> list[str]:
    return [e.text for e in obs.elements if e.text]


# ------------------------------------------------------------------ variants


@pytest.mark.parametrize("variant", [
    lambda d: d,
    lambda d: d + "UI hierchary dumped to: /dev/tty\n",
    lambda d: "UI hierchary dumped to: /dev/tty\n" + d,
    lambda d: "\ufeff" + d,
    lambda d: d.replace("><", ">\r\n<"),
    lambda d: d.replace("><", ">\n    <"),
], ids=["plain", "status-line-after", "status-line-before", "bom", "crlf", "pretty-printed"])
def test_uiautomator_variants_read_the_same_screen(variant):
    obs = Observation.from_xml(variant(PLAIN))
    assert texts(obs) == ["Notes", "Save"]
    assert obs.elements[2].clickable and obs.elements[2].bounds == (800, 150, 1040, 230)
    assert obs.screen_size == (1080, 2400) and obs.foreground == "com.example.notes"


def test_bytes_with_a_bom_are_read():
    obs = Observation.from_xml(("\ufeff" + PLAIN).encode("utf-8"))
    assert texts(obs) == ["Notes", "Save"] and isinstance(obs.xml, str)


def test_a_utf16_dump_with_a_bom_is_read_as_its_utf8_twin():
    """Windows PowerShell's `adb exec-out uiautomator dump /dev/tty > dump.xml` writes UTF-16 with a BOM."""
    plain = PLAIN.replace("Save", "Guardar cambios ✓")
    for codec in ("utf-16-le", "utf-16-be"):
        bom = b"\xff\xfe" if codec.endswith("le") else b"\xfe\xff"
        obs = Observation.from_xml(bom + plain.encode(codec))
        assert texts(obs) == texts(Observation.from_xml(plain.encode("utf-8"))) == ["Notes", "Guardar cambios ✓"]
        assert obs.xml.startswith("<")


def test_utf16_without_a_bom_gets_a_clear_error():
    with pytest.raises(DumpError, match="NUL bytes"):
        Observation.from_xml(PLAIN.encode("utf-16-le"))


def test_appium_page_source_elements_are_named_by_class():
    src = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
           '<hierarchy index="0" class="hierarchy" rotation="0" width="1080" height="2220">\n'
           '  <android.widget.FrameLayout index="0" package="com.example.notes" class="android.widget.FrameLayout" '
           'text="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" '
           'focused="false" long-clickable="false" password="false" scrollable="false" selected="false" '
           'bounds="[0,0][1080,2220]" displayed="true">\n'
           '    <android.widget.Button index="0" package="com.example.notes" class="android.widget.Button" '
           'text="Save" resource-id="com.example.notes:id/save" checkable="false" checked="false" clickable="true" '
           'enabled="true" focusable="true" focused="false" long-clickable="false" password="false" '
           'scrollable="false" selected="false" bounds="[800,150][1040,230]" displayed="true" />\n'
           '  </android.widget.FrameLayout>\n</hierarchy>')
    parsed = parse_dump(src)
    assert parsed.format == "appium" and parsed.declared_size == (1080, 2220)
    obs = Observation.from_xml(src)
    assert [e.class_name for e in obs.elements] == ["android.widget.FrameLayout", "android.widget.Button"]
    assert obs.elements[1].resource_id == "com.example.notes:id/save" and obs.elements[1].parent == 0
    assert obs.screen_size == (1080, 2220)


def test_a_focus_only_dialog_dump_implies_the_screen_around_it():
    doc = (f'{HEAD}<hierarchy rotation="0">' + node(cls="android.widget.FrameLayout", close=">",
           bounds="[63,912][1017,1488]") + node("Keep waiting?", bounds="[120,950][960,1040]") + "</node></hierarchy>")
    obs = Observation.from_xml(doc)
    assert obs.screen_size == (1080, 2400)


def test_a_bare_root_is_an_empty_tree_not_an_error():
    obs = Observation.from_xml(f'{HEAD}<hierarchy rotation="0" />')
    assert obs.elements == []


@pytest.mark.parametrize("doc, says", [
    ("", "non-empty"),
    ("UI hierchary dumped to: /sdcard/window_dump.xml", "status line"),
    ("<AppiumAUT><XCUIElementTypeApplication type='XCUIElementTypeApplication'/></AppiumAUT>", "iOS"),
    ("<html><body>502 Bad Gateway</body></html>", "no <hierarchy>"),
    (f'{HEAD}<hierarchy rotation="0"><window><title>x</title></window></hierarchy>', "none is a UI node"),
    (f'{HEAD}<hierarchy rotation="0"><node bounds="[0,0][10,10]">', "not well-formed"),
    (PLAIN.replace('rotation="0"', 'rotation="upside"'), "rotation='upside'"),
    (PLAIN.replace('rotation="0"', 'rotation="7"'), "rotation=7"),
    (PLAIN.replace("[800,150][1040,230]", "[800,150][1040,99999999999999999999]"), "bounds="),
    (PLAIN.replace("[800,150][1040,230]", "[800;150]"), "node #2"),
    ("screens/window_dump.xml", "looks like a file path ('screens/window_dump.xml'), not a dump; pass the file's text"),
], ids=["empty", "status-only", "ios", "html", "no-nodes", "truncated", "rotation-word", "rotation-range",
        "huge-bounds", "bad-bounds", "a-path"])
def test_unreadable_documents_say_why(doc, says):
    with pytest.raises(DumpError) as info:
        Observation.from_xml(doc)
    assert says in str(info.value)


def test_a_path_object_is_named_as_a_path_not_as_the_wrong_type(tmp_path):
    with pytest.raises(DumpError, match="looks like a file path"):
        Observation.from_xml(tmp_path / "dump.xml")


# ------------------------------------------------------------------ hostile documents (issue 14, item 11)


def test_deep_nesting_is_refused_without_recursion():
    depth = 10_000
    doc = HEAD + '<hierarchy rotation="0">' + '<node bounds="[0,0][1,1]">' * depth + "</node>" * depth + "</hierarchy>"
    with pytest.raises(DumpError, match=f"deeper than {MAX_DEPTH}"):
        Observation.from_xml(doc)


def test_oversized_dumps_are_refused_before_parsing():
    big = PLAIN + " " * (MAX_CHARS + 1)
    with pytest.raises(DumpError, match="at most"):
        Observation.from_xml(big)
    with pytest.raises(DumpError, match="bytes"):
        Observation.from_xml(big.encode())


def test_entity_declarations_are_refused():
    bomb = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
            '<hierarchy rotation="0"><node text="&lol2;" bounds="[0,0][1,1]"/></hierarchy>')
    with pytest.raises(DumpError, match="DOCTYPE"):
        Observation.from_xml(bomb)


def test_non_utf8_bytes_are_named():
    with pytest.raises(DumpError, match="not UTF-8"):
        Observation.from_xml(b"\x80\x81<hierarchy>")
    with pytest.raises(DumpError, match="not UTF-16"):
        Observation.from_xml(b"\xff\xfe<\x00h")  # a BOM, then an odd byte


def test_huge_attribute_values_are_clipped():
    doc = dump(node("x" * 200_000, bounds="[0,0][10,10]"))
    assert len(Observation.from_xml(doc).elements[1].text) == 10_000


def test_adb_observe_of_a_hostile_dump_falls_back_to_the_screenshot(tmp_path):
    depth = 10_000
    phone = FakePhone(dump=HEAD + '<hierarchy rotation="0">' + '<node bounds="[0,0][1,1]">' * depth
                      + "</node>" * depth + "</hierarchy>")
    device = AdbDevice(adb_device=phone, sleep=lambda s: None, settle_seconds=0, action_settle_seconds=0,
                       journal_dir=tmp_path / "journal")
    try:
        obs = device.observe()
    finally:
        adb_cleanup.unregister(id(device))
    assert obs.elements == [] and obs.screenshot is not None


def test_a_tiny_dump_claiming_a_huge_screen_is_refused_by_tune_eval(tmp_path):
    """A 200-byte dump with huge bounds once made `ttir tune eval` allocate 5.5 GB."""
    from experiments.tune.loader import ObservationLoader
    from experiments.tune.schema import ObservationRef

    (tmp_path / "s.xml").write_text(f'{HEAD}<hierarchy rotation="0"><node bounds="[0,0][90000,90000]"/></hierarchy>')
    Image.new("RGB", (540, 1200)).save(tmp_path / "s.png")
    loader = ObservationLoader(tmp_path)
    with pytest.raises(ValueError, match="larger than any phone's"):
        loader.load(ObservationRef(xml="s.xml", screenshot="s.png"), row_id="r1")
    (tmp_path / "t.xml").write_text(f'{HEAD}<hierarchy rotation="0"><node bounds="[0,0][1080,1080]"/></hierarchy>')
    with pytest.raises(ValueError, match="does not have the shape"):
        loader.load(ObservationRef(xml="t.xml", screenshot="s.png"), row_id="r2")


def test_a_landscape_screenshot_kept_at_dataset_width_loads(tmp_path):
    """Datasets keep screenshots 360 px wide: a landscape phone's (2400x1080) is 6.7x smaller."""
    from experiments.tune.loader import ObservationLoader
    from experiments.tune.schema import ObservationRef

    (tmp_path / "s.xml").write_text(f'{HEAD}<hierarchy rotation="1"><node bounds="[0,0][2400,1080]"/></hierarchy>')
    Image.new("RGB", (360, 162)).save(tmp_path / "s.png")
    obs = ObservationLoader(tmp_path).load(ObservationRef(xml="s.xml", screenshot="s.png"), row_id="r1")
    assert obs.screenshot is not None and obs.screenshot.size == (2400, 1080)
