#!/usr/bin/env python3
# gpu_infra_queue: the fleet's job queue (MNS, the queue API of "Simple Message Queue (formerly
# MNS)", x-mns-version 2015-06-06) as the node tools use it: the render worker receives,
# renews and deletes its jobs, the drain hands unfinished ones back. Python 3.6+ standard
# library; the node's credentials and settings are gpu-infra-api's (gpu_infra_node.api).
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
import xml.etree.ElementTree as ElementTree
from typing import Any, Dict, List, Optional

MNS_VERSION = "2015-06-06"
VISIBLE_AGAIN_SECONDS = 1
CONTENT_TYPE = "text/xml;charset=utf-8"
"""What the request sends and signs (MNS signs the Content-Type line; a request without one
would get urllib's own for a body)."""
NO_MESSAGE = ("MessageNotExist",)
"""ReceiveMessage's answer when no message arrived within its wait (404 MessageNotExist);
ChangeMessageVisibility's and DeleteMessage's for a receipt handle that is no longer valid
(the message was received again, handed back or deleted)."""


def endpoint(node: Any) -> str:
    """The region's internal MNS endpoint of the node's account (config MNS_ENDPOINT where
    it is set)."""
    cfg = node.config()
    if cfg.get("MNS_ENDPOINT"):
        return str(cfg["MNS_ENDPOINT"])
    account = node.metadata("owner-account-id").strip()
    return "https://{}.mns.{}-internal.aliyuncs.com".format(account, cfg["REGION"])


HEADERS = {"Content-Type": CONTENT_TYPE, "x-mns-version": MNS_VERSION}
"""What every MNS request of the node sends besides the Date and its signature (gpu-infra-api's
rest signs exactly the headers it sends, Content-Type included, with bounded retries; an
answer of MessageNotExist is None, any other refusal exits with one line)."""


def _fields(answer: bytes) -> Dict[str, str]:
    """The child elements of an MNS XML answer, by local name (namespace dropped)."""
    root = ElementTree.fromstring(answer)
    return {child.tag.rsplit("}", 1)[-1]: child.text or "" for child in root}


def receive(node: Any, base: str, queue: str, wait_seconds: int) -> Optional[Dict[str, str]]:
    """One message of `queue` (ReceiveMessage: GET /queues/QUEUE/messages?waitseconds=N, a
    long poll of up to N s, 0 to 30): its MessageId, ReceiptHandle, MessageBody,
    DequeueCount, ...; None when none arrived. The message stays invisible to other
    receivers for the queue's VisibilityTimeout."""
    resource = "/queues/{}/messages?waitseconds={}".format(queue, wait_seconds)
    answer = node.rest("mns", "ReceiveMessage", "GET", base + resource, resource, HEADERS,
                       absent=NO_MESSAGE)
    return None if answer is None else _fields(answer)


def visible_again(node: Any, base: str, queue: str, receipt: str,
                  seconds: int = VISIBLE_AGAIN_SECONDS) -> Optional[str]:
    """ChangeMessageVisibility: the message becomes visible `seconds` from now (default 1,
    at once). Returns the new receipt handle MNS answers with (the old one stops being
    valid), None when `receipt` was no longer valid. The handle goes into the query as
    received, as Alibaba's MNS SDK for Python sends it (mns_client.change_message_visibility)."""
    resource = "/queues/{}/messages?ReceiptHandle={}&VisibilityTimeout={}".format(
        queue, receipt, seconds)
    answer = node.rest("mns", "ChangeMessageVisibility", "PUT", base + resource, resource,
                       HEADERS, absent=NO_MESSAGE)
    return None if answer is None else _fields(answer).get("ReceiptHandle")


def delete(node: Any, base: str, queue: str, receipt: str) -> bool:
    """DeleteMessage (DELETE /queues/QUEUE/messages?ReceiptHandle=...): the job is done.
    False when `receipt` was no longer valid (the message may run again elsewhere)."""
    resource = "/queues/{}/messages?ReceiptHandle={}".format(queue, receipt)
    return node.rest("mns", "DeleteMessage", "DELETE", base + resource, resource, HEADERS,
                     absent=NO_MESSAGE) is not None


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
            if visible_again(node, base, queue, receipt) is None:
                raise ValueError("the message was no longer in flight")
            print("returned {} to {}".format(name, queue))
        except (OSError, ValueError, SystemExit) as error:
            failed += 1
            print("could not return {} ({}): it returns when its visibility ends".format(
                name, error.code if isinstance(error, SystemExit) else error))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
