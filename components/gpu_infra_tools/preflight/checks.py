"""The preflight checks: each reads the account with read-only calls (and RunInstances with
DryRun) and returns one Result per thing the stack asks for. APIs and the response fields
read, from each API reference (ECS 2014-05-26, ACK 2015-12-15, KMS 2016-01-20, CloudMonitor
2019-01-01, OSS):

- stock: ECS DescribeAvailableResource (DestinationResource=InstanceType, per billing):
  AvailableZones.AvailableZone[].{ZoneId, AvailableResources.AvailableResource[].
  SupportedResources.SupportedResource[].{Value, Status, StatusCategory}};
- quota: ECS DescribeAccountAttributes (max-postpaid-instance-vcpu-count,
  max-spot-instance-vcpu-count): AccountAttributeItems.AccountAttributeItem[].{AttributeName,
  AttributeValues.ValueItem[].Value}; vCPUs of types the catalog lacks from
  DescribeInstanceTypes (InstanceTypes.InstanceType[].{InstanceTypeId, CpuCoreCount});
- spot: ECS DescribeSpotAdvice (AvailableSpotZones.AvailableSpotZone[].{ZoneId,
  AvailableSpotResources.AvailableSpotResource[].{InstanceType, InterruptionRate,
  InterruptRateDesc, AverageSpotDiscount}}) and DescribeSpotPriceHistory
  (SpotPrices.SpotPriceType[].{ZoneId, SpotPrice, OriginPrice, Timestamp});
- ack: ACK DescribeKubernetesVersionMetadata (GET /api/v1/metadata/versions: [{version,
  creatable}]) and ListAddons (GET /addons: {addons: [{name, version}]});
- image: ECS DescribeImages (Images.Image[].{ImageId, Status});
- kms: KMS DescribeKey (KeyMetadata.KeyState; Forbidden.KeyNotFound);
- bucket: OSS GetBucketInfo (200 yours, 404 NoSuchBucket free, 403 AccessDenied taken);
- contact: CloudMonitor DescribeContactList (Contacts.Contact[].{Name, Channels.Mail,
  ChannelsState.Mail}: OK once the address is activated);
- dryrun: ECS RunInstances with DryRun=true (DryRunOperation = would succeed). ESS
  CreateScalingConfiguration and ACK CreateClusterNodePool offer no DryRun: their fleets are
  dry-run as RunInstances with the same type, image, zone and disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from gpu_infra import catalog
from gpu_infra_tools.alibaba.client import AlibabaClient, ApiError
from gpu_infra_tools.preflight.demand import Demand, Fleet
from gpu_infra_tools.preflight.results import Level, Result

IN_STOCK = ("WithStock", "ClosedWithStock")
"""SupportedResource.StatusCategory values with stock (Closed: the type is being retired)."""
HIGH_INTERRUPTION_PERCENT = 10.0
"""A spot pool interrupted more often than this over the last 30 days is warned about."""
SPOT_HISTORY_DAYS = 7
RUN_INSTANCES_MAX_AMOUNT = 100
"""RunInstances `Amount`: 1-100."""
NETWORK_CODES = ("InvalidVSwitchId", "InvalidSecurityGroupId", "MissingParameter.VSwitchId",
                 "MissingParameter.SecurityGroupId", "InvalidParameter.VSwitchId")
"""DryRun answers about the network the stack itself creates: not checkable before it."""

Check = Callable[[AlibabaClient, Demand, catalog.Lookup], Iterable[Result]]


def _items(document: Any, *keys: str) -> list[Any]:
    """document[k1][k2]... as a list ([] where a key is missing: Alibaba omits empty lists)."""
    node = document
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, list) else []


def _billing(fleet: Fleet) -> str:
    return "spot" if fleet.spot else "subscription" if fleet.prepaid else "pay-as-you-go"


def _offer(client: AlibabaClient, spot: bool, prepaid: bool) -> dict[str, set[str]]:
    """Zone -> instance types with stock, for one kind of billing."""
    answer = client.rpc("ecs", "DescribeAvailableResource", {
        "RegionId": client.region, "DestinationResource": "InstanceType",
        "InstanceChargeType": "PrePaid" if prepaid else "PostPaid",
        "SpotStrategy": "SpotAsPriceGo" if spot else "NoSpot",
        "IoOptimized": "optimized", "ResourceType": "instance"})
    offer: dict[str, set[str]] = {}
    for zone in _items(answer, "AvailableZones", "AvailableZone"):
        kinds = offer.setdefault(str(zone.get("ZoneId")), set())
        for resource in _items(zone, "AvailableResources", "AvailableResource"):
            for supported in _items(resource, "SupportedResources", "SupportedResource"):
                if supported.get("Status") == "Available" and \
                        supported.get("StatusCategory") in IN_STOCK:
                    kinds.add(str(supported.get("Value")))
    return offer


def check_stock(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
                ) -> Iterator[Result]:
    """Every planned type in every planned zone, for its billing; where stock is missing,
    the zones of the region that have the type and the types of the same GPU that the planned
    zones have."""
    offers: dict[tuple[bool, bool], dict[str, set[str]]] = {}
    for fleet in demand.fleets:
        kinds = [(fleet.spot, fleet.prepaid)] + ([(False, fleet.prepaid)]
                                                  if fleet.spot and fleet.on_demand_too else [])
        for kind in kinds:
            if kind not in offers:
                offers[kind] = _offer(client, *kind)
            yield _fleet_stock(replace(fleet, spot=kind[0]), offers[kind], lookup)


def _fleet_stock(fleet: Fleet, offer: dict[str, set[str]], lookup: catalog.Lookup) -> Result:
    pairs = [(t, z) for t in fleet.instance_types for z in fleet.zones]
    missing = [(t, z) for t, z in pairs if t not in offer.get(z, set())]
    if not missing:
        return Result("stock", "ok", fleet.path,
                      f"{', '.join(fleet.instance_types)} in stock ({_billing(fleet)}) in "
                      f"{', '.join(fleet.zones)}")
    usable = len(missing) < len(pairs)
    level: Level = "warning" if usable and not fleet.fixed or fleet.at_up == 0 else "error"
    gaps = "; ".join(f"{t} in {z}" for t, z in missing)
    return Result("stock", level, fleet.path,
                  f"no {_billing(fleet)} stock for {gaps}"
                  + (f" (the fleet can launch from the other {len(pairs) - len(missing)} "
                     "type/zone pairs)" if usable else "")
                  + _elsewhere(fleet, missing, offer, lookup))


def _elsewhere(fleet: Fleet, missing: list[tuple[str, str]], offer: dict[str, set[str]],
               lookup: catalog.Lookup) -> str:
    hints: list[str] = []
    for kind in dict.fromkeys(t for t, _ in missing):
        zones = sorted(z for z, kinds in offer.items() if kind in kinds and z not in fleet.zones)
        hints.append(f"{kind} has stock in {', '.join(zones)}" if zones
                     else f"{kind} has no stock in any zone of the region")
        entry = lookup.get(kind)
        if entry is not None:
            like = sorted({other for z in fleet.zones for other in offer.get(z, set())
                           if other != kind and (o := lookup.get(other)) is not None
                           and o.gpu_model == entry.gpu_model})
            if like:
                hints.append(f"{entry.gpu_model} types in stock in "
                             f"{', '.join(fleet.zones)}: {', '.join(like)}")
    return "; " + "; ".join(hints)


QUOTAS = {False: "max-postpaid-instance-vcpu-count", True: "max-spot-instance-vcpu-count"}
DESCRIBE_INSTANCE_TYPES_BATCH = 10
"""DescribeInstanceTypes `InstanceTypes.N`: at most 10 types a call."""


def _vcpus(client: AlibabaClient, kinds: Iterable[str], lookup: catalog.Lookup) -> dict[str, int]:
    """vCPUs per type: the catalog's, else ECS DescribeInstanceTypes
    (InstanceTypes.InstanceType[].{InstanceTypeId, CpuCoreCount})."""
    found = {k: e.vcpu for k in kinds if (e := lookup.get(k)) is not None and e.vcpu is not None}
    unknown = sorted(set(kinds) - set(found))
    for start in range(0, len(unknown), DESCRIBE_INSTANCE_TYPES_BATCH):
        batch = unknown[start:start + DESCRIBE_INSTANCE_TYPES_BATCH]
        answer = client.rpc("ecs", "DescribeInstanceTypes", {
            f"InstanceTypes.{n}": kind for n, kind in enumerate(batch, 1)})
        for item in _items(answer, "InstanceTypes", "InstanceType"):
            if item.get("InstanceTypeId") in batch and item.get("CpuCoreCount") is not None:
                found[str(item["InstanceTypeId"])] = int(item["CpuCoreCount"])
    return found


def check_quota(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
                ) -> Iterator[Result]:
    """The pay-as-you-go and spot vCPU quotas against the vCPUs of the instances created at
    `pulumi up` (ERROR above it) and at the fleets' peak (WARNING above it); a fleet counts
    its largest type."""
    fleets = [f for f in demand.fleets if not f.prepaid]
    if not fleets:
        return
    answer = client.rpc("ecs", "DescribeAccountAttributes", {
        "RegionId": client.region, "AttributeName.1": QUOTAS[False],
        "AttributeName.2": QUOTAS[True]})
    quotas: dict[str, int] = {}
    for item in _items(answer, "AccountAttributeItems", "AccountAttributeItem"):
        values = [int(float(v.get("Value"))) for v in
                  _items(item, "AttributeValues", "ValueItem") if v.get("Value") is not None]
        if values:
            quotas[str(item.get("AttributeName"))] = max(values)
    vcpus = _vcpus(client, {t for f in fleets for t in f.instance_types}, lookup)
    for spot in (False, True):
        mine = [f for f in fleets if f.spot == spot]
        if not mine:
            continue
        name = QUOTAS[spot]
        path = mine[0].path if len(mine) == 1 else ", ".join(f.path for f in mine)
        largest = {f.name: max((vcpus.get(t, 0) for t in f.instance_types), default=0)
                   for f in mine}
        at_up = sum(f.at_up * largest[f.name] for f in mine)
        peak = sum(f.peak * largest[f.name] for f in mine)
        unknown = sorted({t for f in mine for t in f.instance_types if t not in vcpus})
        uncounted = (f"; not counted, vCPUs unknown: {', '.join(unknown)}" if unknown else "")
        quota = quotas.get(name)
        if quota is None:
            yield Result("quota", "warning", path, f"the account did not report {name}")
            continue
        level: Level = "error" if at_up > quota else "warning" if peak > quota else "ok"
        yield Result("quota", level, path,
                     f"{at_up} vCPUs at pulumi up, {peak} at the fleets' peak; {name} is "
                     f"{quota} (instances already running in {client.region} count against "
                     f"it too){uncounted}")


def check_spot(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
               ) -> Iterator[Result]:
    """For spot fleets: the 30-day interruption rate per type and zone (DescribeSpotAdvice)
    and the newest spot price against the fleet's price limit (DescribeSpotPriceHistory)."""
    fleets = [f for f in demand.fleets if f.spot]
    kinds = list(dict.fromkeys(t for f in fleets for t in f.instance_types))
    if not kinds:
        return
    advice_parameters: dict[str, str] = {"RegionId": client.region}
    advice_parameters.update({f"InstanceTypes.{n}": t for n, t in enumerate(kinds, 1)})
    advice = client.rpc("ecs", "DescribeSpotAdvice", advice_parameters)
    rates: dict[tuple[str, str], dict[str, Any]] = {}
    for zone in _items(advice, "AvailableSpotZones", "AvailableSpotZone"):
        for resource in _items(zone, "AvailableSpotResources", "AvailableSpotResource"):
            rates[(str(resource.get("InstanceType")), str(zone.get("ZoneId")))] = resource
    start = (datetime.now(timezone.utc) - timedelta(days=SPOT_HISTORY_DAYS)) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")
    for fleet in fleets:
        for kind in fleet.instance_types:
            for zone in fleet.zones:
                yield _spot_pool(client, fleet, kind, zone, rates.get((kind, zone)), start)


