#!/usr/bin/python3
"""librdkafka (Debian's python3-confluent-kafka over librdkafka 2.0.2) transactional clients for
test-e2e/transactions-clients.test.ts. Run with /usr/bin/python3 (the system interpreter has the
module). One JSON object per line on stdout; the last one says how it ended. TXN_PRODUCER_DEBUG
sets librdkafka's `debug` (e.g. eos,protocol) for its stderr.

  produce <bootstrap> <txn-id> <topic> <transactions> <per-txn> <abort-every>
      init_transactions, then <transactions> transactions of <per-txn> records to partition 0,
      aborting every <abort-every>th; reports {"committed": [...values...]} at the end.
  ctp <bootstrap> <txn-id> <in-topic> <out-topic> <group> <expected> <abort-every>
      consume-transform-produce: reads <in-topic> (read_committed, manual commits), writes
      "out-<value>" to <out-topic> in a transaction with send_offsets_to_transaction, aborting every
      <abort-every>th transaction (and rewinding to the positions it started from), until
      <expected> input records are committed; retriable errors are retried, abortable ones abort
      and redo the batch; {"progress": n} after each commit.
  hang <bootstrap> <txn-id> <topic> <transaction-timeout-ms>
      opens a transaction, sends 3 records, waits for them to be acknowledged, prints
      {"sent": true} and waits for a line on stdin; then commits and reports the outcome.
"""
import json
import os
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def out(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def error_fields(e):
    err = e.args[0] if e.args else None
    if hasattr(err, "name"):
        return {
            "error": err.name(),
            "fatal": err.fatal(),
            "retriable": err.retriable(),
            "abortable": err.txn_requires_abort(),
            "message": err.str(),
        }
    return {"error": str(e)}


def retrying(call):
    """Calls `call` again while it fails with a retriable error (librdkafka's transactional API contract)."""
    while True:
        try:
            return call()
        except KafkaException as e:
            if not e.args[0].retriable():
                raise


def producer(bootstrap, txn_id, **extra):
    conf = {"bootstrap.servers": bootstrap, "transactional.id": txn_id, "linger.ms": 5}
    conf.update(extra)
    if os.environ.get("TXN_PRODUCER_DEBUG"):
        conf["debug"] = os.environ["TXN_PRODUCER_DEBUG"]
    return Producer(conf)


def produce(bootstrap, txn_id, topic, transactions, per_txn, abort_every):
    p = producer(bootstrap, txn_id)
    p.init_transactions(60)
    committed = []
    for t in range(int(transactions)):
        p.begin_transaction()
        values = ["t%d-r%d" % (t, i) for i in range(int(per_txn))]
        for v in values:
            p.produce(topic, value=v.encode(), key=("t%d" % t).encode(), partition=0)
        if (t + 1) % int(abort_every) == 0:
            # flush first: abort_transaction purges records still queued (the log would not hold them),
            # and aborting while AddPartitionsToTxn is in flight can end in a fatal INVALID_TXN_STATE
            # from EndTxn, against Kafka too (librdkafka issue #4849)
            p.flush(60)
            p.abort_transaction(60)
        else:
            p.commit_transaction(60)
            committed.extend(values)
    out(done=True, committed=committed)


def ctp(bootstrap, txn_id, in_topic, out_topic, group, expected, abort_every):
    expected, abort_every = int(expected), int(abort_every)
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
    })
    c.subscribe([in_topic])
    p = producer(bootstrap, txn_id)
    p.init_transactions(60)
    done = 0
    txns = 0
    aborted = 0
    failed = 0
    while done < expected:
        msgs = c.consume(num_messages=50, timeout=1.0)
        msgs = [m for m in msgs if m.error() is None]
        if not msgs:
            continue
        # where each partition of this batch starts, to rewind to after an abort
        starts = {}
        for m in msgs:
            starts.setdefault(m.partition(), m.offset())
        txns += 1
        committed = False
        try:
            p.begin_transaction()
            for m in msgs:
                p.produce(out_topic, key=m.key(), value=b"out-" + m.value())
            retrying(lambda: p.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(), 60))
            if txns % abort_every == 0:
                p.flush(60)
                p.abort_transaction(60)
                aborted += 1
            else:
                retrying(lambda: p.commit_transaction(60))
                committed = True
        except KafkaException as e:
            # librdkafka's pattern: an abortable error aborts the transaction and the batch is redone
            if not e.args[0].txn_requires_abort():
                raise
            failed += 1
            out(failed=True, **error_fields(e))
            retrying(lambda: p.abort_transaction(60))
        if committed:
            done += len(msgs)
            out(progress=done)
        else:
            for part, off in starts.items():
                c.seek(TopicPartition(in_topic, part, off))
    c.close()
    out(done=True, records=done, transactions=txns, aborted=aborted, failed=failed)


def hang(bootstrap, txn_id, topic, timeout_ms):
    p = producer(bootstrap, txn_id, **{"transaction.timeout.ms": int(timeout_ms)})
    p.init_transactions(60)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, value=("hung-%d" % i).encode(), partition=0)
    if p.flush(30) != 0:
        out(done=False, error="records not acknowledged")
        return
    out(sent=True)
    sys.stdin.readline()
    try:
        p.commit_transaction(30)
        out(done=True, committed=True)
    except KafkaException as e:
        out(done=True, committed=False, **error_fields(e))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    try:
        {"produce": produce, "ctp": ctp, "hang": hang}[cmd](*args)
    except KafkaException as e:
        out(done=False, **error_fields(e))
        sys.exit(1)


if __name__ == "__main__":
    main()
