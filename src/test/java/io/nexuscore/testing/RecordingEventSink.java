package io.nexuscore.testing;

import io.nexuscore.events.EventSink;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/** Keeps every published event, for assertions. */
public final class RecordingEventSink implements EventSink {

    public record Event(String type, JsonObject data) {
    }

    private final List<Event> events = new CopyOnWriteArrayList<>();

    @Override
    public void publish(String type, JsonObject data) {
        events.add(new Event(type, data));
    }

    public List<Event> events() {
        return List.copyOf(events);
    }

    /** The first event matching {@code filter}, waiting up to 5 s for it to be published. */
    /**
     * The first recorded event that matches, polled every 10 ms for at most 5 s on a thread of its own
     * (not a Vert.x timer: a test's Vert.x instance may be busy or closing; a timer that never fires
     * would hang the test instead of failing it).
     */
    public Future<Event> awaitEvent(Vertx vertx, Predicate<Event> filter) {
        Promise<Event> found = Promise.promise();
        Thread poller = new Thread(() -> {
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (true) {
                java.util.Optional<Event> event = events.stream().filter(filter).findFirst();
                if (event.isPresent()) {
                    found.tryComplete(event.get());
                    return;
                }
                if (System.nanoTime() > deadline) {
                    found.tryFail(new AssertionError("no matching event within 5 s; got " + events));
                    return;
                }
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    found.tryFail(e);
                    return;
                }
            }
        }, "await-event");
        poller.setDaemon(true);
        poller.start();
        return found.future();
    }

    public void clear() {
        events.clear();
    }
}
