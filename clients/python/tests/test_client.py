"""cairn_client against a real Cairn, started by test/client-python.test.ts, which passes it in CAIRN_TEST_*."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import os
import tempfile
import threading
import unittest

from cairn_client import (CairnClient, CairnError, ChatError, Done, TextDelta, verify_cairn_signature,
                          verify_standard_webhook, verify_webhook)

ENV = {k[len("CAIRN_TEST_"):].lower(): v for k, v in os.environ.items() if k.startswith("CAIRN_TEST_")}


def live() -> dict[str, str]:
    if "url" not in ENV:
        raise RuntimeError("run through test/client-python.test.ts: it starts Cairn and sets CAIRN_TEST_*")
    return ENV


class LiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        env = live()
        cls.key = CairnClient(env["url"], token=env["key"], workspace_id=env["workspace"])
        cls.person = CairnClient(env["url"], token=env["jwt"], workspace_id=env["workspace"])
        cls.other = CairnClient(env["url"], token=env["other_jwt"], workspace_id=env["other_workspace"])

    def test_1_uploads_search_and_pages(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "guide.md")
            with open(path, "w", encoding="utf-8") as f:
                f.write("# Guide\n\nThe quokka service restarts at noon.")
            from_path = self.key.upload_document(path, category="ops", tags=["ops"])
        self.assertEqual(from_path["document"]["fileName"], "guide.md")
        from_bytes = self.key.upload_document(b"Quokka habitats are small.", file_name="quokka.txt")
        self.assertEqual(from_bytes["document"]["chunkCount"], 1)
        self.__class__.doc_id = from_path["document"]["id"]
        # passages are indexed in the background: the test server's /test/idle waits for the job queue
        self.key.request("POST", "/test/idle")
        found = self.key.search_knowledge("quokka")
        self.assertEqual(found["count"], 2)
        doc = self.key.get_document(from_path["document"]["id"], chunk_limit=5)
        self.assertIn("quokka service", doc["chunks"][0]["text"])
        names = sorted(d["fileName"] for d in self.key.iter_documents(limit=1))
        self.assertEqual(names, ["guide.md", "quokka.txt"])

    def test_2_artifacts_errors_and_review(self) -> None:
        plan = self.key.create_artifact("implementation_plan", "Plan", content={"steps": ["a"]}, review_policy="request_review")
        self.assertEqual(plan["status"], "draft")
        with self.assertRaises(CairnError) as refused:
            self.key.set_artifact_status(plan["id"], "approved")
        self.assertEqual((refused.exception.status_code, refused.exception.code), (403, "HUMAN_REVIEW_REQUIRED"))
        self.assertEqual(len(self.key.comment_on_artifact(plan["id"], "ready", {"step": 1})["comments"]), 1)
        self.assertEqual(self.key.update_artifact(plan["id"], title="Plan v1")["title"], "Plan v1")
        v2 = self.key.supersede_artifact(plan["id"], title="Plan v2")
        self.assertEqual(v2["review_policy"], "request_review")
        self.assertEqual([link["id"] for link in self.key.artifact_chain(v2["id"])], [plan["id"], v2["id"]])
        for i in range(3):
            self.key.create_artifact("task_plan", f"Task {i}")
        self.assertEqual(len(list(self.key.iter_artifacts(limit=2))), 5)
        self.assertEqual(self.key.list_artifacts(type="task_plan")["meta"]["count"], 3)
        with self.assertRaises(CairnError) as foreign:
            self.other.get_artifact(v2["id"])
        self.assertEqual((foreign.exception.status_code, foreign.exception.code), (404, "NOT_FOUND"))
        with self.assertRaises(CairnError) as elsewhere:
            self.key.with_options(workspace_id=self.other.workspace_id).list_artifacts()
        self.assertEqual(elsewhere.exception.status_code, 403)
        with self.assertRaises(CairnError) as invalid:
            self.key.create_artifact("poem", "x")
        self.assertEqual(invalid.exception.code, "VALIDATION_ERROR")

        # a person approves while the key waits; either order ends the wait with the decision
        outcome: dict[str, object] = {}
        waiter = threading.Thread(target=lambda: outcome.update(result=self.key.wait_for_review(v2["id"], timeout=60)))
        waiter.start()
        self.person.request("POST", "/test/watching", json_body={"id": v2["id"]})
        self.assertEqual(self.person.set_artifact_status(v2["id"], "approved")["status"], "approved")
        waiter.join(70)
        result = outcome["result"]
        assert isinstance(result, dict)
        self.assertEqual((result["id"], result["status"], result["changed"]), (v2["id"], "approved", True))
        quiet = self.key.create_artifact("task_plan", "Quiet")
        waited = self.key.wait_for_review(quiet["id"], timeout=1)
        self.assertEqual((waited["status"], waited["changed"]), ("draft", False))

    def test_3_logs_cursor_and_activity(self) -> None:
        self.key.log_activity("python.test", metadata={"n": 1})
        self.person.request("POST", "/test/flush")
        entries = list(self.person.iter_logs(limit=2))
        self.assertGreater(len(entries), 4)
        self.assertEqual(len({e["id"] for e in entries}), len(entries))
        self.assertIn("python.test", [e["action"] for e in entries])

    def test_4_chat_stream(self) -> None:
        events = list(self.person.chat_stream("What about the quokka service?"))
        self.assertTrue(any(isinstance(e, TextDelta) for e in events))
        self.assertIsInstance(events[-1], Done)
        assert isinstance(events[-1], Done)
        self.assertEqual(len(events[-1].conversation_id), 36)
        self.assertFalse(any(isinstance(e, ChatError) for e in events))
        stream = self.person.chat_stream("quokka again")
        seen = 0
        for _event in stream:
            seen += 1
            stream.cancel()
        self.assertEqual(seen, 1, "nothing after cancel")
        with self.assertRaises(CairnError) as keys_cannot:
            self.key.chat_stream("x")
        self.assertEqual(keys_cannot.exception.status_code, 403)

    def test_5_workspace_events(self) -> None:
        created = self.key.create_artifact("task_plan", "Streamed plan", content={})
        # from the first event kept: what happened before the stream opened comes first
        stream = self.key.events(last_event_id="0")
        last = None
        for event in stream:
            if event.type == "artifact.created" and event.data["id"] == created["id"]:
                self.assertEqual(event.data["workspace_id"], self.key.workspace_id)
                last = event.id
                break
        stream.close()
        assert last is not None
        missed = self.key.create_artifact("task_plan", "Made while away", content={})
        resumed = self.person.events(last_event_id=last)
        event = next(resumed)
        resumed.close()
        self.assertEqual((event.type, event.data["id"]), ("artifact.created", missed["id"]))
        gone = self.person.events(last_event_id="999999999")
        self.assertEqual(next(gone).type, "reset")
        gone.close()
        with self.assertRaises(CairnError) as refused:
            next(self.other.events(workspace_id=self.key.workspace_id))
        self.assertEqual(refused.exception.status_code, 403)

    def test_6_login_workspaces_keys_and_review_filters(self) -> None:
        env = live()
        session = CairnClient.login(env["url"], env["email"], env["password"], max_retries=0)
        self.assertEqual(session.me()["user"]["email"], env["email"])
        self.assertIn(env["workspace"], [w["id"] for w in session.list_workspaces()])
        team = session.create_workspace("Python team")
        self.assertEqual(team["role"], "owner")
        self.assertEqual([m["role"] for m in session.workspace_members(team["id"])], ["owner"])
        made = session.create_api_key("bound", ["knowledge:read", "knowledge:write", "artifacts:read"],
                                      workspace_id=team["id"])
        self.assertTrue(made["key"].startswith("cairn_"))
        self.assertEqual(made["workspace_id"], team["id"])
        listed = [k for k in session.list_api_keys() if k["id"] == made["id"]]
        self.assertEqual(len(listed), 1)
        self.assertNotIn("key", listed[0])
        self.assertEqual(session.get_api_key(made["id"])["name"], "bound")

        # a bound key's upload without a scope lands in its workspace; naming the organization is refused
        bound = CairnClient(env["url"], token=made["key"], max_retries=0)
        uploaded = bound.upload_document(b"Wombat rota for the team.", file_name="rota.txt")
        placed = session.get_document(uploaded["document"]["id"])["document"]
        self.assertEqual((placed["scope"], placed["workspaceId"]), ("workspace", team["id"]))
        with self.assertRaises(CairnError) as refused:
            bound.upload_document(b"x", file_name="x.txt", scope="organization")
        self.assertEqual((refused.exception.status_code, refused.exception.code), (403, "WORKSPACE_FORBIDDEN"))

        # the review queue's filters
        asks = self.key.create_artifact("task_plan", "Asks a person", review_policy="request_review")
        self.key.create_artifact("task_plan", "Decides alone", review_policy="agent_decides")
        waiting = [a["id"] for a in self.key.iter_artifacts(awaiting="person")]
        self.assertIn(asks["id"], waiting)
        self.assertTrue(all(a["review_policy"] == "request_review"
                            for a in self.key.list_artifacts(review_policy="request_review")["artifacts"]))
        self.assertEqual(self.key.list_artifacts(review_policy="agent_decides", type="code_change")["meta"]["count"], 0)

        rotated = session.rotate_api_key(made["id"])
        self.assertNotEqual(rotated["key"], made["key"])
        with self.assertRaises(CairnError) as old:
            bound.list_artifacts()
        self.assertEqual(old.exception.status_code, 401)
        session.revoke_api_key(rotated["id"])
        with self.assertRaises(CairnError) as revoked:
            bound.with_options(token=rotated["key"]).list_artifacts()
        self.assertEqual(revoked.exception.status_code, 401)
        with self.assertRaises(CairnError) as foreign:
            self.other.get_api_key(made["id"])
        self.assertEqual(foreign.exception.status_code, 404)
        with self.assertRaises(CairnError) as wrong:
            CairnClient.login(env["url"], env["email"], "not the password", max_retries=0)
        self.assertEqual(wrong.exception.status_code, 401)
        session.sign_out()
        with self.assertRaises(CairnError) as ended:
            session.me()
        self.assertEqual(ended.exception.status_code, 401)


class FaultyServer(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        self.plan: list[tuple[int, dict[str, str], object] | str] = []
        self.seen: list[tuple[str, str | None]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def handle_any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                self.rfile.read(length)
                server.seen.append((self.command, self.headers.get("idempotency-key")))
                step = server.plan.pop(0) if server.plan else (500, {}, {})
                if step == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                assert not isinstance(step, str)
                status, headers, body = step
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = handle_any  # noqa: N815

        super().__init__(("127.0.0.1", 0), Handler)


class RetryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = FaultyServer()
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.client = CairnClient(f"http://127.0.0.1:{self.server.server_address[1]}", token="cairn_test", base_delay=0.001)
        self.limited = (429, {"retry-after": "0"}, {"success": False, "statusCode": 429, "code": "RATE_LIMITED", "message": "slow down"})
        self.artifact = (200, {}, {"success": True, "data": {"id": "a1"}})

    def test_429_and_503_are_retried_with_one_idempotency_key(self) -> None:
        self.server.plan += [self.limited, (503, {}, {"code": "SERVICE_UNAVAILABLE", "message": "closing"}), (201, {}, {"success": True, "data": {"id": "a1"}})]
        self.assertEqual(self.client.create_artifact("task_plan", "T")["id"], "a1")
        keys = [k for _m, k in self.server.seen]
        self.assertEqual(len(keys), 3)
        self.assertTrue(keys[0] and len(set(keys)) == 1)
        self.server.plan.append((201, {}, {"success": True, "data": {}}))
        self.client.create_artifact("task_plan", "T2")
        self.assertNotEqual(self.server.seen[-1][1], keys[0], "a new call, a new key")

    def test_network_errors(self) -> None:
        self.server.plan += ["drop", self.artifact]
        self.assertEqual(self.client.get_artifact("a1")["id"], "a1")
        self.assertEqual(len(self.server.seen), 2)
        self.server.seen.clear()
        self.server.plan += ["drop", self.artifact]
        with self.assertRaises(CairnError) as err:
            self.client.update_artifact("a1", title="x")
        self.assertEqual((err.exception.status_code, err.exception.code), (0, "NETWORK_ERROR"))
        self.assertEqual(len(self.server.seen), 1, "PATCH is not repeated blindly")

    def test_exhausted_and_long_retry_after(self) -> None:
        self.server.plan += [self.limited] * 4
        with self.assertRaises(CairnError) as err:
            self.client.get_artifact("a1")
        self.assertEqual((err.exception.status_code, err.exception.code, err.exception.message, err.exception.retry_after), (429, "RATE_LIMITED", "slow down", 0))
        self.assertEqual(len(self.server.seen), 4)
        self.server.seen.clear()
        self.server.plan.append((429, {"retry-after": "3600"}, {"code": "RATE_LIMITED", "message": "later"}))
        with self.assertRaises(CairnError) as later:
            self.client.get_artifact("a1")
        self.assertEqual(later.exception.retry_after, 3600)
        self.assertEqual(len(self.server.seen), 1)

    def test_backoff(self) -> None:
        self.assertEqual(self.client.delay_for(0, 2.0), 2.0)
        delays = [self.client.delay_for(3) for _ in range(50)]
        self.assertTrue(all(0.004 <= d <= 0.008 for d in delays))
        self.assertGreater(len(set(delays)), 1)


class WebhookTest(unittest.TestCase):
    def test_cairn_signature(self) -> None:
        secret = "whsec_" + "ab" * 32
        body = json.dumps({"event": "message.created", "data": {"text": "héllo"}})
        hexsig = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
        self.assertTrue(verify_cairn_signature(body, hexsig, secret))
        self.assertTrue(verify_cairn_signature(body.encode(), hexsig, secret))
        self.assertFalse(verify_cairn_signature(body + " ", hexsig, secret))
        self.assertFalse(verify_cairn_signature(body, None, secret))
        self.assertTrue(verify_webhook(body, {"X-Cairn-Signature": hexsig}, secret))
        self.assertFalse(verify_webhook(body, {}, secret))

    def test_standard_webhooks_signed_by_the_reference_library(self) -> None:
        sample = json.loads(live()["webhook"])  # signed in the tap test with the `standardwebhooks` package
        body, headers, secret, old = sample["body"], sample["headers"], sample["secret"], sample["oldSecret"]
        now = int(headers["webhook-timestamp"])
        self.assertTrue(verify_standard_webhook(body, headers, secret, now=now))
        self.assertTrue(verify_standard_webhook(body, headers, old, now=now), "the old secret during a rotation")
        self.assertTrue(verify_webhook(body, headers, secret, now=now + 299))
        self.assertFalse(verify_webhook(body, headers, secret, now=now + 301), "too old")
        self.assertFalse(verify_webhook(body, headers, secret, now=now - 400), "from the future")
        self.assertFalse(verify_standard_webhook(body + "x", headers, secret, now=now))
        self.assertFalse(verify_standard_webhook(body, {**headers, "webhook-id": "other"}, secret, now=now))
        self.assertFalse(verify_standard_webhook(body, headers, "whsec_" + base64.b64encode(b"x" * 32).decode(), now=now))


if __name__ == "__main__":
    unittest.main()
