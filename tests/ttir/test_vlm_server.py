"""The scripted local OpenAI-compatible server itself."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from ttir.testing import Reply, VLMTestServer
from ttir.model.client import VLMClient, VLMHTTPError, VLMTimeout


def _post(url: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_binds_loopback_on_an_ephemeral_port(vlm_server):
    assert vlm_server.base_url.startswith("http://127.0.0.1:")
    assert vlm_server.port > 0


def test_serves_an_openai_shaped_completion(vlm_server):
    vlm_server.enqueue(Reply.json({"a": 1}, prompt_tokens=11, completion_tokens=3))
    status, body = _post(vlm_server.base_url + "/chat/completions",
                         {"model": "m1", "messages": [{"role": "user", "content": "hi"}]})
    assert status == 200
    assert body["object"] == "chat.completion" and body["model"] == "m1"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": '{"a": 1}'}
    assert body["usage"] == {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
    rec = vlm_server.requests[0]
    assert rec.text == "hi" and rec.status == 200 and rec.responded_at >= rec.received_at


def test_unscripted_request_is_a_clear_non_retried_error(vlm_server):
    client = VLMClient(vlm_server.config(max_retries=3))
    with pytest.raises(VLMHTTPError, match="no scripted reply left for request #0"):
        client.complete_json("q")
    assert len(vlm_server.requests) == 1


def test_responder_answers_once_the_queue_is_empty(vlm_server):
    vlm_server.responder = lambda req: Reply.json({"echo": req.text})
    vlm_server.enqueue(Reply.json({"echo": "scripted"}))
    client = VLMClient(vlm_server.config())
    assert client.complete_json("first").value == {"echo": "scripted"}
    assert client.complete_json("second").value == {"echo": "second"}


def test_models_and_unknown_routes(vlm_server):
    with urllib.request.urlopen(vlm_server.base_url + "/models", timeout=5) as resp:
        assert json.loads(resp.read())["data"][0]["id"] == vlm_server.model
    status, body = _post(vlm_server.base_url + "/embeddings", {"input": "x"})
    assert status == 404 and "no route" in body["error"]["message"]


def test_records_a_client_that_hung_up_and_stops_promptly():
    server = VLMTestServer().start()
    server.enqueue(Reply.slow(30))
    client = VLMClient(server.config(timeout_s=0.2, max_retries=0))
    with pytest.raises(VLMTimeout):
        client.complete_json("q")
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    stopper.join(timeout=5)
    assert not stopper.is_alive()  # a handler sleeping on a 30 s reply does not hold up stop()
    assert server.requests[0].responded_at is None


def test_held_reply_waits_for_company_but_not_forever(vlm_server):
    vlm_server.enqueue(Reply.held(2, Reply.json({"n": 1}), timeout_s=0.1))
    client = VLMClient(vlm_server.config())
    assert client.complete_json("alone").value == {"n": 1}  # nobody else came: released by the cap


@pytest.mark.parametrize("argv, message", [
    (["--reply", "missing.json"], "--reply: reply file missing.json does not exist"),
    (["--port", "99999"], "--port 99999: expected a TCP port, 1 to 65535 (or 0: any free port)"),
])
def test_the_command_names_a_bad_reply_file_or_port_without_a_traceback(argv, message, capsys, tmp_path,
                                                                         monkeypatch):
    from ttir.testing.server import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(argv)  # before: a FileNotFoundError or OverflowError traceback; /dev/zero as --reply read for ever
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_command_refuses_a_port_in_use_in_one_line(capsys):
    import socket

    from ttir.testing.server import main

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(SystemExit) as exc:
            main(["--port", str(port)])
    assert exc.value.code == 2
    assert f"--port {port}: cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err
