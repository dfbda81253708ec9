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
    public Future<Event> awaitEvent(Vertx vertx, Predicate<Event> filter) {
        Promise<Event> found = Promise.promise();
        long deadline = System.nanoTime() + 5_000_000_000L;
        vertx.setPeriodic(0, 10, id -> {
            events.stream().filter(filter).findFirst().ifPresentOrElse(event -> {
                vertx.cancelTimer(id);
                found.tryComplete(event);
            }, () -> {
                if (System.nanoTime() > deadline) {
                    vertx.cancelTimer(id);
                    found.tryFail(new AssertionError("no matching event within 5 s; got " + events));
                }
            });
        });
        return found.future();
    }

    public void clear() {
        events.clear();
    }
}
