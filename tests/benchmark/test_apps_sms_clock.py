"""Simple SMS Messenger and Clock: app behaviour, and every SMS / Clock task's
reference solution under the layout perturbations (font, density, landscape, dark)."""

from __future__ import annotations

import datetime as dt

import pytest

from benchmark import TASKS, SimDevice, make_task
from benchmark.agents import ReferenceAgent
from benchmark.apps.clock import ClockApp, fmt_stopwatch, split_timer_input, timer_digits_for
from benchmark.apps.sms import SmsMessengerApp, same_number
from ttir.core.types import Action, Observation

SMS = SmsMessengerApp.package
CLOCK = ClockApp.package


def _tap(d: SimDevice, **find) -> None:
    hits = d.observe().find(**find)
    assert hits, f"nothing on screen matches {find}"
    x, y = hits[0].center
    d.execute(Action(action_type="click", x=x, y=y))


def _type(d: SimDevice, resource_id: str, value: str) -> None:
    x, y = d.observe().find(resource_id=resource_id)[0].center
    d.execute(Action(action_type="input_text", x=x, y=y, text=value, clear_text=True))


def _texts(obs: Observation, resource_id: str) -> list[str]:
    return [e.text for e in obs.find(resource_id=resource_id)]


# ------------------------------------------------------------------ SMS


def test_sending_to_a_number_records_the_message_with_recipient_and_simulated_time(device):
    device.launch("Simple SMS Messenger")
    _tap(device, content_desc="New conversation")
    _type(device, f"{SMS}:id/new_conversation_address", "+1 555 010 7788")
    _tap(device, resource_id=f"{SMS}:id/new_conversation_confirm")
    device.execute(Action(action_type="wait", seconds=30))
    before = device.clock.now()
    _type(device, f"{SMS}:id/thread_type_message", "Hello from the test")
    sent_at = device.clock.now()
    _tap(device, resource_id=f"{SMS}:id/thread_send_message")
    sent = device.app(SMS).data.sent()
    assert len(sent) == 1
    assert sent[0].body == "Hello from the test" and same_number(sent[0].address, "+15550107788")
    assert before < sent[0].date == sent_at  # stamped with the simulated time of the tap
    obs = device.observe()
    assert "Hello from the test" in _texts(obs, f"{SMS}:id/thread_message_body")
    assert obs.find(resource_id=f"{SMS}:id/thread_type_message")[0].text == "Type a message…"  # the draft is cleared


def test_recipient_by_contact_name_uses_the_contacts_number(device):
    device.app("Contacts").data.add(first="Ada", last="Lovelace", phone="+15550001111")
    device.app("Contacts").data.add(first="Alan", last="Turing", phone="+15550002222")
    device.launch("Messages")
    _tap(device, content_desc="New conversation")
    _type(device, f"{SMS}:id/new_conversation_address", "ada lovelace")
    # the contact list is filtered as one types
    assert _texts(device.observe(), f"{SMS}:id/item_contact_name") == ["Ada Lovelace"]
    _tap(device, resource_id=f"{SMS}:id/new_conversation_confirm")
    assert device.observe().find(resource_id=f"{SMS}:id/title")[0].text == "Ada Lovelace"
    _type(device, f"{SMS}:id/thread_type_message", "hi")
    _tap(device, resource_id=f"{SMS}:id/thread_send_message")
    assert device.app(SMS).data.sent()[0].address == "+15550001111"


def test_conversation_list_shows_names_snippets_and_unread_until_opened(device):
    sms = device.app(SMS).data
    device.app("Contacts").data.add(first="Grace", last="Hopper", phone="+15559990000")
    now = device.clock.now()
    sms.receive("+15559990000", "Old news", now - dt.timedelta(days=2), read=True)
    sms.receive("+15551234567", "Newest text", now - dt.timedelta(minutes=5))
    device.launch("SMS Messenger")
    obs = device.observe()
    assert _texts(obs, f"{SMS}:id/conversation_address") == ["+15551234567", "Grace Hopper"]
    assert _texts(obs, f"{SMS}:id/conversation_body_short") == ["Newest text", "Old news"]
    assert _texts(obs, f"{SMS}:id/conversation_date")[0] == "3:29 PM"
    _tap(device, text="+15551234567")
    assert all(m.read for m in sms.inbox())


def test_deleting_a_conversation_asks_first_and_keeps_the_others(device):
    sms = device.app(SMS).data
    now = device.clock.now()
    sms.receive("+15550000001", "one", now)
    sms.receive("+15550000002", "two", now)
    device.launch("SMS Messenger")
    _tap(device, text="+15550000001")
    _tap(device, content_desc="Delete")
    _tap(device, text="No")
    assert len(sms.conversations()) == 2
    _tap(device, content_desc="Delete")
    _tap(device, text="Yes")
    assert [c.address for c in sms.conversations()] == ["+15550000002"]
    assert device.observe().foreground.endswith(".activities.MainActivity")


