"""Device plans for the Ray executor and the spec's `devices` field (no Ray needed)."""

from __future__ import annotations

import pytest

from experiments.executor import make_executor
from experiments.ray.devices import DeviceBinding, adb_resource, declared_serials, plan_bindings
from experiments.spec import DeviceSpec, ExperimentSpec


def test_specs_without_devices_still_load_and_mean_simulated_phones(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("name: old\ntasks: [SystemWifiTurnOn]\nperturbations: [clean]\n", encoding="utf-8")
    spec = ExperimentSpec.from_yaml(p)
    assert spec.devices.kind == "sim" and spec.devices.serials is None


def test_devices_field_is_validated_with_the_field_named(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text("tasks: [SystemWifiTurnOn]\ndevices: {kind: sim, serials: [emulator-5554]}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="devices.serials"):
        ExperimentSpec.from_yaml(p)
    with pytest.raises(ValueError, match="listed once"):
        DeviceSpec(kind="adb", serials=["a", "a"])
    with pytest.raises(ValueError, match="non-empty"):
        DeviceSpec(kind="adb", serials=[])
    with pytest.raises(ValueError, match="devices.options"):
        DeviceSpec(kind="sim", options={"dpi": 320})  # the local executor could not honour it


def test_sim_plan_has_one_binding_per_worker_and_needs_no_phone_resource():
    plan = plan_bindings(DeviceSpec(), 3, {"CPU": 2.0})
    assert [b.label for b in plan] == ["sim", "sim", "sim"]
    assert all(b.resources == {} for b in plan)


def test_adb_plan_discovers_declared_phones_and_holds_each_whole():
    cluster = {"CPU": 4.0, adb_resource("emulator-5556"): 1.0, adb_resource("10.0.0.7:5555"): 1.0, "GPU": 1.0}
    assert declared_serials(cluster) == ["10.0.0.7:5555", "emulator-5556"]
    plan = plan_bindings(DeviceSpec(kind="adb", options={"settle_seconds": 0.2}), 1, cluster)
    assert [b.serial for b in plan] == ["10.0.0.7:5555", "emulator-5556"]
    assert plan[1].resources == {"ttir_adb:emulator-5556": 1.0}
    assert plan[1].options == {"settle_seconds": 0.2} and plan[1].label == "adb:emulator-5556"


def test_adb_plan_refuses_phones_no_node_declares():
    cluster = {"CPU": 2.0, adb_resource("emulator-5554"): 1.0}
    with pytest.raises(ValueError, match="emulator-5556"):
        plan_bindings(DeviceSpec(kind="adb", serials=["emulator-5554", "emulator-5556"]), 2, cluster)
    with pytest.raises(ValueError, match="found no phone"):
        plan_bindings(DeviceSpec(kind="adb"), 2, {"CPU": 2.0})


def test_bindings_are_picklable_values():
    import pickle

    b = DeviceBinding("adb", "emulator-5554", {"settle_seconds": 0.1})
    assert pickle.loads(pickle.dumps(b)) == b


def test_local_executor_refuses_adb_phones():
    with pytest.raises(ValueError, match="devices.kind='adb'"):
        make_executor("local", 2, devices=DeviceSpec(kind="adb", serials=["emulator-5554"]))
    assert make_executor("local", 2, devices=DeviceSpec()).workers == 2


def test_a_given_up_episode_has_the_fields_of_a_worker_error_record(tmp_path):
    from experiments.ray.executor import failure_record
    from experiments.spec import AgentSpec, EpisodeSpec
    from experiments.worker import run_one

    ep = EpisodeSpec(task="NoSuchTask", perturbation="popup_permission", agent=AgentSpec(name="p", kind="planner"))
    worker_error = run_one(ep, root=str(tmp_path))  # make_task fails: the worker's own error record
    given_up = failure_record(ep, "failed on 3 actor(s)", 3)
    assert worker_error["status"] == given_up["status"] == "error"
    assert set(worker_error) <= set(given_up)
    for key in worker_error.keys() - {"error", "wall_s"}:
        assert given_up[key] == worker_error[key], key