def _spot_pool(client: AlibabaClient, fleet: Fleet, kind: str, zone: str,
               rate: dict[str, Any] | None, start: str) -> Result:
    history = client.rpc("ecs", "DescribeSpotPriceHistory", {
        "RegionId": client.region, "ZoneId": zone, "InstanceType": kind,
        "NetworkType": "vpc", "StartTime": start})
    points = sorted(_items(history, "SpotPrices", "SpotPriceType"),
                    key=lambda p: str(p.get("Timestamp")))
    notes: list[str] = []
    level: Level = "ok"
    if points:
        newest = points[-1]
        price, origin = float(newest.get("SpotPrice", 0)), float(newest.get("OriginPrice", 0))
        share = f" ({price / origin:.0%} of on-demand {origin:g})" if origin else ""
        notes.append(f"spot {price:g}/h{share} at {newest.get('Timestamp')}")
        if fleet.spot_price_limit is not None and price > fleet.spot_price_limit:
            level = "warning"
            notes.append(f"above the price limit {fleet.spot_price_limit:g}: no instance "
                         "launches at that limit now")
    else:
        level = "warning"
        notes.append(f"no spot price in the last {SPOT_HISTORY_DAYS} days (not sold as spot "
                     "here?)")
    if rate is None:
        notes.append("no interruption advice")
    else:
        percent = float(rate.get("InterruptionRate") or 0)
        notes.append(f"interrupted {rate.get('InterruptRateDesc') or f'{percent:g}%'} of the "
                     "time over 30 days")
        if percent > HIGH_INTERRUPTION_PERCENT:
            level = "warning"
    return Result("spot", level, fleet.path, f"{kind} in {zone}: " + "; ".join(notes))


