package io.nexuscore.bench;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.events.EventHub;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * What publishing an event costs the data plane (one per request): ns per publish with 0, 1 and 8
 * subscribers, each drained by its own thread as the SSE connections' event loops would, and with
 * 2 publishing threads. Prints figures; asserts nothing. Not a test: run it by hand (see the report
 * or README) on a quiet machine.
 */
public final class EventHubBench {

    private EventHubBench() {
    }

    public static void main(String[] args) throws Exception {
        int events = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        JsonObject request = new JsonObject().put("timestamp_ns", 1L).put("tenant", "acme").put("endpoint", "summarize")
                .put("assigned_tier", "nano").put("observed_tier", "nano").put("score", 42)
                .put("route_source", "kernel").put("status", 200).put("latency_us", 830);
        System.out.printf("%-12s %-10s %12s %14s%n", "subscribers", "threads", "ns/publish", "dropped");
        System.out.println("(" + events + " events per row; each subscriber buffers 256, drained by a thread woken by the hub, as an event loop is)");
        for (int subscribers : new int[] {0, 1, 8}) {
            for (int threads : new int[] {1, 2}) {
                run(events, subscribers, threads, request); // warm-up
                Result r = run(events, subscribers, threads, request);
                System.out.printf("%-12d %-10d %12.0f %14.0f%n", subscribers, threads, r.nsPerPublish(), r.dropped());
            }
        }
    }

    private record Result(double nsPerPublish, double dropped) {
    }

    private static Result run(int events, int subscribers, int threads, JsonObject request) throws Exception {
        EventHub hub = new EventHub(1024, 256, new SimpleMeterRegistry());
        AtomicBoolean done = new AtomicBoolean();
        List<Thread> drainers = new ArrayList<>();
        for (int i = 0; i < subscribers; i++) {
            // Like an SSE connection: the wake-up unparks a drainer (the event loop), which then
            // empties the queue and encodes each event, as the socket write would.
            Thread[] drainer = new Thread[1];
            EventHub.Subscription s = hub.subscribe(Set.of(), OptionalLong.empty(), () -> LockSupport.unpark(drainer[0]));
            drainer[0] = new Thread(() -> {
                while (!done.get()) {
                    EventHub.Item item;
                    while ((item = s.poll()) != null) {
                        if (item instanceof EventHub.Event e) {
                            e.json();
                        }
                    }
                    LockSupport.parkNanos(1_000_000);
                }
            });
            drainer[0].setDaemon(true);
            drainer[0].start();
            drainers.add(drainer[0]);
        }
        List<Thread> publishers = new ArrayList<>();
        long start = System.nanoTime();
        for (int p = 0; p < threads; p++) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < events / threads; i++) {
                    hub.publish("request", request);
                }
            });
            t.start();
            publishers.add(t);
        }
        for (Thread t : publishers) {
            t.join();
        }
        long elapsed = System.nanoTime() - start;
        done.set(true);
        for (Thread t : drainers) {
            t.join();
        }
        // Wall time per event across all publishers: what the hub adds to the request path.
        return new Result((double) elapsed / events, hub.droppedTotal());
    }
}
