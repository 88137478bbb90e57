"""A synchronous Cairn client on the standard library (urllib)."""

from __future__ import annotations

import json
import os
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http.client import HTTPResponse
from typing import Any, Literal, Union

from .errors import CairnError

Json = dict[str, Any]
ArtifactStatus = Literal["draft", "pending_review", "approved", "rejected", "superseded"]
ArtifactType = Literal["task_plan", "implementation_plan", "walkthrough", "verification_proof", "decision_record",
                       "plan_mode", "code_change", "research_summary"]
ReviewPolicy = Literal["always_proceed", "agent_decides", "request_review"]
ApiKeyScope = Literal["read", "write", "execute", "knowledge:read", "knowledge:write", "artifacts:read",
                      "artifacts:write"]

_RETRY_STATUSES = {429, 503}
# methods whose repetition is harmless after a network error (POST carries an Idempotency-Key)
_SAFE_AFTER_NETWORK_ERROR = {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "POST"}
_DECIDED = {"approved", "rejected", "superseded"}


@dataclass
class TextDelta:
    content: str
    type: Literal["text_delta"] = "text_delta"


@dataclass
class Done:
    conversation_id: str
    reply: str
    model: str | None = None
    type: Literal["done"] = "done"


@dataclass
class ChatError:
    message: str
    type: Literal["error"] = "error"


ChatEvent = Union[TextDelta, Done, ChatError]


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _error_from(status: int, raw: bytes, headers: Any) -> CairnError:
    text = raw.decode("utf-8", "replace")
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    b = body if isinstance(body, dict) else {}
    return CairnError(status, b.get("code") if isinstance(b.get("code"), str) else f"HTTP_{status}",
                      b.get("message") if isinstance(b.get("message"), str) else f"HTTP {status}", body,
                      _retry_after(headers.get("retry-after") if headers is not None else None))


def _sse(response: HTTPResponse) -> Iterator[tuple[str, str]]:
    """(event, data) pairs of a Server-Sent Events body."""
    for event, data, _id in _sse_with_ids(response):
        yield event, data


def _sse_with_ids(response: HTTPResponse) -> Iterator[tuple[str, str, str | None]]:
    """(event, data, id) of a Server-Sent Events body; id is the last one given so far (None before any)."""
    event, data = "", []
    event_id: str | None = None
    while True:
        line = response.readline()
        if not line:
            return
        text = line.decode("utf-8").rstrip("\r\n")
        if text == "":
            if data:
                yield event or "message", "\n".join(data), event_id
            event, data = "", []
        elif text.startswith(":"):
            continue
        else:
            name, _, value = text.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                event_id = value


@dataclass(frozen=True)
class WorkspaceEvent:
    """An event of the workspace event stream: ``type`` its name (``artifact.status_changed``, ``document.indexed``,
    …, or ``reset`` when the events missed are no longer kept), ``id`` its position, ``data`` its fields (``id`` of
    the resource, ``workspace_id``, ``at``, …)."""
    type: str
    id: str
    data: Json


class ChatStream:
    """The assistant's answer as it is written: iterate it; ``cancel()`` (or ``close()``) ends the stream
    and, on the server, the model call."""

    def __init__(self, response: HTTPResponse):
        self._response = response
        self._events = _sse(response)
        self._finished = False

    def __iter__(self) -> ChatStream:
        return self

    def __next__(self) -> ChatEvent:
        while not self._finished:
            try:
                event, data = next(self._events)
            except (StopIteration, ValueError, OSError, AttributeError):
                # a cancelled stream's connection is closed under the reader
                self.cancel()
                break
            if event not in ("text_delta", "done", "error"):
                continue
            payload = json.loads(data)
            if event == "text_delta":
                return TextDelta(content=payload["content"])
            self.cancel()
            if event == "done":
                return Done(conversation_id=payload["conversationId"], reply=payload["reply"], model=payload.get("model"))
            return ChatError(message=payload["message"])
        raise StopIteration

    def cancel(self) -> None:
        self._finished = True
        try:
            self._response.close()
        except OSError:
            pass

    close = cancel

    def __enter__(self) -> ChatStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