def check_ack(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
              ) -> Iterator[Result]:
    """The cluster's Kubernetes version is offered and creatable in the region; every
    pinned add-on is offered for it, at its version."""
    if demand.ack_version is None:
        return
    version = demand.ack_version.value
    versions = client.roa("cs", "DescribeKubernetesVersionMetadata",
                          "/api/v1/metadata/versions",
                          {"Region": client.region, "ClusterType": "ManagedKubernetes"})
    offered = {str(v.get("version")): v for v in versions if isinstance(v, dict)} \
        if isinstance(versions, list) else {}
    if version not in offered:
        yield Result("ack", "error", demand.ack_version.path,
                     f"Kubernetes {version} is not offered in {client.region}; offered: "
                     f"{', '.join(sorted(offered)) or 'none'}")
        return
    if offered[version].get("creatable") is False:
        creatable = sorted(v for v, meta in offered.items() if meta.get("creatable") is not False)
        yield Result("ack", "error", demand.ack_version.path,
                     f"Kubernetes {version} is offered but no longer creatable; creatable: "
                     f"{', '.join(creatable)}")
        return
    yield Result("ack", "ok", demand.ack_version.path,
                 f"Kubernetes {version} is offered in {client.region}")
    listing = client.roa("cs", "ListAddons", "/addons", {
        "region_id": client.region, "cluster_type": "ManagedKubernetes",
        "cluster_spec": demand.ack_spec, "cluster_version": version})
    addons = {str(a.get("name")): str(a.get("version")) for a in _items(listing, "addons")}
    for addon in demand.addons:
        newest = addons.get(addon.value)
        if newest is None:
            yield Result("ack", "error", addon.path,
                         f"add-on {addon.value} is not offered for {version} in "
                         f"{client.region}")
        elif addon.detail and newest != addon.detail:
            yield Result("ack", "warning", addon.path,
                         f"add-on {addon.value} {addon.detail} is pinned; the region offers "
                         f"{newest} for {version} (an older version may no longer install)")
        else:
            yield Result("ack", "ok", addon.path, f"add-on {addon.value} {newest} is offered")


