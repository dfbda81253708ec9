#!/usr/bin/env python3
"""Per-request latency over one keep-alive connection, one request at a time, without correction.

wrk corrects its latency figures for coordinated omission (its stats_correct: every response slower
than the run's mean interval per connection adds synthetic samples for the requests an open-loop
client would have sent meanwhile). At c=1 on this VM one 2 ms stall (a GC pause, a vCPU preempted)
then weighs as ~40 requests, and wrk's P99 becomes the stalls' figure. This client times each
request as it happened (monotonic clock), so the two views can be read side by side.

Usage: bench/seq-latency.py PORT [REQUESTS] [PATH]    (loopback only; default 30000 requests,
/v1/chat/completions, the short chat body the data-plane bench posts)

Prints the wall time, the mean, the percentiles, and how many requests took over 500 µs. The
client's own cost (Python, ~10-15 µs a request here) is in every figure: compare servers with each
other in one run, not with wrk's numbers.
"""
import socket
import sys
import time

BODY = b'{"model":"bench","messages":[{"role":"user","content":"Say hello in five words."}]}'


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    port = int(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
    path = sys.argv[3] if len(sys.argv) > 3 else "/v1/chat/completions"
    request = (b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % (path.encode(), len(BODY))) + BODY
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending = b""
    latencies = []
    started = time.perf_counter()
    for _ in range(count):
        t0 = time.perf_counter_ns()
        sock.sendall(request)
        while True:
            head_end = pending.find(b"\r\n\r\n")
            if head_end >= 0:
                length = content_length(pending[:head_end])
                if len(pending) >= head_end + 4 + length:
                    status = pending[9:12]
                    if status != b"200":
                        sys.exit("seq-latency: answer " + status.decode() + ": " + pending[:200].decode(errors="replace"))
                    pending = pending[head_end + 4 + length:]
                    break
            chunk = sock.recv(65536)
            if not chunk:
                sys.exit("seq-latency: the server closed the connection")
            pending += chunk
        latencies.append((time.perf_counter_ns() - t0) / 1000)
    wall = time.perf_counter() - started
    ordered = sorted(latencies)

    def pct(p):
        return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]

    print(f"requests={count} wall_s={wall:.2f} rps={count / wall:.0f} mean_us={sum(latencies) / count:.1f} "
          + " ".join(f"p{p}_us={pct(p):.0f}" for p in (50, 90, 99, 99.9))
          + f" over_500us={sum(1 for x in latencies if x > 500)}")


def content_length(head):
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    sys.exit("seq-latency: an answer without Content-Length: " + head[:200].decode(errors="replace"))


if __name__ == "__main__":
    main()