@dataclass
class CairnClient:
    """A Cairn API client. Every call retries on 429 and 503 (honouring Retry-After) and, when harmless,
    on network errors; every POST carries an Idempotency-Key that its retries reuse; failures raise
    CairnError."""

    base_url: str
    #: a JWT (``/api/v2/auth/login``) or an API key (``cairn_…``)
    token: str | None = None
    #: the workspace context (``x-workspace-id``); a key bound to a workspace needs none
    workspace_id: str | None = None
    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 60.0
    timeout: float = 60.0
    user_agent: str = "cairn-client-python/0.1.0"
    _sleep: Any = field(default=time.sleep, repr=False)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")

    def with_options(self, **changes: Any) -> CairnClient:
        """A client with another credential or workspace, sharing the rest of the options."""
        values = {k: getattr(self, k) for k in ("base_url", "token", "workspace_id", "max_retries", "base_delay", "max_delay", "timeout", "user_agent")}
        values.update(changes)
        return CairnClient(**values)

    # transport

    def delay_for(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds before retry number ``attempt`` (0-based): the server's Retry-After, else exponential with jitter."""
        if retry_after is not None:
            return retry_after
        return min(self.max_delay, self.base_delay * 2 ** attempt) * random.uniform(0.5, 1.0)

    def _url(self, path: str, query: dict[str, Any] | None = None) -> str:
        items = {k: ("true" if v is True else "false" if v is False else str(v)) for k, v in (query or {}).items() if v is not None}
        qs = urllib.parse.urlencode(items)
        return f"{self.base_url}{path}{'?' + qs if qs else ''}"

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        h = {"accept": "application/json", "user-agent": self.user_agent}
        if self.token:
            h["authorization"] = f"Bearer {self.token}"
        if self.workspace_id:
            h["x-workspace-id"] = self.workspace_id
        h.update(extra or {})
        return h

    def send(self, method: str, path: str, *, query: dict[str, Any] | None = None, json_body: Any = None,
             body: bytes | None = None, headers: dict[str, str] | None = None, idempotency_key: str | None = None,
             stream: bool = False, timeout: float | None = None) -> HTTPResponse:
        """One call with its retries; returns the open 2xx response, else raises CairnError."""
        h = self._headers(headers)
        data = body
        if json_body is not None:
            data = json.dumps(json_body).encode("utf-8")
            h["content-type"] = "application/json"
        if method == "POST" and not stream:
            h["idempotency-key"] = idempotency_key or str(uuid.uuid4())
        url = self._url(path, query)
        attempt = 0
        while True:
            request = urllib.request.Request(url, data=data, headers=h, method=method)
            try:
                return urllib.request.urlopen(request, timeout=timeout or self.timeout)
            except urllib.error.HTTPError as err:
                raw = err.read()
                retry_after = _retry_after(err.headers.get("retry-after"))
                delay = self.delay_for(attempt, retry_after)
                if err.code in _RETRY_STATUSES and attempt < self.max_retries and delay <= self.max_delay:
                    self._sleep(delay)
                    attempt += 1
                    continue
                raise _error_from(err.code, raw, err.headers) from None
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as err:
                if attempt < self.max_retries and method in _SAFE_AFTER_NETWORK_ERROR and not stream:
                    self._sleep(self.delay_for(attempt))
                    attempt += 1
                    continue
                raise CairnError(0, "NETWORK_ERROR", f"Could not reach Cairn: {err}") from err

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """A call whose answer is JSON."""
        with self.send(method, path, **kwargs) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    # accounts, workspaces and API keys

    @classmethod
    def login(cls, base_url: str, email: str, password: str, **options: Any) -> CairnClient:
        """A client signed in with email and password (its token is a session: ``sign_out()`` ends it); scripts
        that run unattended are better served by an API key."""
        anonymous = cls(base_url, **options)
        data = anonymous.request("POST", "/api/v2/auth/login", json_body={"email": email, "password": password})["data"]
        return anonymous.with_options(token=data["token"])

    def me(self) -> Json:
        """The caller, their organization role and their workspaces."""
        return self.request("GET", "/api/v2/auth/me")["data"]

    def sign_out(self) -> None:
        """Ends this client's session: its token stops working."""
        self.request("POST", "/api/v2/auth/logout")

    def list_workspaces(self) -> list[Json]:
        """The workspaces the caller belongs to, with their role in each."""
        return self.request("GET", "/api/v2/workspaces")["data"]

    def create_workspace(self, name: str) -> Json:
        """A new workspace of the caller's organization, the caller its owner."""
        return self.request("POST", "/api/v2/workspaces", json_body={"name": name})["data"]

    def workspace_members(self, workspace_id: str) -> list[Json]:
        return self.request("GET", f"/api/v2/workspaces/{urllib.parse.quote(workspace_id, safe='')}/members")["data"]

    def create_api_key(self, name: str, scopes: list[ApiKeyScope], *, workspace_id: str | None = None,
                       expires_at: str | None = None) -> Json:
        """A new API key (a person's session only). With ``workspace_id`` it is bound to that workspace: it needs
        no workspace header, and its uploads go there by default. The answer's ``key`` is shown this once."""
        body: Json = {"name": name, "scopes": list(scopes)}
        if workspace_id is not None:
            body["workspaceId"] = workspace_id
        if expires_at is not None:
            body["expiresAt"] = expires_at
        return self.request("POST", "/api/v2/api-keys", json_body=body)["data"]

    def list_api_keys(self) -> list[Json]:
        """The caller's keys (revoked ones with ``revoked_at``), without their values."""
        return self.request("GET", "/api/v2/api-keys")["data"]

    def _key_path(self, key_id: str, tail: str = "") -> str:
        return f"/api/v2/api-keys/{urllib.parse.quote(key_id, safe='')}{tail}"

    def get_api_key(self, key_id: str) -> Json:
        return self.request("GET", self._key_path(key_id))["data"]

    def rotate_api_key(self, key_id: str) -> Json:
        """A new value for the key, same scopes; the old value stops working at once."""
        return self.request("POST", self._key_path(key_id, "/rotate"))["data"]

    def revoke_api_key(self, key_id: str) -> None:
        """The key stops working at once."""
        self.request("DELETE", self._key_path(key_id))

    # knowledge base

    def upload_document(self, source: str | os.PathLike[str] | bytes, *, file_name: str | None = None,
                        category: str | None = None, tags: list[str] | None = None, scope: str | None = None,
                        workspace_id: str | None = None, idempotency_key: str | None = None) -> Json:
        """Upload a file from a path, or bytes with ``file_name``. Without ``scope`` it goes to the workspace (the
        key's, ``workspace_id``, or the client's), else to the organization."""
        if isinstance(source, bytes):
            if not file_name:
                raise ValueError("file_name is required with bytes")
            content, name = source, file_name
        else:
            with open(source, "rb") as f:
                content = f.read()
            name = file_name or os.path.basename(os.fspath(source))
        fields = {"category": category, "tags": json.dumps(tags) if tags is not None else None, "scope": scope, "workspaceId": workspace_id}
        boundary = "----cairn-py-" + uuid.uuid4().hex
        parts: list[bytes] = []
        for k, v in fields.items():
            if v is not None:
                parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode("utf-8"))
        safe = name.replace('"', "_").replace("\r", "_").replace("\n", "_")
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode("utf-8"))
        parts.append(content)
        parts.append(f"\r\n--{boundary}--\r\n".encode("utf-8"))
        return self.request("POST", "/api/knowledge/upload", body=b"".join(parts),
                            headers={"content-type": f"multipart/form-data; boundary={boundary}"}, idempotency_key=idempotency_key)

    def search_knowledge(self, query: str, **options: Any) -> Json:
        return self.request("POST", "/api/knowledge/search", json_body={"query": query, **options})

    def get_document(self, document_id: str, *, chunk_offset: int | None = None, chunk_limit: int | None = None) -> Json:
        return self.request("GET", f"/api/knowledge/document/{urllib.parse.quote(document_id, safe='')}",
                            query={"chunkOffset": chunk_offset, "chunkLimit": chunk_limit})

    def iter_documents(self, *, limit: int = 100, **filters: Any) -> Iterator[Json]:
        """Every document the caller can read, page by page."""
        offset = 0
        while True:
            page = self.request("GET", "/api/knowledge/documents", query={**filters, "limit": limit, "offset": offset})
            yield from page["documents"]
            offset += len(page["documents"])
            if len(page["documents"]) < limit or offset >= page["count"]:
                return

    # artifacts

    def _artifact_path(self, artifact_id: str, tail: str = "") -> str:
        return f"/api/v2/artifacts/{urllib.parse.quote(artifact_id, safe='')}{tail}"

    def create_artifact(self, type: str, title: str, **fields: Any) -> Json:  # noqa: A002
        return self.request("POST", "/api/v2/artifacts", json_body={"type": type, "title": title, **fields})["data"]

    def get_artifact(self, artifact_id: str) -> Json:
        return self.request("GET", self._artifact_path(artifact_id))["data"]

    def update_artifact(self, artifact_id: str, **fields: Any) -> Json:
        return self.request("PATCH", self._artifact_path(artifact_id), json_body=fields)["data"]

    def delete_artifact(self, artifact_id: str) -> None:
        self.request("DELETE", self._artifact_path(artifact_id))

    def set_artifact_status(self, artifact_id: str, status: ArtifactStatus) -> Json:
        return self.request("POST", self._artifact_path(artifact_id, "/status"), json_body={"status": status})["data"]

    def comment_on_artifact(self, artifact_id: str, content: str, position: Json | None = None) -> Json:
        body: Json = {"content": content}
        if position is not None:
            body["position"] = position
        return self.request("POST", self._artifact_path(artifact_id, "/comments"), json_body=body)["data"]

    def supersede_artifact(self, artifact_id: str, **fields: Any) -> Json:
        return self.request("POST", self._artifact_path(artifact_id, "/supersede"), json_body=fields)["data"]

    def artifact_chain(self, artifact_id: str) -> list[Json]:
        return self.request("GET", self._artifact_path(artifact_id, "/chain"))["data"]

    def list_artifacts(self, *, type: ArtifactType | None = None, status: ArtifactStatus | None = None,  # noqa: A002
                       review_policy: ReviewPolicy | None = None, awaiting: Literal["person"] | None = None,
                       limit: int | None = None, offset: int | None = None, **query: Any) -> Json:
        """One page of artifacts, newest first. ``awaiting="person"``: only what waits for a person (pending_review,
        and drafts whose review_policy is request_review); other filters (``workflow_id``, ``conversation_id``, …)
        as keywords."""
        filters = {"type": type, "status": status, "review_policy": review_policy, "awaiting": awaiting,
                   "limit": limit, "offset": offset, **query}
        page = self.request("GET", "/api/v2/artifacts", query=filters)
        return {"artifacts": page["data"], "meta": page["meta"]}

    def iter_artifacts(self, *, type: ArtifactType | None = None, status: ArtifactStatus | None = None,  # noqa: A002
                       review_policy: ReviewPolicy | None = None, awaiting: Literal["person"] | None = None,
                       limit: int = 100, **query: Any) -> Iterator[Json]:
        """Every artifact matching the filters (as list_artifacts), newest first, page by page."""
        filters = {"type": type, "status": status, "review_policy": review_policy, "awaiting": awaiting, **query}
        offset = 0
        while True:
            page = self.request("GET", "/api/v2/artifacts", query={**filters, "limit": limit, "offset": offset})
            yield from page["data"]
            offset += len(page["data"])
            if len(page["data"]) < limit or offset >= page["meta"]["count"]:
                return

    def wait_for_review(self, artifact_id: str, *, timeout: float = 300.0) -> Json:
        """Waits until the artifact is approved, rejected or superseded (``changed: True``) or ``timeout``
        seconds pass (``changed: False``). The tool server's ``wait_for_review`` is woken by the change
        itself: nothing polls."""
        deadline = time.monotonic() + timeout
        while True:
            seconds = max(1, min(50, int(deadline - time.monotonic() + 0.999)))
            result = self.mcp_tool("wait_for_review", {"id": artifact_id, "timeoutSeconds": seconds}, timeout=seconds + 30)
            if result.get("changed") or result.get("status") in _DECIDED or time.monotonic() >= deadline:
                return result

    def mcp_tool(self, name: str, arguments: Json, *, timeout: float | None = None) -> Json:
        """One MCP tool call over ``/api/mcp`` (stateless Streamable HTTP); returns its structured content."""
        message: Json | None = None
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        with self.send("POST", "/api/mcp", json_body=call, stream=True, timeout=timeout,
                       headers={"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}) as response:
            if "text/event-stream" in (response.headers.get("content-type") or ""):
                for _event, data in _sse(response):
                    parsed = json.loads(data)
                    if parsed.get("id") == 1:
                        message = parsed
                        break
            else:
                message = json.loads(response.read())
        if message is None:
            raise CairnError(0, "MCP_NO_ANSWER", f"The tool server gave no answer to {name}")
        if "error" in message:
            raise CairnError(400, "MCP_ERROR", message["error"].get("message", "MCP error"), message["error"])
        result = message.get("result") or {}
        structured = result.get("structuredContent") or {}
        if result.get("isError"):
            raise CairnError(int(structured.get("statusCode", 0)), str(structured.get("code", "TOOL_ERROR")),
                             str(structured.get("message", "Tool error")), structured, structured.get("retryAfter"))
        return structured

    # developer data

    def iter_logs(self, **query: Any) -> Iterator[Json]:
        """Developer-log entries, newest first, following ``nextCursor`` to the last page."""
        cursor: str | None = None
        while True:
            page = self.request("GET", "/api/v2/developer/logs", query={**query, "cursor": cursor})
            yield from page["data"]
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def log_activity(self, action: str, *, category: str | None = None, metadata: Json | None = None) -> Json:
        body: Json = {"action": action}
        if category is not None:
            body["category"] = category
        if metadata is not None:
            body["metadata"] = metadata
        return self.request("POST", "/api/v2/activity/log", json_body=body)["data"]

    # the workspace event stream

    def events(self, *, workspace_id: str | None = None, last_event_id: str | None = None,
               retry: float = 1.0) -> Iterator[WorkspaceEvent]:
        """The workspace's changes as they happen (a generator: ``close()`` it, or leave the loop, to end it).
        A connection that ends or fails is opened again with the last event's id, so nothing is missed (or a
        ``reset`` event says what was missed is gone); a refusal (401, 403) raises its CairnError."""
        while True:
            headers = {"accept": "text/event-stream"}
            if last_event_id is not None:
                headers["last-event-id"] = last_event_id
            if workspace_id:
                headers["x-workspace-id"] = workspace_id
            try:
                response = self.send("GET", "/api/v2/events/stream", headers=headers, stream=True)
            except CairnError as err:
                if 0 < err.status_code < 500 and err.status_code != 429:
                    raise
                self._sleep(retry)
                continue
            try:
                for event, data, event_id in _sse_with_ids(response):
                    if event_id is not None:
                        last_event_id = event_id
                    yield WorkspaceEvent(type=event, id=event_id or "", data=json.loads(data))
            except (OSError, ValueError):
                pass
            finally:
                response.close()
            self._sleep(retry)

    # chat

    def chat_stream(self, message: str, *, conversation_id: str | None = None) -> ChatStream:
        body: Json = {"message": message}
        if conversation_id:
            body["conversationId"] = conversation_id
        return ChatStream(self.send("POST", "/api/v2/chat/stream", json_body=body, stream=True, headers={"accept": "text/event-stream"}))
