#!/usr/bin/env python3
"""Baselines and scans for scripts/bench.sh (SPEC §10), measured in the same run.

  zlib FILE BATCH            raw zlib level 6 of the same NDJSON, one core, per batch of BATCH lines
  export LOGS OUT            convert log NDJSON into the systemd journal export format
  journal-remote PORT FILE BATCH SECONDS
                             POST export-format entries to systemd-journal-remote, records/s
  scan URL APP SINCE UNTIL [json|ndjson] [events|logs]
                             page GET /v1/events (or /v1/logs)?since&until&app=&limit=10000, time, count, first byte
                             (bodies read in full, not parsed, and counted after the clock stops:
                             NDJSON by lines, JSON by records' `{"id":` openings, checked against
                             a parse of the first page)
  bundle-seed URL DIR DEVICE N
                             POST N records of the dumped dataset (80% events, 20% logs) as one device
  bundle URL DEVICE SINCE    GET /v1/bundles?device= (zip), time; records counted from its manifest
  stats URL HOURS            GET /v1/stats/{enrollment,launches,actions} over the HOURS whole hours
                             before the current one, from rollups and with source=records (best of 3)
  stats-windows URL          the same, interval 1h, for: the last hour and the last 24 h ending now (ms
                             edges), the last hour from a minute's start to now, the last 24 h on whole
                             minutes, and the whole hour before the previous one
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


def cmd_scan(url, app, since, until, fmt="json", kind="events"):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    params = {"since": since, "until": until, "app": app, "limit": "10000"}
    headers = auth_headers()
    headers["Accept"] = "application/x-ndjson" if fmt == "ndjson" else "application/json"
    pages = 0
    bodies = []
    server_time = 0.0
    first_byte = []
    t0 = time.monotonic()
    while True:
        q = "/v1/%s?" % kind + urllib.parse.urlencode(params)
        s = time.monotonic()
        conn.request("GET", q, headers=headers)
        r = conn.getresponse()
        head = r.read(1)
        first_byte.append(time.monotonic() - s)
        # The first byte and the rest are kept apart rather than joined (a copy of every page).
        rest = r.read()
        server_time += time.monotonic() - s
        if r.status != 200:
            print(json.dumps({"error": r.status, "body": (head + rest)[:300].decode(errors="replace")}))
            return
        # Read like ClickHouse's rows in step (i): the bytes in full, not parsed, and counted
        # after the clock stops (the page bodies are kept until then). NDJSON's cursor is its
        # Next-Cursor header; a JSON page's follows the records, found from the end (a
        # `search` member may come after it, so only the value itself is decoded).
        bodies.append((head, rest))
        if fmt == "ndjson":
            nxt = r.getheader("Next-Cursor")
        else:
            tail = rest[rest.rfind(b'"nextCursor":'):]
            nxt = json.JSONDecoder().raw_decode(tail[len(b'"nextCursor":'):].decode())[0]
            if pages == 0:
                first_page = (head + rest, nxt)
        pages += 1
        if not nxt:
            break
        params["cursor"] = nxt
    total = time.monotonic() - t0
    if fmt == "ndjson":
        events = sum(h.count(b"\n") + rest.count(b"\n") for h, rest in bodies)
    else:
        # JSON records are counted by the `{"id":` each one starts with (neither pattern can
        # straddle the first byte); the first page's count and cursor are checked against a
        # full parse of it.
        events = sum(rest.count(b'{"id":') for _, rest in bodies)
        body, nxt = first_page
        page = json.loads(body)
        if len(page.get(kind, [])) != bodies[0][1].count(b'{"id":') or page.get("nextCursor") != nxt:
            sys.exit("scan: the page's byte count or cursor disagrees with its parse")
    print(json.dumps({"format": fmt, "matched": events, "pages": pages, "seconds": round(total, 3),
                      "httpSeconds": round(server_time, 3), "matchedPerSecond": round(events / total),
                      "firstByteMsMax": round(max(first_byte) * 1000, 1)}))


def cmd_bundle_seed(url, directory, device, n):
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    headers = auth_headers()
    headers["Content-Type"] = "application/x-ndjson"
    sent = 0
    for name, path, share in (("events", "/v1/telemetry", 0.8), ("logs", "/v1/logs", 0.2)):
        want = int(int(n) * share)
        lines = []
        with open(os.path.join(directory, name + ".ndjson"), "rb") as f:
            for line in f:
                if len(lines) >= want:
                    break
                rec = json.loads(line)
                rec["deviceId"] = device
                lines.append(json.dumps(rec, separators=(",", ":")).encode())
        for i in range(0, len(lines), 500):
            conn.request("POST", path, body=b"\n".join(lines[i:i + 500]), headers=headers)
            r = conn.getresponse()
            body = r.read()
            if r.status != 200:
                sys.exit("seeding failed: %d %s" % (r.status, body[:300]))
            sent += len(lines[i:i + 500])
    print(json.dumps({"seeded": sent, "device": device}))


def cmd_bundle(url, device, since):
    import io, zipfile
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    headers = auth_headers()
    headers["Accept"] = "*/*"
    t0 = time.monotonic()
    conn.request("GET", "/v1/bundles?" + urllib.parse.urlencode({"device": device, "since": since, "format": "zip"}),
                 headers=headers)
    r = conn.getresponse()
    first = time.monotonic() - t0
    body = r.read()
    seconds = time.monotonic() - t0
    if r.status != 200:
        print(json.dumps({"error": r.status, "body": body[:300].decode(errors="replace")}))
        return
    counts = json.loads(zipfile.ZipFile(io.BytesIO(body)).read("manifest.json"))["counts"]
    records = counts["telemetry"] + counts["logs"]
    print(json.dumps({"records": records, "bytes": len(body), "seconds": round(seconds, 3),
                      "recordsPerSecond": round(records / seconds), "firstByteMs": round(first * 1000, 1)}))


def auth_headers():
    # BENCH_TOKEN reads as another caller (a token without pii, say); otherwise the daemon's
    # first-start admin token from the data directory bench.sh exported.
    headers = {"Accept": "application/json"}
    if os.environ.get("BENCH_TOKEN"):
        headers["Authorization"] = "Bearer " + os.environ["BENCH_TOKEN"]
        return headers
    token_path = os.path.join(os.environ.get("MAMTELEMETRY_DATA_DIR", "data"), "admin.token")
    if os.path.exists(token_path):
        headers["Authorization"] = "Bearer " + open(token_path).read().strip()
    return headers


def cmd_stats(url, hours):
    hour = 3_600_000
    until = int(time.time() * 1000) // hour * hour - 1
    since = until + 1 - int(hours) * hour
    return stats_window(url, since, until, "1d", {"hours": int(hours)})


def cmd_stats_windows(url):
    hour = 3_600_000
    now = int(time.time() * 1000)
    this_hour = now // hour * hour
    minute = now // 60_000 * 60_000
    # Ends at now (edges inside minutes), or on whole minutes; and a whole hour.
    windows = {"lastHour": (now - hour, now), "lastHourFromMinute": (minute - hour, now),
               "last24h": (now - 24 * hour, now), "last24hMinuteEdges": (minute - 24 * hour, minute - 1),
               "pastHour": (this_hour - 2 * hour, this_hour - hour - 1)}
    print(json.dumps({name: stats_window(url, since, until, "1h", {"since": since, "until": until}, quiet=True)
                      for name, (since, until) in windows.items()}))


def stats_window(url, since, until, interval, out, quiet=False):
    """Times GET /v1/stats/{enrollment,launches,actions} over since..until from rollups and with
    source=records, best of 3; events/s is every event of the three names in the window over the
    seconds one request took."""
    u = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    headers = auth_headers()

    def get(what, source):
        q = "/v1/stats/%s?%s" % (what, urllib.parse.urlencode(
            {"since": since, "until": until, "interval": interval, "source": source}))
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
    if not quiet:
        print(json.dumps(out))
    return out


if __name__ == "__main__":
    {"zlib": cmd_zlib, "export": cmd_export, "journal-remote": cmd_journal_remote, "scan": cmd_scan, "bundle-seed": cmd_bundle_seed, "bundle": cmd_bundle,
     "stats": cmd_stats, "stats-windows": cmd_stats_windows}[sys.argv[1]](*sys.argv[2:])
