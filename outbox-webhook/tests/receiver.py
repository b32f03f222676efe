"""A webhook receiver for outbox-webhook's tests.

Verifies each POST with the standardwebhooks package (an implementation of the scheme
apart from ours) against the secrets given as arguments, answers 204 when one of them
verifies and 401 otherwise, and keeps what it got for GET /received. A POST to
/status/CODE answers CODE instead (with `Retry-After: V` for ?retry-after=V), and
/status/302 also names a Location. Prints the port it listens on, then serves until
killed.
"""

import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

VERIFIERS = [Webhook(secret) for secret in sys.argv[1:]]
RECEIVED = []
LOCK = threading.Lock()


def verify(body, headers):
    """Whether a secret verifies the message, and why not when none does."""
    why = "no secret configured"
    for verifier in VERIFIERS:
        try:
            verifier.verify(body, headers, json_parse=False)
            return True, None
        except WebhookVerificationError as e:
            why = str(e)
    return False, why


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, code, body=b"", extra=None):
        self.send_response(code)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        url = urlsplit(self.path)
        if url.path.startswith("/status/"):
            code = int(url.path.rsplit("/", 1)[1])
            extra = {}
            retry_after = parse_qs(url.query).get("retry-after")
            if retry_after:
                extra["Retry-After"] = retry_after[0]
            if code == 302:
                extra["Location"] = "/elsewhere"
            self.answer(code, b"status as asked", extra)
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        verified, why = verify(body, headers)
        record = {
            "path": url.path,
            "headers": headers,
            "body": base64.b64encode(body).decode(),
            "verified": verified,
        }
        with LOCK:
            RECEIVED.append(record)
        if verified:
            self.answer(204)
        else:
            self.answer(401, ("signature refused: %s" % why).encode())

    def do_GET(self):
        with LOCK:
            body = json.dumps(RECEIVED).encode()
        self.answer(200, body, {"Content-Type": "application/json"})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
