#!/bin/sh
# corral-demo.sh <service> <action>: the three demo services of deploy/examples/docker-demo, run by the shell
# automator on real nodes. kv: a key-value store on TCP 7000; app: an HTTP app on 8080 that keeps its state in
# the store named by the cluster config (demo.store, "%host.service.kv%:7000"); web: an HTTP front on 80 that
# forwards to the app (demo.app); monitor: an HTTP health page on 9100 (added later, beside web).
# Actions: install, configure, start, stop.
set -eu
service=$1
action=$2
home=/opt/corral-demo
etc=/etc/corral-demo
pidfile=/run/corral-demo-$service.pid
log=/var/log/corral-demo-$service.log

case $service in kv | app | web | monitor) ;; *) echo "unknown service $service" >&2; exit 2 ;; esac

port() { case $service in kv) echo 7000 ;; app) echo 8080 ;; web) echo 80 ;; monitor) echo 9100 ;; esac; }

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case $action in
install)
  mkdir -p "$home" "$etc" /var/lib/corral-demo
  cat > "$home/demo.py" <<'PY'
import http.server, json, os, socket, socketserver, sys, threading, time, urllib.request

service = sys.argv[1]
conf = json.load(open(f"/etc/corral-demo/{service}.json")) if os.path.exists(f"/etc/corral-demo/{service}.json") else {}
host = socket.gethostname()

def store_call(line):
    addr, port = conf["store"].rsplit(":", 1)
    with socket.create_connection((addr, int(port)), timeout=5) as s:
        s.sendall((line + "\n").encode())
        return s.makefile().readline().strip()

def kv():
    data, lock = {}, threading.Lock()
    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            for raw in self.rfile:
                parts = raw.decode().strip().split(" ", 2)
                with lock:
                    if parts[0] == "SET" and len(parts) == 3:
                        data[parts[1]] = parts[2]
                        print(f"SET {parts[1]}={parts[2]} from {self.client_address[0]}", flush=True)
                        reply = "OK"
                    elif parts[0] == "GET" and len(parts) >= 2:
                        reply = data.get(parts[1], "")
                    else:
                        reply = "ERR"
                self.wfile.write((reply + "\n").encode())
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    socketserver.ThreadingTCPServer(("0.0.0.0", 7000), Handler).serve_forever()

class Http(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def reply(self, body):
        out = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(out)

def app():
    # Reaching the store is the app's first job: it fails to start without it.
    for _ in range(50):
        try:
            store_call(f"SET app {host}")
            break
        except OSError:
            time.sleep(0.2)
    else:
        sys.exit(f"store {conf.get('store')} unreachable")
    open("/var/lib/corral-demo/app-reached-store", "w").write(conf["store"] + "\n")
    class Handler(Http):
        def do_GET(self):
            hits = int(store_call("GET hits") or 0) + 1
            store_call(f"SET hits {hits}")
            self.reply({"app": host, "store": conf["store"], "hits": hits, "greeting": conf.get("greeting", "hello")})
    http.server.ThreadingHTTPServer(("0.0.0.0", 8080), Handler).serve_forever()

def web():
    class Handler(Http):
        def do_GET(self):
            with urllib.request.urlopen(f"http://{conf['app']}/", timeout=5) as r:
                self.reply({"web": host, "via": conf["app"], "app": json.load(r)})
    http.server.ThreadingHTTPServer(("0.0.0.0", 80), Handler).serve_forever()

def monitor():
    class Handler(Http):
        def do_GET(self):
            self.reply({"monitor": host, "pids": sorted(p for p in os.listdir("/run") if p.startswith("corral-demo-"))})
    http.server.ThreadingHTTPServer(("0.0.0.0", 9100), Handler).serve_forever()

{"kv": kv, "app": app, "web": web, "monitor": monitor}[service]()
PY
  echo "installed $service in $home"
  ;;
configure)
  # The cluster config arrives in the task file with its macros expanded for this node.
  mkdir -p "$etc"
  python3 - "$CORRAL_TASK_FILE" "$etc/$service.json" <<'PY'
import json, sys
task = json.load(open(sys.argv[1]))
demo = task["config"]["cluster"].get("demo", {})
json.dump(demo, open(sys.argv[2], "w"))
print("configured", json.dumps(demo))
PY
  ;;
start)
  if running; then echo "$service already running (pid $(cat "$pidfile"))"; exit 0; fi
  # Its own session, no inherited descriptors: the action ends while the service goes on.
  setsid python3 "$home/demo.py" "$service" </dev/null >>"$log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 1 50); do
    if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $(port)), timeout=1)" 2>/dev/null; then
      echo "$service started (pid $(cat "$pidfile"), port $(port))"
      exit 0
    fi
    running || { echo "$service exited at start:" >&2; tail -5 "$log" >&2; exit 1; }
    sleep 0.2
  done
  echo "$service did not open port $(port)" >&2
  exit 1
  ;;
stop)
  if running; then
    pid=$(cat "$pidfile")
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    echo "$service stopped (pid $pid)"
  else
    echo "$service was not running"
  fi
  rm -f "$pidfile"
  ;;
*)
  echo "unknown action $action" >&2
  exit 2
  ;;
esac
