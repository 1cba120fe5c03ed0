"""gpu_infra_pull: `gpu-infra-api pull IMAGE` (the gpu-infra-pull command), which every unit and
script of a workload pulls its image through. An image of the stack's registry
(REGISTRY_ENDPOINT, its VPC address) is pulled after a `docker login` with a temporary
username and password from ACR GetAuthorizationToken, signed with the node role's STS token:
an Enterprise instance's (cr 2018-12-01, RPC, InstanceId REGISTRY_INSTANCE_ID: TempUsername,
AuthorizationToken) or, without an instance, the personal edition's (cr 2016-06-07, ROA
`GET /tokens`: data.tempUserName, data.authorizationToken; that shape is UNCONFIRMED). The
password lives an hour at most (the STS token's life), goes to docker on stdin and is never
written by gpu-infra.
`docker pull IMAGE` is tried PULL_TRIES times (2, 4, 8... s apart: a registry outage is ridden
out for a while), then one line names the image and docker's last message, exit 1. The user
data or, where the fleet has them, the node tools write it next to gpu-infra-api. Python 3.6+
standard library."""

import subprocess
import sys
import time
from typing import Any, Dict, NoReturn, Tuple


def fail(message: str) -> NoReturn:
    print("gpu-infra-pull: " + message, file=sys.stderr)
    raise SystemExit(1)


PERSONAL_VERSION = "2016-06-07"  # the personal edition's API (ROA)


def temporary_login(cfg: Dict[str, str], api: Any) -> Tuple[str, str]:
    """(username, password) of a temporary login to the stack's registry."""
    if cfg.get("REGISTRY_INSTANCE_ID"):
        token = api.call("cr", cfg["CR_ENDPOINT"], "GetAuthorizationToken",
                         InstanceId=cfg["REGISTRY_INSTANCE_ID"])
        return token["TempUsername"], token["AuthorizationToken"]
    data = api.roa("cr", cfg["CR_ENDPOINT"], "GetAuthorizationToken", "/tokens",
                   PERSONAL_VERSION)["data"]
    return data["tempUserName"], data["authorizationToken"]


def login(cfg: Dict[str, str], api: Any, host: str) -> None:
    """`docker login` to the stack's registry with a temporary token of the node role."""
    user, password = temporary_login(cfg, api)
    done = subprocess.run(["docker", "login", "--username", user,
                           "--password-stdin", host], input=password,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        fail("docker login {} failed: {}".format(host, lines[-1] if lines else done.returncode))


def pull(cfg: Dict[str, str], api: Any, image: str) -> None:
    """Pull `image` (exit 1 with one line once every try failed); `api`: gpu-infra-api (its
    signed calls)."""
    host = image.split("/", 1)[0]
    if cfg.get("REGISTRY_ENDPOINT") and host == cfg["REGISTRY_ENDPOINT"]:
        login(cfg, api, host)
    tries = int(cfg.get("PULL_TRIES", "5"))
    delay = float(cfg.get("PULL_RETRY_SECONDS", "2"))
    last = ""
    for attempt in range(tries):
        if attempt:
            time.sleep(delay * 2 ** (attempt - 1))
        done = subprocess.run(["docker", "pull", "--quiet", image], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, universal_newlines=True)
        if done.returncode == 0:
            return
        lines = done.stderr.strip().splitlines()
        last = lines[-1] if lines else "docker pull exited {}".format(done.returncode)
    fail("{}: not pulled after {} tries: {}".format(image, tries, last))
