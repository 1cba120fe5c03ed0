#!/usr/bin/env python3
# gpu_infra_queue: the drain's hand-back of unfinished jobs to the fleet's job queue (the node
# tools install it on fleets whose drain hands jobs back). Python 3.6+ standard library; the
# node's credentials and settings are gpu-infra-api's (gpu_infra_node.api).
"""usage: gpu_infra_queue.py return QUEUE JOB_FILE...

Makes each job's message visible in the MNS queue QUEUE again at once: ChangeMessageVisibility
(PUT /queues/QUEUE/messages?ReceiptHandle=...&VisibilityTimeout=1; 1 s is the API's least,
it takes 1 to 43200) with the receipt handle on the job file's first line, through the node
client (gpu-infra-api: the MNS signature with the node role's credentials, x-mns-version
2015-06-06, the STS token as security-token). Another node receives the job without waiting
for its visibility timeout. Each job is one line of output; exit 1 when any could not be
returned (that one returns when its visibility ends)."""

import os
import sys
from typing import Any, List

MNS_VERSION = "2015-06-06"
VISIBLE_AGAIN_SECONDS = 1
CONTENT_TYPE = "text/xml;charset=utf-8"
"""What the request sends and signs (MNS signs the Content-Type line; a request without one
would get urllib's own for a body)."""


def endpoint(node: Any) -> str:
    """The region's internal MNS endpoint of the node's account (config MNS_ENDPOINT where
    it is set)."""
    cfg = node.config()
    if cfg.get("MNS_ENDPOINT"):
        return str(cfg["MNS_ENDPOINT"])
    account = node.metadata("owner-account-id").strip()
    return "https://{}.mns.{}-internal.aliyuncs.com".format(account, cfg["REGION"])


def visible_again(node: Any, base: str, queue: str, receipt: str) -> None:
    """One ChangeMessageVisibility call through the node client (gpu-infra-api's rest: MNS
    signature over the headers it sends, Content-Type included, bounded retries); exits
    with one line when MNS refuses it."""
    resource = "/queues/{}/messages?ReceiptHandle={}&VisibilityTimeout={}".format(
        queue, receipt, VISIBLE_AGAIN_SECONDS)
    node.rest("mns", "ChangeMessageVisibility", "PUT", base + resource, resource,
              {"Content-Type": CONTENT_TYPE, "x-mns-version": MNS_VERSION})


def main(argv: List[str]) -> int:
    if len(argv) < 3 or argv[0] != "return":
        raise SystemExit(__doc__)
    # beside this file on the node (the node tools install both), not a package module
    from gpu_infra_node import api  # type: ignore[import-not-found]

    node = api()
    base, queue, failed = endpoint(node), argv[1], 0
    for path in argv[2:]:
        name = os.path.basename(path)
        try:
            with open(path, encoding="utf-8") as handle:
                receipt = handle.readline().strip()
            if not receipt:
                raise ValueError("no receipt handle")
            visible_again(node, base, queue, receipt)
            print("returned {} to {}".format(name, queue))
        except (OSError, ValueError, SystemExit) as error:
            failed += 1
            print("could not return {} ({}): it returns when its visibility ends".format(
                name, error.code if isinstance(error, SystemExit) else error))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
