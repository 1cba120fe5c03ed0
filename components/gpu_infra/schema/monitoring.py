"""The `monitoring` section: CloudMonitor contacts, GPU fleet alarms and ECS event alerts.

The provider's allowed values (operators, statistics, periods, silence time) come from
gpu_infra_facts.allowed."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from gpu_infra.schema.base import SECRET_PLACEHOLDER, MaybeSecure, StrictModel
from gpu_infra_facts.allowed import (
    SILENCE_SECONDS,
    AlarmPeriod,
    AlarmStatistic,
)

AlarmLevel = Literal["critical", "warn", "info"]
"""Alarm level: selects `escalations_critical`, `escalations_warn` or `escalations_info`."""
PERCENT_RANGE = (0.0, 100.0)
TEMPERATURE_RANGE = (30.0, 110.0)
"""Sensible GPU temperature thresholds in degrees C."""
CONTACT_NAME_PATTERN = r"^[a-z][a-z0-9-]{1,11}$"
"""Contact names: 2-12 characters; the cloud name is `<component>-<name>` (at most 40)."""
ALERTING_SUFFIX = "alerts"
"""The alerting component is `<cluster>-alerts`, so a contact is `<cluster>-alerts-<name>`
(plus the global suffix) in CloudMonitor."""
EMAIL_PATTERN = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"
EFFECTIVE_INTERVAL_PATTERN = r"^([01]?\d|2[0-3]):[0-5]\d-([01]?\d|2[0-3]):[0-5]\d$"


def _is_webhook(url: str) -> bool:
    return url == SECRET_PLACEHOLDER or url.startswith("https://")


class AlarmSettings(StrictModel):
    """One metric alarm. Subclasses set the defaults of each alarm."""

    UNIT: ClassVar[str] = "percent"

    enabled: bool = True
    """Create this alarm. Default true."""
    threshold: float
    """The alarm's threshold (percent, or degrees C for temperature). Default per alarm."""
    level: AlarmLevel = "warn"
    """critical, warn or info. Default warn."""
    period: AlarmPeriod = 300
    """Aggregation period in seconds: 60, 300, 900 or 3600. Default 300."""
    times: int = Field(default=3, ge=1, le=100)
    """Consecutive periods over the threshold before the alarm fires. Default 3."""
    statistics: AlarmStatistic = "Average"
    """Average, Minimum or Maximum over the period. Default Average."""

    @model_validator(mode="after")
    def _check_threshold(self) -> AlarmSettings:
        low, high = TEMPERATURE_RANGE if self.UNIT == "celsius" else PERCENT_RANGE
        if not low <= self.threshold <= high:
            unit = " C" if self.UNIT == "celsius" else "%"
            raise ValueError(f"threshold: {self.threshold:g} is out of range; allowed "
                             f"{low:g} to {high:g}{unit}")
        return self


class GpuIdleAlarm(AlarmSettings):
    """GPUs idle for a long time: they cost money doing nothing."""

    threshold: float = 10
    """Fires when GPU utilisation (%) stays below this. Default 10."""
    level: AlarmLevel = "info"
    """Default info."""
    period: AlarmPeriod = 900
    """Default 900 s."""
    times: int = Field(default=8, ge=1, le=100)
    """Default 8 (2 hours at the default period)."""
    statistics: AlarmStatistic = "Maximum"
    """Default Maximum: even the busiest moment of each period was idle."""


class GpuMemoryAlarm(AlarmSettings):
    """GPU memory nearly full (out-of-memory risk)."""

    threshold: float = 95
    """Fires at or above this GPU memory utilisation (%). Default 95."""


class GpuTemperatureAlarm(AlarmSettings):
    """GPUs running hot (throttling, hardware wear)."""

    UNIT: ClassVar[str] = "celsius"
    threshold: float = 85
    """Fires at or above this GPU temperature in degrees C (30-110). Default 85."""
    level: AlarmLevel = "critical"
    """Default critical."""
    statistics: AlarmStatistic = "Maximum"
    """Default Maximum."""


class CpuAlarm(AlarmSettings):
    """Host CPU saturated (data loading starves the GPUs)."""

    threshold: float = 90
    """Fires at or above this host CPU utilisation (%). Default 90."""


class MemoryAlarm(AlarmSettings):
    """Host memory nearly full."""

    threshold: float = 90
    """Fires at or above this host memory utilisation (%). Default 90."""


class DiskAlarm(AlarmSettings):
    """System disk nearly full."""

    threshold: float = 85
    """Fires at or above this system disk usage (%). Default 85."""
    device: str = Field(default="/dev/vda1", pattern=r"^/dev/[a-z0-9]+$")
    """Device of the system disk's root partition. Default /dev/vda1."""


