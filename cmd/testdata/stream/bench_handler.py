"""The handler logic of BenchmarkHandlers: parse the document, check it, acknowledge.
With --once it handles the one document on stdin and exits (for exec:), else it is a
stream: co-process."""
import json
import sys


def deliver(doc):
    if doc["shard_scope"] < 0 or "payload" not in doc:
        raise ValueError("bad document")


if sys.argv[1:] == ["--once"]:
    deliver(json.loads(sys.stdin.read()))
    sys.exit(0)
for line in sys.stdin:
    doc = json.loads(line)
    deliver(doc)
    sys.stdout.write(json.dumps({"id": doc["id"], "token": doc["token"], "ok": True}) + "\n")
    sys.stdout.flush()
