"""What a failed object store request tells a user: the store's answer (HTTP status, error code and message),
whether the client retried, and the setting to check.

obstore reports a failure as one text: a first line that ends in the store's raw answer (for S3 an XML document
whose first line is only `<?xml ...?>`) and a debug dump of the request. This module reads both, so a message
shows `403 Forbidden, SignatureDoesNotMatch: ...` rather than `<?xml version="1.0"?>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Error codes of S3 (and S3-compatible stores, Azure) -> what to check.
REMEDIES = {
    "InvalidAccessKeyId": "the store does not know this access key: check AWS_ACCESS_KEY_ID",
    "SignatureDoesNotMatch": "the secret key does not belong to the access key: check AWS_SECRET_ACCESS_KEY",
    "ExpiredToken": "the session token expired: renew AWS_SESSION_TOKEN",
    "InvalidToken": "the session token is not valid: check AWS_SESSION_TOKEN",
    "AccessDenied": "the credentials may not do this: check the permissions of the key and of the bucket",
    "AuthorizationHeaderMalformed": "check AWS_REGION: it must be the bucket's region",
    "AuthenticationFailed": "check the storage account key or the SAS token",
}
_STATUS = re.compile(r"status code: (\d{3}) ?([^:\n]*)")
_RETRIES = re.compile(r", after (\d+) retries")
_CODE = re.compile(r"<Code>([^<]*)</Code>")
_MESSAGE = re.compile(r"<Message>([^<]*)</Message>")
_CAUSE = re.compile(r" - ([^\n]*)")
_OS_MESSAGE = re.compile(r'message: "([^"\n]*)"')


@dataclass(frozen=True)
class StoreFailure:
    """One failed request as obstore reported it."""

    status: int | None  # the HTTP status the store answered; None when no answer came (connection, TLS, ...)
    reason: str  # "Forbidden"; for a request without an answer, the client's cause ("error sending request")
    code: str | None  # the store's error code ("SignatureDoesNotMatch"), when its answer had a body
    message: str | None  # the store's error message
    retries: int

    @classmethod
    def parse(cls, text: str) -> StoreFailure:
        first = text.split("\n", 1)[0]
        status = _STATUS.search(first)
        retries = _RETRIES.search(first)
        code, message = _CODE.search(text), _MESSAGE.search(text)
        if status is not None:
            reason = status.group(2).strip()
        else:
            cause = _CAUSE.search(first)
            reason = (cause.group(1) if cause else first).strip()
            os_message = _OS_MESSAGE.search(text)
            if os_message is not None:
                reason = f"{reason} ({os_message.group(1)})"
        return cls(int(status.group(1)) if status else None, reason, code.group(1) if code else None,
                   message.group(1).strip() if message else None, int(retries.group(1)) if retries else 0)

    @property
    def answered_without_code(self) -> bool:
        """The store refused the request but said nothing more (a HEAD answer carries no body)."""
        return self.status is not None and 400 <= self.status < 500 and self.code is None

    def describe(self) -> str:
        """`after N retries: the store answered 403 Forbidden, Code: message. What to check`."""
        after = f" after {self.retries} retries" if self.retries else ""
        if self.status is None:
            return f"{after}: {self.reason}. Check the endpoint and the network"
        answer = f"the store answered {self.status} {self.reason}".rstrip()
        if self.code:
            answer += f", {self.code}" + (f": {self.message.rstrip('.')}" if self.message else "")
        return f"{after}: {answer}. {self.remedy()}"

    def remedy(self) -> str:
        if self.code in REMEDIES:
            text = REMEDIES[self.code]
            return text[0].upper() + text[1:]
        if self.status in (401, 403):
            return "Check the credentials and their permissions on this bucket"
        if self.status is not None and self.status >= 500:
            return "The store is failing; retry later"
        return "Check the table URI and the storage options"