class FleetAlarmsConfig(StrictModel):
    """The metric alarms applied to every GPU fleet (namespace acs_ecs_dashboard; the GPU,
    memory and disk metrics need the CloudMonitor agent on the nodes)."""

    gpu_idle: GpuIdleAlarm = GpuIdleAlarm()
    """GPU utilisation low for long. Default on: below 10% (max) for 8 x 15 min, info."""
    gpu_memory: GpuMemoryAlarm = GpuMemoryAlarm()
    """GPU memory utilisation high. Default on: >= 95% for 3 x 5 min, warn."""
    gpu_temperature: GpuTemperatureAlarm = GpuTemperatureAlarm()
    """GPU temperature high. Default on: >= 85 C (max) for 3 x 5 min, critical."""
    cpu: CpuAlarm = CpuAlarm()
    """Host CPU high. Default on: >= 90% for 3 x 5 min, warn."""
    memory: MemoryAlarm = MemoryAlarm()
    """Host memory high. Default on: >= 90% for 3 x 5 min, warn."""
    system_disk: DiskAlarm = DiskAlarm()
    """System disk usage high. Default on: >= 85% for 3 x 5 min, warn."""

    def enabled(self) -> dict[str, AlarmSettings]:
        """The alarms that are on, by field name."""
        return {name: getattr(self, name) for name in type(self).model_fields
                if getattr(self, name).enabled}


class EventsConfig(StrictModel):
    """ECS system events sent to the contacts (event-triggered alert rules)."""

    spot_interruption: bool = True
    """Alert on spot reclaim notices (about 5 minutes before release). Default true."""
    instance_failure: bool = True
    """Alert on host and instance failures (restart, redeploy, stop). Default true."""
    scaling_failure: bool = True
    """Scaling fleets: alert on scale-out and scale-in activities that fail, partly succeed
    (a new node whose bootstrap failed abandons its readiness action and is released) or
    are rejected. Default true."""
    gpu_health: bool = True
    """ECS fleets: alert when a node's GPU health check finds a fault after boot (the
    custom metric GPU_HEALTH_METRIC of gpu_infra_facts.cloudmonitor: XID or ECC errors, a
    GPU off the bus, a driver that does not answer, eRDMA down). Default true."""


class Contact(StrictModel):
    """Someone who receives alerts: an email address and/or a DingTalk robot webhook."""

    name: str = Field(pattern=CONTACT_NAME_PATTERN)
    """Short name, 2-12 lowercase letters, digits, hyphens. Required."""
    email: str | None = Field(default=None, pattern=EMAIL_PATTERN)
    """Email address (the recipient must confirm it). Default none."""
    dingtalk_webhook: Annotated[str | None, MaybeSecure] = None
    """DingTalk robot webhook URL (https://...); keep it a secret in the stack file
    (`secure:`). Default none."""

    @model_validator(mode="after")
    def _check_channels(self) -> Contact:
        problems: list[str] = []
        if self.email is None and self.dingtalk_webhook is None:
            problems.append("email: a contact needs an email or a dingtalk_webhook")
        if self.dingtalk_webhook is not None and not _is_webhook(self.dingtalk_webhook):
            problems.append("dingtalk_webhook: must be an https:// URL")
        if problems:
            raise ValueError("\n".join(problems))
        return self


class MonitoringConfig(StrictModel):
    """CloudMonitor alerting: who is told, and about what."""

    enabled: bool | None = None
    """Create the contacts, alarms and event rules. Default: on when `contacts` are
    listed."""
    contacts: list[Contact] = []
    """Who receives alerts (one contact group). Default none."""
    webhook: Annotated[str | None, MaybeSecure] = None
    """Extra https:// URL that receives the event alerts (spot, failures); may be a secret
    (`secure:`). Default none."""
    silence_time: int = Field(default=86400, ge=SILENCE_SECONDS[0], le=SILENCE_SECONDS[1])
    """Seconds before a firing alarm notifies again (300-86400). Default 86400."""
    effective_interval: str = Field(default="00:00-23:59", pattern=EFFECTIVE_INTERVAL_PATTERN)
    """Hours in which alarms notify, hh:mm-hh:mm. Default 00:00-23:59."""
    alarms: FleetAlarmsConfig = FleetAlarmsConfig()
    """Metric alarms per GPU fleet. Default: all on."""
    events: EventsConfig = EventsConfig()
    """Event alerts. Default: spot interruption, instance failure and scaling failure on."""

    @property
    def active(self) -> bool:
        """Whether monitoring resources are created."""
        return bool(self.contacts) if self.enabled is None else self.enabled

    @model_validator(mode="after")
    def _check_contacts(self) -> MonitoringConfig:
        problems: list[str] = []
        names = [contact.name for contact in self.contacts]
        problems += [f"contacts: {name} is listed more than once"
                     for name in sorted({n for n in names if names.count(n) > 1})]
        if self.webhook is not None and not _is_webhook(self.webhook):
            problems.append("webhook: must be an https:// URL")
        alerting = self.alarms.enabled() or self.events.spot_interruption or \
            self.events.instance_failure or self.events.scaling_failure or \
            self.events.gpu_health
        if self.enabled and alerting and not self.contacts:
            problems.append("contacts: alarms are enabled but nobody is notified; list at "
                            "least one contact or set enabled: false")
        if problems:
            raise ValueError("\n".join(problems))
        return self
