"""A webhook receiver on loopback for the alerts' tests (tests/api/test_alerts.py,
tests/cluster/test_alerts_pg.py), and the checks every delivery must pass."""
import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler

from harness import serve_http


class Receiver:
    """A webhook on loopback: records every POST (delivery id, signature,
    body) and answers 500 to the first `fail_first` of them, then 200."""

    def __init__(self, fail_first=0):
        self.fail_first = fail_first
        self.lock = threading.Lock()
        self.posts = []  # (delivery id, signature, body bytes, status answered)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n)
                with outer.lock:
                    status = 500 if len(outer.posts) < outer.fail_first else 200
                    outer.posts.append((self.headers.get("X-Newsd-Delivery"),
                                        self.headers.get("X-Newsd-Signature"), body, status,
                                        self.headers.get("Content-Type")))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass

        self.httpd, base = serve_http(Handler)
        self.url = base + "hook"

    def snapshot(self):
        with self.lock:
            return list(self.posts)

    def delivered(self, alert_id):
        """Article URLs of the deliveries of alert_id answered 200, in order."""
        out = []
        for did, sig, body, status, ctype in self.snapshot():
            doc = json.loads(body)
            if doc["alert"] == alert_id and status == 200:
                out.extend(a["url"] for a in doc["articles"])
        return out

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def check_deliveries(rec, secrets, dropped=()):
    """Every delivery id has one body; signatures verify; per alert, a
    delivery is first sent only after the one before it was answered 200
    (or, for the ids in dropped, given up)."""
    bodies, open_by_alert = {}, {}
    for did, sig, body, status, ctype in rec.snapshot():
        assert ctype == "application/json"
        assert did and len(did) == 32, did
        assert bodies.setdefault(did, body) == body, "delivery %s changed its body" % did
        doc = json.loads(body)
        assert list(doc) == ["alert", "articles"] and 1 <= len(doc["articles"]) <= 100
        want = "sha256=" + hmac.new(secrets[doc["alert"]].encode(), body,
                                    hashlib.sha256).hexdigest()
        assert sig == want
        prev = open_by_alert.get(doc["alert"])
        assert prev in (None, did), "alert %d: %s sent before %s succeeded" % (
            doc["alert"], did, prev)
        open_by_alert[doc["alert"]] = None if status == 200 or did in dropped else did
    return bodies