def test_long_press_selects_a_conversation_for_deletion_and_back_leaves_selection(device):
    sms = device.app(SMS).data
    now = device.clock.now()
    sms.receive("+15550000001", "one", now)
    sms.receive("+15550000002", "two", now - dt.timedelta(minutes=1))
    device.launch("SMS Messenger")
    x, y = device.observe().find(text="+15550000002")[0].center
    device.execute(Action(action_type="long_press", x=x, y=y))
    assert device.observe().find(text="1 selected")
    device.execute(Action(action_type="navigate_back"))
    assert not device.observe().find(text="1 selected") and device.foreground_pkg == SMS
    device.execute(Action(action_type="long_press", x=x, y=y))
    _tap(device, content_desc="Delete")
    _tap(device, text="Yes")
    assert [c.address for c in sms.conversations()] == ["+15550000001"]
    assert not device.observe().find(text="1 selected")


def test_24h_setting_changes_displayed_times(device):
    device.app(SMS).data.receive("+15550000001", "hey", device.clock.now() - dt.timedelta(minutes=4))
    device.app(CLOCK).data.add_alarm(19, 5)
    device.launch("SMS Messenger")
    assert _texts(device.observe(), f"{SMS}:id/conversation_date") == ["3:30 PM"]
    device.configure(time_format=24)
    assert _texts(device.observe(), f"{SMS}:id/conversation_date") == ["15:30"]
    device.launch("Clock")
    assert _texts(device.observe(), f"{CLOCK}:id/digital_clock") == ["19:05"]
    device.configure(time_format=12)
    assert _texts(device.observe(), f"{CLOCK}:id/digital_clock") == ["7:05 PM"]


# ------------------------------------------------------------------ Clock


def test_stopwatch_shows_elapsed_simulated_time_and_pauses(device):
    device.launch("Clock")
    _tap(device, content_desc="Stopwatch")
    time_id = f"{CLOCK}:id/stopwatch_time_text"
    assert _texts(device.observe(), time_id) == ["00:00.00"]
    _tap(device, content_desc="Start")  # the tap itself takes 2 s
    device.execute(Action(action_type="wait", seconds=61))  # 2 s + 61 s
    assert _texts(device.observe(), time_id) == ["01:05.00"]
    assert device.observe().find(content_desc="Lap") and device.observe().find(content_desc="Pause")
    _tap(device, content_desc="Lap")
    _tap(device, content_desc="Pause")  # 67 s at the tap
    device.execute(Action(action_type="wait", seconds=100))
    sw = device.app(CLOCK).data.stopwatch
    assert not sw.running and sw.laps == [65.0]
    assert _texts(device.observe(), time_id) == ["01:07.00"]  # paused: does not move
    _tap(device, content_desc="Reset")
    assert _texts(device.observe(), time_id) == ["00:00.00"] and not sw.laps


def test_timer_keypad_fills_digits_from_the_right(device):
    device.launch("Clock")
    _tap(device, content_desc="Timer")
    shown = lambda: device.observe().find(resource_id=f"{CLOCK}:id/timer_setup_time")[0]  # noqa: E731
    _tap(device, resource_id=f"{CLOCK}:id/timer_setup_digit_0")  # a leading zero does nothing
    assert shown().text == "00h 00m 00s"
    for key in ("1", "2", "3"):
        _tap(device, resource_id=f"{CLOCK}:id/timer_setup_digit_{key}")
    assert shown().text == "00h 01m 23s" and shown().content_desc == "0 hours, 1 minutes, 23 seconds"
    _tap(device, resource_id=f"{CLOCK}:id/timer_setup_digit_00")
    assert shown().text == "01h 23m 00s"
    _tap(device, content_desc="Delete")
    assert shown().text == "00h 12m 30s"
    assert device.app(CLOCK).data.timer_setup == (0, 12, 30)
    # starting it turns the entry into a running countdown on the simulated clock
    _tap(device, content_desc="Start")
    device.execute(Action(action_type="wait", seconds=56))  # the Start tap 2 s, then 2 s + 56 s
    assert _texts(device.observe(), f"{CLOCK}:id/timer_time_text") == ["11:30"]


def test_timer_digit_helpers_agree():
    assert split_timer_input("12345") == (1, 23, 45)
    assert timer_digits_for(0, 5, 7) == "507" and split_timer_input(timer_digits_for(23, 0, 9)) == (23, 0, 9)
    assert fmt_stopwatch(3723.456) == "1:02:03.46"


@pytest.mark.parametrize("fmt, hour_text, pm_visible", [(12, "3", True), (24, "15", False)])
def test_alarm_picker_honours_12_24h_and_creates_enabled_alarm(device, fmt, hour_text, pm_visible):
    device.configure(time_format=fmt)
    device.launch("Clock")
    _tap(device, content_desc="Add alarm")
    obs = device.observe()
    assert obs.find(resource_id=f"{CLOCK}:id/material_hour_text_input")[0].text == hour_text  # prefilled: now
    assert bool(obs.find(text="PM")) is pm_visible
    _type(device, f"{CLOCK}:id/material_hour_text_input", "7" if fmt == 12 else "19")
    _type(device, f"{CLOCK}:id/material_minute_text_input", "45")
    device.execute(Action(action_type="keyboard_enter"))
    if fmt == 12:
        _tap(device, text="PM")
    _tap(device, text="OK")
    alarms = device.app(CLOCK).data.alarms
    assert [(a.hour, a.minute, a.enabled) for a in alarms] == [(19, 45, True)]
    # the switch turns it off
    _tap(device, resource_id=f"{CLOCK}:id/onoff")
    assert alarms[0].enabled is False


