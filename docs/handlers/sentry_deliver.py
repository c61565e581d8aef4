"""stream: handler that delivers through Sentry's own signal receivers.

Run it inside a Sentry installation, where `sentry exec` has set up Django:

    outboxctl drain organization 42 \
      --handler 'stream:sentry exec docs/handlers/sentry_deliver.py' --yes

For each document it builds an unsaved outbox row of the document's table and calls its
send_signal(): the receivers of process_region_outbox / process_cell_outbox /
process_control_outbox run exactly as they do when Sentry drains the shard itself
(reference §3.7), once per message, in this one long-lived process. The row is never saved:
outboxctl deletes the real rows after the ack, which echoes the document's "token" (stream
protocol 2, docs/handlers/README.md).

NOT RUN HERE: Sentry cannot be installed on the machines this repository is tested on. Only
the protocol side is tested, with OUTBOXCTL_SENTRY_STANDIN=1, which replaces the Sentry
import and send_signal() by a stand-in that imports nothing from Sentry. Try it on a
staging installation before an incident.
"""
import datetime
import json
import os
import sys


def _sentry_models():
    from sentry.hybridcloud.models import outbox as m

    # Newer Sentry names the region silo "cell" (CellOutbox, cell_name).
    cell = getattr(m, "CellOutbox", None) or getattr(m, "RegionOutbox")
    return cell, m.ControlOutbox


def _parse_time(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None


def build(doc, cell_model, control_model):
    """An unsaved outbox instance of the document's table."""
    fields = dict(
        shard_scope=doc["shard_scope"],
        shard_identifier=doc["shard_identifier"],
        category=doc["category"],
        object_identifier=doc["object_identifier"],
        payload=doc["payload"],
        date_added=_parse_time(doc.get("date_added")),
        scheduled_for=_parse_time(doc.get("scheduled_for")),
    )
    fields["id"] = doc["id"]
    if "control" in doc["table"]:
        model = control_model
        names = {f.name for f in model._meta.get_fields()}
        key = "cell_name" if "cell_name" in names else "region_name"
        fields[key] = doc.get("cell", "")
    else:
        model = cell_model
    return model(**fields)


class _StandIn:
    """Replaces Sentry in tests: records what would have been sent."""

    def __init__(self, **fields):
        self.fields = fields

    def send_signal(self):
        fail = os.environ.get("STANDIN_FAIL_ID")
        if fail and str(self.fields["id"]) == fail:
            raise RuntimeError("receiver failed for object %s" % self.fields["object_identifier"])
        log = os.environ.get("DELIVERED_LOG")
        if log:
            with open(log, "a") as f:
                f.write("%s %s\n" % (self.fields["id"], type(self).__name__))


class CellStandIn(_StandIn):
    pass


class ControlStandIn(_StandIn):
    class _meta:
        @staticmethod
        def get_fields():
            class F:
                name = "cell_name"

            return [F]


def main():
    if os.environ.get("OUTBOXCTL_SENTRY_STANDIN") == "1":
        models = (CellStandIn, ControlStandIn)
    else:
        models = _sentry_models()
    out = sys.stdout
    for line in sys.stdin:
        doc = json.loads(line)
        try:
            build(doc, *models).send_signal()
            ack = {"id": doc["id"], "token": doc["token"], "ok": True}
        except Exception as e:  # the message failed: outboxctl stops there, head-of-line
            ack = {"id": doc["id"], "token": doc["token"], "ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        out.write(json.dumps(ack) + "\n")
        out.flush()


# Unconditional: `sentry exec` runs the file as a script, and so does python3 for the stand-in.
main()
