"""JSON extraction, image encoding and message building (no network)."""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pydantic import BaseModel

from ttir.model.payload import (
    ReplyParseError,
    build_messages,
    decode_data_url,
    encode_image,
    json_candidates,
    parse_json_reply,
)


class Point(BaseModel):
    x: int
    y: int


@pytest.mark.parametrize(
    "text",
    [
        '{"x": 1, "y": 2}',
        '```json\n{"x": 1, "y": 2}\n```',
        '```\n{"x": 1, "y": 2}\n```',
        'Sure! Here is the point: {"x": 1, "y": 2}. Anything else?',
        '<think>the user wants {"x": 9}</think>\n{"x": 1, "y": 2}',
        'First an example {"x": "a"} and then the answer:\n```json\n{"x": 1, "y": 2}\n```',
        'Here: {"x": 1, "y": 2, "note": "braces } inside { strings"}',
    ],
    ids=["plain", "fenced-json", "fenced-bare", "chatty", "think-block", "example-then-answer", "braces-in-strings"],
)
def test_extraction_finds_the_object(text):
    assert parse_json_reply(text, Point) == Point(x=1, y=2)


def test_first_object_wins_without_schema():
    assert parse_json_reply('a {"k": 1} b {"k": 2}') == {"k": 1}
    assert json_candidates('a {"k": 1} b {"k": 2}') == [{"k": 1}, {"k": 2}]


@pytest.mark.parametrize(
    "text, message",
    [("", "empty"), ("   \n", "empty"), ("no json at all", "no JSON"), ('{"x": 1', "no JSON"),
     ('{"x": "left", "y": 2}', "x"), ("[1, 2]", "no object")],
)
def test_extraction_failures_say_why(text, message):
    with pytest.raises(ReplyParseError, match=message):
        parse_json_reply(text, Point)


def test_encode_image_downscales_and_converts():
    rgba = Image.new("RGBA", (3000, 1500), (0, 0, 255, 128))
    mime, raw = decode_data_url(encode_image(rgba, max_side=300, fmt="jpeg"))
    img = Image.open(io.BytesIO(raw))
    assert mime == "image/jpeg" and img.size == (300, 150) and img.mode == "RGB"
    mime, raw = decode_data_url(encode_image(rgba, max_side=4000))
    assert mime == "image/png" and Image.open(io.BytesIO(raw)).size == (3000, 1500)
    assert rgba.size == (3000, 1500)  # the caller's image is not modified


def test_encode_image_accepts_bytes_and_urls_and_rejects_the_rest():
    buf = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buf, format="PNG")
    assert encode_image(buf.getvalue()).startswith("data:image/png;base64,")
    assert encode_image("https://example.org/a.png") == "https://example.org/a.png"
    with pytest.raises(TypeError, match="PIL image"):
        encode_image(42)
    with pytest.raises(ValueError, match="format"):
        encode_image(Image.new("RGB", (4, 4)), fmt="gif")


def test_build_messages_validates():
    msgs = build_messages("hi", ["data:image/png;base64,AAAA"])
    assert msgs[0]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    with pytest.raises(ValueError, match=r"messages\[1\]"):
        build_messages([{"role": "user", "content": "a"}, {"content": "b"}])
    with pytest.raises(ValueError, match="role='robot'"):
        build_messages([{"role": "robot", "content": "a"}])
    with pytest.raises(ValueError, match="no 'user' turn"):
        build_messages([{"role": "system", "content": "a"}], ["data:image/png;base64,AAAA"])
    original = [{"role": "user", "content": "a"}]
    build_messages(original, ["data:image/png;base64,AAAA"])
    assert original == [{"role": "user", "content": "a"}]
