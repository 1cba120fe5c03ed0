"""gpu_infra_peers: `gpu-infra-api peers` and `secret NAME` (training fleets only), with the
API's `call` passed in. What a node trusts comes from OOS parameters the stack writes and the
node role may only read (blocks.compute.trust), never from instance tags: the fleet's members
are the instance ids of the NODE_LIST parameter (pages: one ending in "+" goes on in
NODE_LIST-2, -3, ...), the SSH keys are encrypted parameters. Python 3.6+ standard library;
types in comments, which the node's copy drops (each byte is user data)."""

import json
import typing  # noqa: F401 (the type comments)


def parameter(cfg, call, name, secret=False):
    # type: (typing.Dict[str, str], typing.Callable[..., typing.Any], str, bool) -> str
    """The value of OOS parameter `name` (an encrypted one, decrypted, when `secret`)."""
    extra = {"WithDecryption": "true"} if secret else {}
    answer = call("oos", cfg["OOS_ENDPOINT"], "GetSecretParameter" if secret else "GetParameter",
                  RegionId=cfg["REGION"], Name=name, **extra)
    return str(answer["Parameter"]["Value"])


def peers(cfg, call):
    # type: (typing.Dict[str, str], typing.Callable[..., typing.Any]) -> None
    """One tab-separated row per running member: host name, private IP, health tag (unknown
    until it has told), instance type."""
    ids, page = [], 1  # type: typing.List[str], int
    while page == 1 or ids[-1:] == ["+"]:
        del ids[-1:]  # the "+" of the page before
        name = cfg["NODE_LIST"] + ("-%d" % page if page > 1 else "")
        ids += [i for i in parameter(cfg, call, name).split(",") if i]
        page += 1
    for start in range(0, len(ids), 100):
        answer = call("ecs", cfg["ECS_ENDPOINT"], "DescribeInstances", RegionId=cfg["REGION"],
                      Status="Running", PageSize=100,
                      InstanceIds=json.dumps(ids[start:start + 100]))
        for i in answer.get("Instances", {}).get("Instance", []):
            tags = {t["TagKey"]: t["TagValue"] for t in i.get("Tags", {}).get("Tag", [])}
            ips = i.get("VpcAttributes", {}).get("PrivateIpAddress", {}).get("IpAddress", [""])
            print(i.get("HostName", ""), ips[0], tags.get(cfg["HEALTH_TAG_KEY"], "unknown"),
                  i.get("InstanceType", "-"), sep="\t")


def main(cfg, call, command, args):
    # type: (typing.Dict[str, str], typing.Callable[..., typing.Any], str, typing.List[str]) -> None
    """`peers`, or `secret NAME`: the decrypted value on stdout."""
    if command == "peers":
        peers(cfg, call)
    else:
        print(parameter(cfg, call, args[0], secret=True).rstrip("\n"))
