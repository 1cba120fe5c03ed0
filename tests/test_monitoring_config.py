"""The `monitoring` section of the stack schema: defaults and one error line per problem."""

from __future__ import annotations

import pytest

from gpu_infra.schema import SECRET_PLACEHOLDER, ConfigError

from .conftest import BASE_TRAINING, cluster_config, merged

PREFIX = "gpu-infra:cluster.monitoring"
ONCALL = {"name": "oncall", "email": "oncall@example.com"}


def problems(monitoring: dict) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        cluster_config(merged(BASE_TRAINING, monitoring=monitoring))
    return caught.value.problems


def test_defaults_off_until_contacts_are_listed():
    stack = cluster_config(BASE_TRAINING)
    assert not stack.monitoring.active
    monitoring = cluster_config(merged(BASE_TRAINING, monitoring={"contacts": [ONCALL]})).monitoring
    assert monitoring.active
    assert monitoring.silence_time == 86400
    assert set(monitoring.alarms.enabled()) == {
        "gpu_idle", "gpu_memory", "gpu_temperature", "cpu", "memory", "system_disk"}
    assert monitoring.events.spot_interruption and monitoring.events.instance_failure


def test_secret_webhooks_are_accepted_offline():
    monitoring = cluster_config(merged(BASE_TRAINING, monitoring={
        "contacts": [{"name": "robot", "dingtalk_webhook": SECRET_PLACEHOLDER}],
        "webhook": SECRET_PLACEHOLDER})).monitoring
    assert monitoring.contacts[0].dingtalk_webhook == SECRET_PLACEHOLDER


def test_enabled_alarms_need_a_contact():
    assert problems({"enabled": True}) == [
        f"{PREFIX}.contacts: alarms are enabled but nobody is notified; list at least one "
        "contact or set enabled: false"]


def test_threshold_ranges():
    assert problems({"contacts": [ONCALL], "alarms": {
        "gpu_memory": {"threshold": 120}, "gpu_temperature": {"threshold": 20}}}) == [
        f"{PREFIX}.alarms.gpu_memory.threshold: 120 is out of range; allowed 0 to 100%",
        f"{PREFIX}.alarms.gpu_temperature.threshold: 20 is out of range; allowed 30 to 110 C"]


def test_silence_time_period_and_interval():
    found = problems({"contacts": [ONCALL], "silence_time": 60,
                      "effective_interval": "25:00-23:59", "alarms": {"cpu": {"period": 120}}})
    assert found == [
        f"{PREFIX}.silence_time: input should be greater than or equal to 300 (got 60)",
        f"{PREFIX}.effective_interval: string should match pattern "
        "'^([01]?\\d|2[0-3]):[0-5]\\d-([01]?\\d|2[0-3]):[0-5]\\d$' (got '25:00-23:59')",
        f"{PREFIX}.alarms.cpu.period: input should be 60, 300, 900 or 3600 (got 120)"]


def test_contact_problems():
    assert problems({"contacts": [
        {"name": "oncall"}, {"name": "x", "email": "x@example.com"},
        {"name": "robot", "dingtalk_webhook": "http://plain.example.com"}]}) == [
        f"{PREFIX}.contacts[0].email: a contact needs an email or a dingtalk_webhook",
        f"{PREFIX}.contacts[1].name: string should match pattern '^[a-z][a-z0-9-]{{1,11}}$' "
        "(got 'x')",
        f"{PREFIX}.contacts[2].dingtalk_webhook: must be an https:// URL"]


def test_duplicate_contacts_and_bad_webhook():
    assert problems({"contacts": [ONCALL, ONCALL], "webhook": "ftp://x"}) == [
        f"{PREFIX}.contacts: oncall is listed more than once",
        f"{PREFIX}.webhook: must be an https:// URL"]


def test_unknown_alarm_is_rejected():
    [line] = problems({"contacts": [ONCALL], "alarms": {"gpu_power": {"threshold": 1}}})
    assert line.startswith(f"{PREFIX}.alarms.gpu_power: unknown key; allowed: gpu_idle, ")
