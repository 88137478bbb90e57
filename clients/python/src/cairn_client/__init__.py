"""Cairn client: standard library only, synchronous (Python ≥ 3.10)."""

from .client import (ApiKeyScope, ArtifactStatus, ArtifactType, CairnClient, ChatError, ChatEvent, ChatStream, Done,
                     ReviewPolicy, TextDelta, WorkspaceEvent)
from .errors import CairnError
from .webhooks import verify_cairn_signature, verify_standard_webhook, verify_webhook

__all__ = [
    "CairnClient", "CairnError", "ChatStream", "ChatEvent", "TextDelta", "Done", "ChatError", "WorkspaceEvent",
    "verify_webhook", "verify_cairn_signature", "verify_standard_webhook",
    "ArtifactStatus", "ArtifactType", "ReviewPolicy", "ApiKeyScope",
]
__version__ = "0.1.0"