def check_images(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
                 ) -> Iterator[Result]:
    """Every image id the plan boots exists in the region and is Available."""
    if not demand.images:
        return
    answer = client.rpc("ecs", "DescribeImages", {
        "RegionId": client.region, "ImageId": ",".join(i.value for i in demand.images),
        "Status": "Creating,Waiting,Available,UnAvailable,CreateFailed,Deprecated",
        "PageSize": 100})
    found = {str(i.get("ImageId")): str(i.get("Status")) for i in
             _items(answer, "Images", "Image")}
    for image in demand.images:
        status = found.get(image.value)
        if status is None:
            yield Result("image", "error", image.path,
                         f"image {image.value} does not exist in {client.region} (or is not "
                         "shared with this account)")
        elif status != "Available":
            yield Result("image", "error" if status != "Deprecated" else "warning", image.path,
                         f"image {image.value} is {status}")
        else:
            yield Result("image", "ok", image.path, f"image {image.value} is Available")


def check_kms(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
              ) -> Iterator[Result]:
    """Every KMS key the plan uses but does not create exists and is Enabled."""
    for key in demand.kms_keys:
        try:
            answer = client.rpc("kms", "DescribeKey", {"KeyId": key.value})
        except ApiError as error:
            if error.code != "Forbidden.KeyNotFound":
                raise
            yield Result("kms", "error", key.path, f"KMS key {key.value} does not exist in "
                         f"{client.region}")
            continue
        state = str((answer.get("KeyMetadata") or {}).get("KeyState"))
        yield Result("kms", "ok" if state == "Enabled" else "error", key.path,
                     f"KMS key {key.value} is {state}")


