"""The handler logic of BenchmarkHandlers: parse the document, check it, acknowledge.
With --once it handles the one document on stdin and exits (for exec:), else it is a
stream: co-process. With --delay-ms N each message takes N ms more, as a receiver that makes
an RPC call or writes to another silo's database does (BenchmarkDrainParallelReceiver)."""
import json
import sys
import time

delay = 0.0
if sys.argv[1:2] == ["--delay-ms"]:
    delay = float(sys.argv[2]) / 1000
    del sys.argv[1:3]


def deliver(doc):
    if doc["shard_scope"] < 0 or "payload" not in doc:
        raise ValueError("bad document")


if sys.argv[1:] == ["--once"]:
    deliver(json.loads(sys.stdin.read()))
    sys.exit(0)
for line in sys.stdin:
    doc = json.loads(line)
    deliver(doc)
    if delay:
        time.sleep(delay)
    sys.stdout.write(json.dumps({"id": doc["id"], "token": doc["token"], "ok": True}) + "\n")
    sys.stdout.flush()
