"""Verification of Cairn's webhook deliveries (docs/api/webhooks.md#verifying-a-delivery).

- ``X-Cairn-Signature``: lower-case hex HMAC-SHA256 of the raw body, keyed with the whole secret string.
- Standard Webhooks: ``webhook-signature`` = space-separated ``v1,<base64 HMAC-SHA256 of "id.timestamp.body">``,
  keyed with the base64-decoded part of the secret after ``whsec_``; the timestamp must be recent.

Pass the raw body as received: re-serialised JSON no longer matches.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping

Body = bytes | str


def _bytes(body: Body) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else body


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def verify_cairn_signature(body: Body, signature: str | None, secret: str) -> bool:
    """``X-Cairn-Signature``: hex HMAC-SHA256 of the body keyed with the UTF-8 bytes of the whole secret."""
    if not signature:
        return False
    expected = hmac.new(secret.encode("utf-8"), _bytes(body), hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature.strip().lower())


def verify_standard_webhook(body: Body, headers: Mapping[str, str], secret: str, *,
                            tolerance_seconds: int = 300, now: float | None = None) -> bool:
    """Standard Webhooks v1: any one matching signature of the space-separated list is enough."""
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    if not msg_id or not timestamp or not signatures or not timestamp.isdigit():
        return False
    current = time.time() if now is None else now
    if abs(current - int(timestamp)) > tolerance_seconds:
        return False
    try:
        key = base64.b64decode(secret[6:] if secret.startswith("whsec_") else secret, validate=True)
    except (binascii.Error, ValueError):
        return False
    signed = f"{msg_id}.{timestamp}.".encode("utf-8") + _bytes(body)
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
    for entry in signatures.split(" "):
        version, _, value = entry.partition(",")
        if version == "v1" and value and hmac.compare_digest(expected, value):
            return True
    return False


def verify_webhook(body: Body, headers: Mapping[str, str], secret: str, *,
                   tolerance_seconds: int = 300, now: float | None = None) -> bool:
    """Either scheme: the Standard Webhooks signature when present (timestamped; lists the old secret's
    signature during a rotation), else ``X-Cairn-Signature``."""
    if _header(headers, "webhook-signature"):
        return verify_standard_webhook(body, headers, secret, tolerance_seconds=tolerance_seconds, now=now)
    return verify_cairn_signature(body, _header(headers, "x-cairn-signature"), secret)