def check_buckets(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
                  ) -> Iterator[Result]:
    """Every bucket name is free (names are global across all accounts)."""
    for bucket in demand.buckets:
        status, code = client.bucket_info(bucket.value)
        if status == 404 and code == "NoSuchBucket":
            yield Result("bucket", "ok", bucket.path, f"bucket name {bucket.value} is free")
        elif status == 403:
            yield Result("bucket", "error", bucket.path,
                         f"bucket name {bucket.value} is taken by another account ({code}); "
                         "change the cluster name or environment")
        elif status < 300:
            yield Result("bucket", "warning", bucket.path,
                         f"bucket {bucket.value} exists in this account: fine if this stack "
                         "already manages it, else pulumi up fails (BucketAlreadyExists)")
        else:
            raise ApiError("GetBucketInfo", status, code or str(status), bucket.value)


def check_contacts(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
                   ) -> Iterator[Result]:
    """Every alert contact exists with its address activated; a new or changed address
    receives alarms only after its activation link is clicked."""
    for contact in demand.contacts:
        answer = client.rpc("cms", "DescribeContactList", {"ContactName": contact.value})
        known = next((c for c in _items(answer, "Contacts", "Contact")
                      if c.get("Name") == contact.value), None)
        if known is None:
            yield Result("contact", "warning", contact.path,
                         f"contact {contact.value} is new: CloudMonitor mails an activation "
                         f"link to {contact.detail}; alarms reach it only after it is clicked")
            continue
        mail = str((known.get("Channels") or {}).get("Mail") or "")
        state = str((known.get("ChannelsState") or {}).get("Mail") or "")
        if mail != contact.detail:
            yield Result("contact", "warning", contact.path,
                         f"contact {contact.value} has {mail or 'no address'}; the stack sets "
                         f"{contact.detail}, which must be activated again")
        elif state != "OK":
            yield Result("contact", "warning", contact.path,
                         f"{mail} of contact {contact.value} is {state or 'not'} activated: "
                         "alarms do not reach it until its activation link is clicked")
        else:
            yield Result("contact", "ok", contact.path, f"{mail} is activated")


def check_dry_run(client: AlibabaClient, demand: Demand, lookup: catalog.Lookup
                  ) -> Iterator[Result]:
    """RunInstances with DryRun=true and each fleet's first type, first zone, image, disk,
    billing and count (1 for a scaler). A fleet without an image of its own (an ACK node pool:
    ACK picks the node image) is not dry-run: RunInstances needs one."""
    for fleet in demand.fleets:
        if not fleet.instance_types or not fleet.zones or not fleet.image_id:
            continue
        parameters: dict[str, str | int | bool] = {
            "RegionId": client.region, "ZoneId": fleet.zones[0],
            "InstanceType": fleet.instance_types[0],
            "InstanceChargeType": "PrePaid" if fleet.prepaid else "PostPaid",
            "SpotStrategy": "SpotAsPriceGo" if fleet.spot else "NoSpot",
            "Amount": max(1, min(fleet.at_up if fleet.fixed else 1,
                                 RUN_INSTANCES_MAX_AMOUNT)),
            "ImageId": fleet.image_id, "DryRun": True}
        if fleet.system_disk:
            parameters["SystemDisk.Category"], parameters["SystemDisk.Size"] = fleet.system_disk
        if fleet.prepaid:
            parameters.update({"Period": 1, "PeriodUnit": "Month"})
        what = f"RunInstances DryRun of {parameters['Amount']} x {fleet.instance_types[0]} " \
               f"in {fleet.zones[0]}"
        try:
            client.rpc("ecs", "RunInstances", parameters)
        except ApiError as error:
            if error.code == "DryRunOperation":
                yield Result("dryrun", "ok", fleet.path, f"{what}: would succeed")
            elif error.code.startswith(NETWORK_CODES):
                yield Result("dryrun", "ok", fleet.path,
                             f"{what}: passes up to the network the stack creates "
                             f"({error.code})")
            elif error.about_the_account:
                raise
            else:
                yield Result("dryrun", "error", fleet.path,
                             f"{what}: {error.code}: {error.message}")
        else:
            yield Result("dryrun", "error", fleet.path,
                         f"{what}: the API ignored DryRun and did not refuse (check the "
                         "account for new instances)")


CHECKS: dict[str, Check] = {
    "stock": check_stock, "quota": check_quota, "spot": check_spot, "ack": check_ack,
    "image": check_images, "kms": check_kms, "bucket": check_buckets,
    "contact": check_contacts, "dryrun": check_dry_run,
}
"""Check name -> check, in the order they run and report."""
