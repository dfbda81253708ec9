package io.nexuscore.control;

import io.nexuscore.events.EventHub;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * GET /events: Server-Sent Events from the {@link EventHub}. Each event is {@code id:} (the hub's
 * sequence number), {@code event:} (its type) and one {@code data:} line of JSON. {@code ?types=a,b}
 * filters by type; a {@code Last-Event-ID} header resumes from the hub's history. Gap notices carry
 * no id, so a client's resume point stays on the last real event.
 *
 * <p>Backpressure: events move from the subscription's bounded queue to the socket only while the
 * connection's write queue has room; a reader that stalls leaves events in the bounded queue, where
 * the hub drops the oldest. Memory per subscriber stays bounded whatever the reader does.
 */
final class SseEndpoint {

    private static final Pattern TYPE = Pattern.compile("[a-z][a-z0-9_-]{0,31}");

    private final Vertx vertx;
    private final EventHub hub;
    private final long heartbeatMs;

    SseEndpoint(Vertx vertx, EventHub hub, Duration heartbeat) {
        this.vertx = vertx;
        this.hub = hub;
        this.heartbeatMs = Math.max(1, heartbeat.toMillis());
    }

    void handle(RoutingContext ctx) {
        Set<String> types = parseTypes(ctx.queryParam("types"));
        OptionalLong lastEventId = parseLastEventId(ctx.request().getHeader("Last-Event-ID"));
        new Stream(ctx.response(), vertx.getOrCreateContext()).open(types, lastEventId);
    }

    private final class Stream {
        private final HttpServerResponse response;
        private final Context context;
        private final AtomicBoolean drainScheduled = new AtomicBoolean();
        private EventHub.Subscription subscription;
        private long heartbeatTimer = -1;
        private boolean closed;

        Stream(HttpServerResponse response, Context context) {
            this.response = response;
            this.context = context;
        }

        void open(Set<String> types, OptionalLong lastEventId) {
            // Subscribe before the headers go out: once a client sees them, it sees every later event.
            try {
                subscription = hub.subscribe(types, lastEventId, this::wake);
            } catch (EventHub.Full e) {
                ProblemType.TOO_MANY_SUBSCRIBERS.problem(e.getMessage()).withHeader("Retry-After", "5")
                        .send(response, "/events");
                return;
            }
            response.setChunked(true)
                    .putHeader(HttpHeaders.CONTENT_TYPE, "text/event-stream; charset=utf-8")
                    .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache")
                    .putHeader("X-Accel-Buffering", "no");
            response.closeHandler(v -> close());
            response.exceptionHandler(e -> close());
            response.drainHandler(v -> drain());
            response.write(": connected\n\n");
            heartbeatTimer = vertx.setPeriodic(heartbeatMs, id -> {
                if (!closed && !response.writeQueueFull()) {
                    response.write(": heartbeat\n\n");
                }
            });
            drain();
        }

        /** Called on a publisher's thread: only schedules the drain on this connection's event loop. */
        private void wake() {
            if (drainScheduled.compareAndSet(false, true)) {
                context.runOnContext(v -> {
                    drainScheduled.set(false);
                    drain();
                });
            }
        }

        private void drain() {
            while (!closed && !response.writeQueueFull()) {
                EventHub.Item item = subscription.poll();
                if (item == null) {
                    return;
                }
                response.write(format(item));
            }
        }

        private void close() {
            if (!closed) {
                closed = true;
                vertx.cancelTimer(heartbeatTimer);
                if (subscription != null) {
                    subscription.close();
                }
            }
        }
    }

    static Buffer format(EventHub.Item item) {
        if (item instanceof EventHub.Event e) {
            return Buffer.buffer("id: " + e.id() + "\nevent: " + e.type() + "\ndata: " + e.json() + "\n\n");
        }
        EventHub.Gap gap = (EventHub.Gap) item;
        return Buffer.buffer("event: gap\ndata: " + gap.toJson().encode() + "\n\n");
    }

    static Set<String> parseTypes(List<String> params) {
        Set<String> types = new LinkedHashSet<>();
        for (String param : params) {
            for (String t : param.split(",", -1)) {
                String type = t.strip();
                if (!TYPE.matcher(type).matches()) {
                    throw new ProblemException(ProblemType.INVALID_REQUEST, "event type '" + type
                            + "' is not a type name (lower-case letters, digits, '_' or '-'), e.g. types=request,threshold",
                            "types");
                }
                types.add(type);
            }
        }
        return types;
    }

    static OptionalLong parseLastEventId(String header) {
        if (header == null || header.isBlank()) {
            return OptionalLong.empty();
        }
        try {
            long id = Long.parseLong(header.strip());
            if (id < 0) {
                throw new NumberFormatException();
            }
            return OptionalLong.of(id);
        } catch (NumberFormatException e) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, "Last-Event-ID must be a non-negative integer event id, got '"
                    + header + "'", "Last-Event-ID");
        }
    }
}
