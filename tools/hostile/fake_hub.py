#!/usr/bin/env python3
"""A hostile stand-in for the Hugging Face Hub on 127.0.0.1, for tools/hostile/run.sh (standard library only).

    fake_hub.py MODE FOLDER PORTFILE

serves the files at the top of FOLDER as repository test/hostile (listing at /api/models/test/hostile/revision/main,
files under /test/hostile/resolve/COMMIT/NAME, model.safetensors through a redirect to /cdn/, as the Hub does), and
misbehaves on model.safetensors as MODE says:

    416            answer 416 to every request for it
    stall          send 4096 bytes of it, then nothing (the connection stays open), on every request
    oversize       send 3 MB more than the listing says (Content-Length included)
    ftp-redirect   redirect it to ftp://127.0.0.1/model.safetensors
    bad-redirect   redirect it to an unparsable Location (http://[::1/cdn/model.safetensors)

The port it listens on is written to PORTFILE. It stops by itself after 300 s.
"""
import hashlib
import http.server
import json
import os
import sys
import threading
import time

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "test/hostile"


def main():
    mode, folder, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
    files = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                files[name] = f.read()
    lfs = {"model.safetensors"}

    def listing():
        siblings = []
        for name, content in files.items():
            entry = {"rfilename": name, "size": len(content)}
            if name in lfs:
                entry["blobId"] = hashlib.sha1(b"0").hexdigest()
                entry["lfs"] = {"sha256": hashlib.sha256(content).hexdigest(), "size": len(content), "pointerSize": 134}
            else:
                entry["blobId"] = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
            siblings.append(entry)
        return json.dumps({"id": REPO, "sha": COMMIT, "siblings": siblings}).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send(self, status, body=b"", headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/api/models/%s/revision/main" % REPO:
                self.send(200, listing(), [("Content-Type", "application/json")])
                return
            prefix = "/%s/resolve/%s/" % (REPO, COMMIT)
            if path.startswith(prefix):
                name = path[len(prefix):]
                if name in lfs:
                    location = {"ftp-redirect": "ftp://127.0.0.1/model.safetensors",
                                "bad-redirect": "http://[::1/cdn/model.safetensors"}.get(mode, "/cdn/" + name)
                    self.send(302, headers=[("Location", location)])
                    return
                self.serve(name)
                return
            if path.startswith("/cdn/"):
                self.serve(path[len("/cdn/"):])
                return
            self.send(404, headers=[("X-Error-Code", "EntryNotFound")])

        def serve(self, name):
            content = files.get(name)
            if content is None:
                self.send(404, headers=[("X-Error-Code", "EntryNotFound")])
                return
            if name in lfs and mode == "416":
                self.send(416)
                return
            if name in lfs and mode == "stall":
                self.send_response(200)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content[:4096])
                self.wfile.flush()
                time.sleep(120)
                return
            if name in lfs and mode == "oversize":
                content = content + b"\0" * 3_000_000
            self.send(200, content)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(portfile + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(portfile + ".tmp", portfile)
    threading.Timer(300, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
