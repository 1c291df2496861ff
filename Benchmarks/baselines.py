#!/usr/bin/env python3
"""Baselines and scans for scripts/bench.sh (SPEC §10), measured in the same run.

  zlib FILE BATCH            raw zlib level 6 of the same NDJSON, one core, per batch of BATCH lines
  export LOGS OUT            convert log NDJSON into the systemd journal export format
  journal-remote PORT FILE BATCH SECONDS
                             POST export-format entries to systemd-journal-remote, records/s
  scan URL APP SINCE UNTIL   page GET /v1/events?since&until&app=&limit=10000, time and count
  stats URL HOURS            GET /v1/stats/{enrollment,launches,actions} over the HOURS whole hours
                             before the current one, from rollups and with source=records (best of 3)
Each prints one JSON object.
"""
import http.client, json, os, sys, time, urllib.parse, zlib


def batches(lines, n):
    for i in range(0, len(lines), n):
        yield b"".join(lines[i:i + n])


def cmd_zlib(path, batch):
    lines = open(path, "rb").read().splitlines(keepends=True)
    chunks = list(batches(lines, int(batch)))
    raw = sum(len(c) for c in chunks)
    t0 = time.process_time()
    out = sum(len(zlib.compress(c, 6)) for c in chunks)
    cpu = time.process_time() - t0
    whole = len(zlib.compress(b"".join(chunks), 6))
    print(json.dumps({"records": len(lines), "rawBytes": raw, "cpuSeconds": round(cpu, 4),
                      "MBPerSecond": round(raw / cpu / 1e6, 2), "recordsPerSecond": round(len(lines) / cpu),
                      "ratioPerBatch": round(raw / out, 2), "ratioWholeFile": round(raw / whole, 2)}))


def export_entry(rec, cursor):
    prio = {"verbose": 7, "info": 6, "warning": 4, "error": 3}.get(rec.get("level"), 6)
    # Realtime from the record's own time (ms precision is enough for a throughput test).
    t = rec["time"]
    ts = int(time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) * 1e6 + int(t[20:23]) * 1000)
    fields = [("__CURSOR", "s=bench;i=%x" % cursor), ("__REALTIME_TIMESTAMP", str(ts)),
              ("__MONOTONIC_TIMESTAMP", str(cursor)), ("_BOOT_ID", "0123456789abcdef0123456789abcdef"),
              ("MESSAGE", rec["message"]), ("PRIORITY", str(prio)),
              ("SYSLOG_IDENTIFIER", "mamtelemetryd"), ("MAM_APP_ID", rec["appId"]),
              ("MAM_DEVICE_ID", rec["deviceId"]), ("MAM_SESSION_ID", rec["sessionId"]),
              ("MAM_COMPONENT", rec["component"]), ("MAM_LEVEL", rec["level"])]
    return "".join("%s=%s\n" % kv for kv in fields) + "\n"


def cmd_export(path, out):
    with open(path) as f, open(out, "w") as o:
        for i, line in enumerate(f):
            o.write(export_entry(json.loads(line), i + 1))


def cmd_journal_remote(port, path, batch, seconds):
    entries = open(path, "rb").read().split(b"\n\n")
    entries = [e + b"\n\n" for e in entries if e.strip()]
    bodies = list(batches(entries, int(batch)))
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
    sent = errors = 0
    t0 = time.monotonic()
    i = 0
    while time.monotonic() - t0 < float(seconds) and i < len(bodies):
        conn.request("POST", "/upload", body=bodies[i], headers={"Content-Type": "application/vnd.fdo.journal"})
        r = conn.getresponse()
        r.read()
        if r.status == 202 or r.status == 200:
            sent += min(int(batch), len(entries) - i * int(batch))
        else:
            errors += 1
        i += 1
    el = time.monotonic() - t0
    print(json.dumps({"records": sent, "seconds": round(el, 3), "recordsPerSecond": round(sent / el),
                      "errors": errors, "exhausted": i >= len(bodies)}))


def cmd_scan(url, app, since, until):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    params = {"since": since, "until": until, "app": app, "limit": "10000"}
    # The daemon wrote its first-start admin token into the data directory bench.sh exported.
    token_path = os.path.join(os.environ.get("MAMTELEMETRY_DATA_DIR", "data"), "admin.token")
    headers = {"Accept": "application/json"}
    if os.path.exists(token_path):
        headers["Authorization"] = "Bearer " + open(token_path).read().strip()
    events = pages = 0
    server_time = 0.0
    t0 = time.monotonic()
    while True:
        q = "/v1/events?" + urllib.parse.urlencode(params)
        s = time.monotonic()
        conn.request("GET", q, headers=headers)
        r = conn.getresponse()
        body = r.read()
        server_time += time.monotonic() - s
        if r.status != 200:
            print(json.dumps({"error": r.status, "body": body[:300].decode(errors="replace")}))
            return
        page = json.loads(body)
        events += len(page.get("events", []))
        pages += 1
        nxt = page.get("nextCursor")
        if not nxt:
            break
        params["cursor"] = nxt
    total = time.monotonic() - t0
    print(json.dumps({"matched": events, "pages": pages, "seconds": round(total, 3),
                      "httpSeconds": round(server_time, 3)}))


def auth_headers():
    # The daemon wrote its first-start admin token into the data directory bench.sh exported.
    token_path = os.path.join(os.environ.get("MAMTELEMETRY_DATA_DIR", "data"), "admin.token")
    headers = {"Accept": "application/json"}
    if os.path.exists(token_path):
        headers["Authorization"] = "Bearer " + open(token_path).read().strip()
    return headers


def cmd_stats(url, hours):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    headers = auth_headers()
    hour = 3_600_000
    until = int(time.time() * 1000) // hour * hour - 1
    since = until + 1 - int(hours) * hour

    def get(what, source):
        q = "/v1/stats/%s?%s" % (what, urllib.parse.urlencode(
            {"since": since, "until": until, "interval": "1d", "source": source}))
        best, answer = None, None
        for _ in range(3):
            s = time.monotonic()
            conn.request("GET", q, headers=headers)
            r = conn.getresponse()
            body = r.read()
            took = time.monotonic() - s
            if r.status != 200:
                raise SystemExit(json.dumps({"error": r.status, "body": body[:300].decode(errors="replace")}))
            best = took if best is None else min(best, took)
            answer = body
        return best, answer

    out = {"hours": int(hours)}
    events = 0
    for what in ("enrollment", "launches", "actions"):
        rollups, a = get(what, "rollups")
        records, b = get(what, "records")
        answer = json.loads(a)
        events += answer["total"]["count"] if what == "enrollment" else answer["total"]
        out[what] = {"rollupsSeconds": round(rollups, 4), "recordsSeconds": round(records, 4),
                     "speedup": round(records / rollups, 1), "sameAnswer": a == b}
    # Every generated event is one of the three names, and each request reads them all.
    out["eventsInWindow"] = events
    for what in ("enrollment", "launches", "actions"):
        r = out[what]
        r["rollupsEventsPerSecond"] = int(events / r["rollupsSeconds"])
        r["recordsEventsPerSecond"] = int(events / r["recordsSeconds"])
    print(json.dumps(out))


if __name__ == "__main__":
    {"zlib": cmd_zlib, "export": cmd_export, "journal-remote": cmd_journal_remote, "scan": cmd_scan,
     "stats": cmd_stats}[sys.argv[1]](*sys.argv[2:])
