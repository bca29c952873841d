#!/usr/bin/env python3
"""Publisher/consumer load on a RabbitMQ broker (the thesis' RabbitMQ workload).

Uploaded into the instance and run there with the system's python3 and python3-pika.
``--producers`` processes publish ``--messages`` messages of ``--size`` bytes in total
to one queue while ``--consumers`` processes consume and acknowledge them. Each body
starts with its send time (CLOCK_MONOTONIC, shared by all processes of the instance),
so the consumers measure publish-to-delivery latency. The last line is one JSON
object; a run that did not deliver every message says so there ("complete": false)
and exits with status 1.
"""

import argparse
import json
import multiprocessing as mp
import os
import struct
import sys
import time

import pika

QUEUE = "virtrepro-load"


def parameters(args):
    return pika.ConnectionParameters(host=args.host, port=args.port, heartbeat=0,
                                     credentials=pika.PlainCredentials("guest", "guest"))


def produce(args, count, ready, start):
    connection = pika.BlockingConnection(parameters(args))
    channel = connection.channel()
    filler = os.urandom(max(0, args.size - 8))
    ready.wait()
    while time.monotonic() < start.value:
        pass
    for _ in range(count):
        channel.basic_publish("", QUEUE, struct.pack("<d", time.monotonic()) + filler)
    connection.close()


def consume(args, total, consumed, latencies, ready, stop, deadline):
    mine = []
    try:
        connection = pika.BlockingConnection(parameters(args))
        channel = connection.channel()
        channel.basic_qos(prefetch_count=args.prefetch)
        ready.wait()
        last_tag = acked = None
        for method, _properties, body in channel.consume(QUEUE, inactivity_timeout=0.2):
            now = time.monotonic()
            if method is not None:
                mine.append(now - struct.unpack("<d", body[:8])[0])
                last_tag = method.delivery_tag
                with consumed.get_lock():
                    consumed.value += 1
                if len(mine) % 50 == 0:
                    channel.basic_ack(last_tag, multiple=True)
                    acked = last_tag
            elif stop.is_set():  # a producer failed: nothing more will come
                break
            if consumed.value >= total or now > deadline:
                break
        if last_tag != acked:
            channel.basic_ack(last_tag, multiple=True)
        channel.cancel()
        connection.close()
    finally:  # the parent waits for every consumer's list, also after a failure
        latencies.put(mine)


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, default=5672)
    parser.add_argument("--messages", type=int, required=True)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--producers", type=int, default=1)
    parser.add_argument("--consumers", type=int, default=1)
    parser.add_argument("--prefetch", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args(argv)
    print(f"amqp_load pika={pika.__version__} host={args.host}:{args.port} messages={args.messages} "
          f"size={args.size} producers={args.producers} consumers={args.consumers} prefetch={args.prefetch}",
          flush=True)
    connection = pika.BlockingConnection(parameters(args))
    channel = connection.channel()
    channel.queue_declare(QUEUE)
    channel.queue_purge(QUEUE)
    connection.close()

    ready, stop = mp.Event(), mp.Event()
    start = mp.Value("d", 0.0)
    consumed = mp.Value("l", 0)
    latencies = mp.Queue()
    deadline = time.monotonic() + args.timeout
    shares = [args.messages // args.producers + (i < args.messages % args.producers) for i in range(args.producers)]
    consumers = [mp.Process(target=consume, args=(args, args.messages, consumed, latencies, ready, stop, deadline))
                 for _ in range(args.consumers)]
    producers = [mp.Process(target=produce, args=(args, share, ready, start)) for share in shares]
    for process in consumers + producers:
        process.start()
    time.sleep(0.5)  # every process connected (they wait on `ready`)
    start.value = time.monotonic() + 0.2
    ready.set()
    for process in producers:
        process.join()
    if any(process.exitcode != 0 for process in producers):
        stop.set()
    published_s = time.monotonic() - start.value
    values = []
    for _ in consumers:
        values += latencies.get()
    for process in consumers:
        process.join()
    elapsed = time.monotonic() - start.value
    complete = len(values) == args.messages and all(p.exitcode == 0 for p in producers + consumers)
    result = {
        "messages": args.messages, "size": args.size, "producers": args.producers, "consumers": args.consumers,
        "published": sum(shares) if all(p.exitcode == 0 for p in producers) else None,
        "consumed": len(values), "publish_s": round(published_s, 4), "elapsed_s": round(elapsed, 4),
        "messages_per_s": round(len(values) / elapsed, 2) if elapsed > 0 else None,
        "complete": complete,
    }
    if values:
        result.update({f"latency_p{q}_ms": round(percentile(values, q) * 1000, 3) for q in (50, 95, 99)})
        result["latency_mean_ms"] = round(sum(values) / len(values) * 1000, 3)
    print("amqp_load result " + json.dumps(result, sort_keys=True), flush=True)
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
