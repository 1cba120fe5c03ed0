"""The queues of the MNS stand-in (tests/fake_node_cloud.py serves them), played as Simple
Message Queue (formerly MNS) documents its queue API (x-mns-version 2015-06-06):

- SendMessage (POST /queues/<q>/messages, `<Message><MessageBody>`): 201 with MessageId and
  MessageBodyMD5 (the MD5 of the body, upper-case hex);
- ReceiveMessage (GET /queues/<q>/messages?waitseconds=N): the first visible message, made
  invisible for the queue's VisibilityTimeout, with a new ReceiptHandle and its DequeueCount
  raised; none within the wait: 404 MessageNotExist. A message received as many times as the
  queue's dead-letter policy allows (MaxReceiveCount) moves to its dead-letter queue instead
  ("Dead-letter queue": moved when its receive count exceeds the maximum);
- ChangeMessageVisibility (PUT ...?ReceiptHandle=&VisibilityTimeout=1..43200): visible again
  that many seconds from now, answered with a new ReceiptHandle (the old one stops being
  valid) and NextVisibleTime; an unknown or stale handle: 404 MessageNotExist;
- DeleteMessage (DELETE ...?ReceiptHandle=): 204; an unknown or stale handle: 404
  MessageNotExist.

Long polls are cut to `poll_cap` seconds so that tests stay fast."""

from __future__ import annotations

import hashlib
import itertools
import time
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

NAMESPACE = "http://mns.aliyuncs.com/doc/v1/"


@dataclass
class Message:
    """One message of a queue."""

    id: str
    body: str
    enqueued: float
    visible_at: float
    receipt: str | None = None
    dequeue_count: int = 0


@dataclass
class Queues:
    """Every queue's messages, visibility timeout and dead-letter policy."""

    visibility: dict[str, int] = field(default_factory=dict)
    """Queue -> its VisibilityTimeout (default 30 s, the MNS default)."""
    dead_letter: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Queue -> (its dead-letter queue, MaxReceiveCount)."""
    messages: dict[str, list[Message]] = field(default_factory=dict)
    deleted: list[tuple[str, str]] = field(default_factory=list)
    """(queue, message id) of each deleted message."""
    receives: list[tuple[str, str, int]] = field(default_factory=list)
    """(queue, message id, its DequeueCount) of each message received."""
    poll_cap: float = 0.2
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def send(self, queue: str, body: str) -> str:
        """SendMessage: the new message's id."""
        now = time.time()
        message = Message(f"msg-{next(self._ids):04d}", body, now, now)
        self.messages.setdefault(queue, []).append(message)
        return message.id

    def receive(self, queue: str, wait_seconds: int) -> Message | None:
        """ReceiveMessage, polling up to min(wait_seconds, poll_cap)."""
        end = time.time() + min(wait_seconds, self.poll_cap)
        while True:
            found = self._take(queue)
            if found is not None or time.time() >= end:
                return found
            time.sleep(0.02)

    def _take(self, queue: str) -> Message | None:
        now = time.time()
        for message in list(self.messages.get(queue, [])):
            if message.visible_at > now:
                continue
            target, most = self.dead_letter.get(queue, ("", 0))
            if target and message.dequeue_count >= most:
                self.messages[queue].remove(message)
                message.receipt, message.visible_at = None, now
                self.messages.setdefault(target, []).append(message)
                continue
            message.dequeue_count += 1
            message.receipt = f"rh-{message.id}-{message.dequeue_count}-{next(self._ids)}"
            message.visible_at = now + self.visibility.get(queue, 30)
            self.receives.append((queue, message.id, message.dequeue_count))
            return message
        return None

    def holding(self, queue: str, receipt: str) -> Message | None:
        """The in-flight message of `queue` whose current handle is `receipt`."""
        now = time.time()
        return next((m for m in self.messages.get(queue, [])
                     if m.receipt == receipt and m.visible_at > now), None)

    def change(self, queue: str, receipt: str, seconds: int) -> Message | None:
        """ChangeMessageVisibility: the message with its new handle, None if stale."""
        message = self.holding(queue, receipt)
        if message is not None:
            message.visible_at = time.time() + seconds
            message.receipt = f"rh-{message.id}-{message.dequeue_count}-{next(self._ids)}"
        return message

    def delete(self, queue: str, receipt: str) -> bool:
        """DeleteMessage: False if the handle is stale."""
        message = self.holding(queue, receipt)
        if message is None:
            return False
        self.messages[queue].remove(message)
        self.deleted.append((queue, message.id))
        return True

    def bodies(self, queue: str) -> list[str]:
        return [message.body for message in self.messages.get(queue, [])]


def md5_hex(body: str) -> str:
    return hashlib.md5(body.encode()).hexdigest().upper()


def received_xml(message: Message) -> str:
    """ReceiveMessage's answer body."""
    ms = int(message.enqueued * 1000)
    return (f'<?xml version="1.0" encoding="UTF-8"?><Message xmlns="{NAMESPACE}">'
            f"<MessageId>{message.id}</MessageId>"
            f"<ReceiptHandle>{message.receipt}</ReceiptHandle>"
            f"<MessageBodyMD5>{md5_hex(message.body)}</MessageBodyMD5>"
            f"<MessageBody>{escape(message.body)}</MessageBody>"
            f"<EnqueueTime>{ms}</EnqueueTime>"
            f"<NextVisibleTime>{int(message.visible_at * 1000)}</NextVisibleTime>"
            f"<FirstDequeueTime>{ms}</FirstDequeueTime>"
            f"<DequeueCount>{message.dequeue_count}</DequeueCount>"
            f"<Priority>8</Priority></Message>")


def changed_xml(message: Message) -> str:
    """ChangeMessageVisibility's answer body."""
    return (f'<?xml version="1.0" encoding="UTF-8"?><ChangeVisibility xmlns="{NAMESPACE}">'
            f"<ReceiptHandle>{message.receipt}</ReceiptHandle>"
            f"<NextVisibleTime>{int(message.visible_at * 1000)}</NextVisibleTime>"
            f"</ChangeVisibility>")


def error_xml(code: str, text: str) -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?><Error xmlns="{NAMESPACE}">'
            f"<Code>{code}</Code><Message>{text}</Message></Error>")


NO_MESSAGE = error_xml("MessageNotExist", "Message not exist.")
