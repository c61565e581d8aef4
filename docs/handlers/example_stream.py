#!/usr/bin/env python3
"""A minimal stand-alone stream: handler for outboxctl drain.

    outboxctl drain organization 42 --handler 'stream:python3 docs/handlers/example_stream.py'

Reads one handler document per line on stdin, "delivers" it (here: appends a line to the
file named by $DELIVERED_LOG, or writes it to stderr), and answers one acknowledgement line
per document on stdout (stream protocol 2: each ack echoes its document's "token", which
proves to outboxctl that the document was read). Replace deliver() with the real work;
keep it idempotent.
"""
import json
import os
import sys


def deliver(doc):
    log = os.environ.get("DELIVERED_LOG")
    line = "%s %s %s\n" % (doc["id"], doc["category_name"], doc["object_identifier"])
    if log:
        with open(log, "a") as f:
            f.write(line)
    else:
        sys.stderr.write("delivered " + line)


def main():
    for line in sys.stdin:
        doc = json.loads(line)
        try:
            deliver(doc)
            ack = {"id": doc["id"], "token": doc["token"], "ok": True}
        except Exception as e:  # one failed message: say so, outboxctl stops there
            ack = {"id": doc["id"], "token": doc["token"], "ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(ack) + "\n")
        sys.stdout.flush()  # outboxctl waits for this line before it sends the next document


if __name__ == "__main__":
    main()
