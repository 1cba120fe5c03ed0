"""Alibaba Cloud region ids accepted in `alicloud:region`, and the zones of each.

Source: Alibaba Cloud "Regions and zones" documentation (public regions, checked 2026-11);
the zones are in zones.json beside this module, with their source and date.
"""

import json
from importlib import resources

REGIONS: frozenset[str] = frozenset(
    {
        "cn-qingdao", "cn-beijing", "cn-zhangjiakou", "cn-huhehaote", "cn-wulanchabu",
        "cn-hangzhou", "cn-shanghai", "cn-nanjing", "cn-fuzhou", "cn-wuhan-lr",
        "cn-shenzhen", "cn-heyuan", "cn-guangzhou", "cn-chengdu", "cn-hongkong",
        "ap-southeast-1", "ap-southeast-3", "ap-southeast-5", "ap-southeast-6",
        "ap-southeast-7", "ap-northeast-1", "ap-northeast-2", "us-east-1", "us-west-1",
        "eu-central-1", "eu-west-1", "me-east-1", "me-central-1", "na-south-1",
    }
)


def zone_belongs_to(zone_id: str, region: str) -> bool:
    """True when `zone_id` names a zone of `region` (e.g. cn-hangzhou-i, ap-southeast-1a)."""
    suffix = zone_id.removeprefix(region)
    if suffix == zone_id:
        return False
    suffix = suffix.removeprefix("-")
    return len(suffix) == 1 and suffix.isalpha() and suffix.islower()


def zone_letter(zone_id: str) -> str:
    """The zone's letter: `cn-hangzhou-i` -> `i`."""
    return zone_id[-1]


ZONES_FILE = resources.files(__package__) / "zones.json"
_ZONE_DATA = json.loads(ZONES_FILE.read_text(encoding="utf-8"))
ZONES: dict[str, frozenset[str]] = {region: frozenset(zones)
                                    for region, zones in _ZONE_DATA["zones"].items()}
"""Region -> the zone ids it has (zones.json: sources, date and what is UNCONFIRMED there)."""
ZONES_CHECKED: str = _ZONE_DATA["checked"]
"""The date the zone list was last read against its sources."""


def known_zone(zone_id: str, region: str) -> bool:
    """Whether `zone_id` is a zone of `region` the floor lists (a new zone is declared in
    the stack: network.declared_zones)."""
    return zone_id in ZONES.get(region, frozenset())
