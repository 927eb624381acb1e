"""The demo's greeter: reads /etc/corral-greeter/greeter.json once at start and answers every GET with it."""
import http.server
import json
import socket
import subprocess

CONF = "/etc/corral-greeter/greeter.json"
conf = json.load(open(CONF))
jq = subprocess.run(["jq", "--version"], capture_output=True, text=True).stdout.strip()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = json.dumps({"host": socket.getfqdn(), "greeting": conf["greeting"], "peers": conf["peers"], "jq": jq}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


http.server.ThreadingHTTPServer(("0.0.0.0", int(conf["port"])), Handler).serve_forever()