def test_alarm_picker_rejects_an_invalid_hour(device):
    device.launch("Clock")
    _tap(device, content_desc="Add alarm")
    _type(device, f"{CLOCK}:id/material_hour_text_input", "13")
    device.execute(Action(action_type="keyboard_enter"))
    _tap(device, text="OK")
    assert not device.app(CLOCK).data.alarms and device.observe().find(text="Enter time")


# ------------------------------------------------------------------ tasks under layout perturbations

MY_TASKS = sorted(n for n, cls in TASKS.items() if cls.__module__ in ("benchmark.tasks.sms", "benchmark.tasks.clock"))
PERTURBED = {
    "font_large": {"font_scale": 1.35},
    "zoomed_out": {"density_scale": 0.76, "size_scale": 0.88},
    "landscape": {"orientation": "landscape"},
    "dark": {"dark_theme": True},
}


def test_at_least_eight_sms_and_clock_tasks():
    assert len(MY_TASKS) >= 8
    assert {"SimpleSmsSend", "SimpleSmsReply", "ClockTimerEntry", "ClockStopWatchRunning"} <= set(MY_TASKS)


@pytest.mark.parametrize("setting", list(PERTURBED))
@pytest.mark.parametrize("name", MY_TASKS)
def test_reference_solution_survives_layout_perturbations(name, setting):
    task = make_task(name, seed=3)
    device = SimDevice()
    device.reset(task)
    device.configure(**PERTURBED[setting])
    agent = ReferenceAgent(task.reference_solution())
    limit = 2 * task.reference_steps + 2
    for _ in range(limit + 1):
        step = agent.step(device.observe())
        if step.action.action_type == "status":
            break
        device.execute(step.action)
    else:
        pytest.fail(f"{name} under {setting}: the plan did not finish within {limit} steps")
    assert task.verify(device), f"{name} under {setting}: verify is False after the reference solution"


# ------------------------------------------------------------------ verifiers reject near misses


def test_sms_verifiers_reject_wrong_recipient_wrong_text_and_double_resend():
    task = make_task("SimpleSmsSend", seed=1)
    d = SimDevice()
    d.reset(task)
    sms = d.app(SMS).data
    sms.send("+19999999999", task.params["message"], d.clock.now())
    sms.send(task.params["number"], "something else", d.clock.now())
    assert not task.verify(d)
    sms.send(task.params["number"], task.params["message"].upper() + "  ", d.clock.now())
    assert task.verify(d)  # case and spacing do not matter

    resend = make_task("SimpleSmsResend", seed=2)
    d.reset(resend)
    sms = d.app(SMS).data
    assert d.system.notifications and d.system.notifications[0].title == resend.params["name"]
    sms.send(resend.params["number"], resend.params["message"], d.clock.now())
    assert resend.verify(d)
    sms.send(resend.params["number"], resend.params["message"], d.clock.now())
    assert not resend.verify(d)  # sent twice


def test_delete_conversation_verifier_needs_the_others_kept():
    task = make_task("SimpleSmsDeleteConversation", seed=4)
    d = SimDevice()
    d.reset(task)
    sms = d.app(SMS).data
    other = next(c.address for c in sms.conversations() if not same_number(c.address, task.params["number"]))
    sms.delete_thread(task.params["number"])
    assert task.verify(d)
    sms.delete_thread(other)
    assert not task.verify(d)


def test_clock_verifiers_reject_a_started_timer_and_the_wrong_half_of_the_day():
    timer = make_task("ClockTimerEntry", seed=5)
    d = SimDevice()
    d.reset(timer)
    clock = d.app(CLOCK).data
    p = timer.params
    clock.timer_input = timer_digits_for(p["hours"], p["minutes"], p["seconds"])
    assert timer.verify(d)
    clock.add_timer(p["hours"] * 3600 + p["minutes"] * 60 + p["seconds"], d.clock.elapsed)
    assert not timer.verify(d)  # "Do not start the timer."

    alarm = make_task("ClockAlarmCreate", seed=6)
    d.reset(alarm)
    clock = d.app(CLOCK).data
    h, m = alarm.params["hour"], alarm.params["minute"]
    assert [a.enabled for a in clock.alarms_at((h + 12) % 24, m)] == [False]  # the seeded trap
    clock.alarms_at((h + 12) % 24, m)[0].enabled = True
    assert not alarm.verify(d)
    clock.add_alarm(h, m)
    assert alarm.verify(d)
