from __future__ import annotations

from typing import Any


class CairnError(Exception):
    """An error answer of Cairn (docs/api/errors.md), or a request that got none (status_code 0)."""

    def __init__(self, status_code: int, code: str, message: str, body: Any = None, retry_after: float | None = None):
        super().__init__(message)
        #: the HTTP status; 0 when no answer arrived (network error)
        self.status_code = status_code
        #: Cairn's machine code, e.g. ``VALIDATION_ERROR``, ``HUMAN_REVIEW_REQUIRED``; ``NETWORK_ERROR`` without an answer
        self.code = code
        self.message = message
        #: the whole error body, when there was one
        self.body = body
        #: seconds from ``Retry-After``, when the answer had one
        self.retry_after = retry_after

    # the names of the contract, for code shared with the TypeScript client
    @property
    def statusCode(self) -> int:  # noqa: N802
        return self.status_code

    def __repr__(self) -> str:
        return f"CairnError({self.status_code}, {self.code!r}, {self.message!r})"
