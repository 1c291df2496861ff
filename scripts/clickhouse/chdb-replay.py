#!/usr/bin/env python3
"""Replays a transcript of the ClickHouse backend's statements through chdb (a current
ClickHouse engine in process) and compares each answer with the one ClickHouse 18.16 gave.

The transcript (JSON lines, written by ClickHouseTranscriptTests) holds every statement the
daemon's client sent, in order: its parameterized text (`{pN:Type}`, what servers from 19.11
on receive), the parameter values, an insert's rows, and 18.16's answer. Statements whose
answer depends on the server itself (`version()`, `system.parts`) are run but not compared;
the records' partition ids are checked to have the form retention parses.
Exit status 1 on any failure or difference, with each one printed."""
import json
import re
import sys

import chdb
from chdb import session

# Answers that describe the server, not the data: run, never compared.
SERVER_SPECIFIC = ("version()", "system.parts", "appliedAt")


def main(path):
    entries = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    if not entries:
        print("chdb replay: the transcript is empty", file=sys.stderr)
        return 1
    print(f"chdb {chdb.__version__}: replaying {len(entries)} statements")
    s = session.Session()
    failures = 0
    compared = 0
    for n, e in enumerate(entries):
        sql = e["sql"]
        if e.get("data") is not None:
            sql = sql + "\n" + e["data"]
        try:
            answer = s.query(sql, "TabSeparated", params=e["params"] or None)
            text = answer.bytes().decode("utf-8") if hasattr(answer, "bytes") else str(answer)
        except Exception as error:  # chdb raises its own RuntimeError with the server's message
            print(f"#{n} FAILED on chdb: {error}\n  statement: {e['sql']}\n  params: {e['params']}")
            failures += 1
            continue
        if "partition_id" in e["sql"]:
            # Retention reads `(class, day)` back from the records' partition ids (`2-20240131`).
            for line in text.splitlines():
                table, partition = line.split("\t")[:2]
                if table.startswith("records") and not re.fullmatch(r"[0-2]-[0-9]{8}", partition):
                    print(f"#{n} partition id {partition!r} of {table} is not (class)-(YYYYMMDD) on chdb")
                    failures += 1
        if e["sql"].lstrip().upper().startswith("SELECT") and not any(k in e["sql"] for k in SERVER_SPECIFIC):
            compared += 1
            same = text == e["answer"]
            if not same and "ORDER BY" not in e["sql"]:
                # Without ORDER BY the row order is the engine's own: compare the rows as a multiset.
                same = sorted(text.splitlines()) == sorted(e["answer"].splitlines())
            if not same:
                print(f"#{n} DIFFERS\n  statement: {e['sql']}\n  params: {e['params']}\n"
                      f"  18.16: {e['answer']!r}\n  chdb:  {text!r}")
                failures += 1
    print(f"chdb replay: {len(entries)} statements run, {compared} answers compared with 18.16, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
