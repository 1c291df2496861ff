#!/usr/bin/env python3
"""Dumps the keys blob of every grouped segment of a data directory's stores, one file per
row, for the KeysAnatomyMeasurement test (which says where the keys bytes go):

    python3 Benchmarks/keys-anatomy.py DATA_DIR OUT_DIR
    KEYS_ANATOMY_DIR=OUT_DIR swift test --skip-build --filter KeysAnatomyMeasurement

Reads the databases read-only, so it may run beside the daemon that writes them."""
import glob, os, sqlite3, sys

data, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
n = 0
for db in sorted(glob.glob(os.path.join(data, "*", "records.sqlite"))):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    for (keys,) in c.execute("SELECT keys FROM batch WHERE substr(keys, 1, 1) = x'02'"):
        with open(os.path.join(out, "%06d.keys" % n), "wb") as f:
            f.write(keys)
        n += 1
print("%d segments" % n)
