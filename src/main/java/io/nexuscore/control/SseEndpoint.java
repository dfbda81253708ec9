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
import io.nexuscore.config.ControlConfig;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
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
 *
 * <p>Streams are bounded per client address ({@code control.maxSubscribersPerClient}) and in all
 * ({@code control.maxSubscribers}). A request that presented the control token is never locked out:
 * at either bound it closes the oldest stream (that client's, else anyone's) and takes its place.
 * Without a token (only possible with {@code control.auth: none}) the bound answers 503.
 */
final class SseEndpoint {

    private static final Pattern TYPE = Pattern.compile("[a-z][a-z0-9_-]{0,31}");

    private final Vertx vertx;
    private final EventHub hub;
    private final long heartbeatMs;
    private final int maxPerClient;
    /** Open streams, oldest first; and by client address. Guarded by {@code this}. */
    private final LinkedHashSet<Stream> open = new LinkedHashSet<>();
    private final Map<String, LinkedHashSet<Stream>> byClient = new HashMap<>();

    SseEndpoint(Vertx vertx, EventHub hub, Duration heartbeat) {
        this(vertx, hub, heartbeat, ControlConfig.DEFAULT_MAX_SUBSCRIBERS_PER_CLIENT);
    }

    SseEndpoint(Vertx vertx, EventHub hub, Duration heartbeat, int maxPerClient) {
        this.vertx = vertx;
        this.hub = hub;
        this.heartbeatMs = Math.max(1, heartbeat.toMillis());
        this.maxPerClient = maxPerClient;
    }

    void handle(RoutingContext ctx) {
        Set<String> types = parseTypes(ctx.queryParam("types"));
        OptionalLong lastEventId = parseLastEventId(ctx.request().getHeader("Last-Event-ID"));
        String client = ctx.request().remoteAddress() == null ? "?" : ctx.request().remoteAddress().hostAddress();
        boolean tokenHolder = Boolean.TRUE.equals(ctx.get(ControlAuth.AUTHENTICATED));
        Stream stream = new Stream(ctx.response(), vertx.getOrCreateContext(), client);
        synchronized (this) {
            LinkedHashSet<Stream> mine = byClient.getOrDefault(client, new LinkedHashSet<>());
            if (mine.size() >= maxPerClient) {
                if (!tokenHolder) {
                    ProblemType.TOO_MANY_SUBSCRIBERS.problem(mine.size() + " event streams from " + client
                            + " are open, the most one client may hold (control.maxSubscribersPerClient); close one")
                            .withHeader("Retry-After", "5").send(ctx.response(), "/events");
                    return;
                }
                mine.iterator().next().evict();
            }
        }
        stream.open(types, lastEventId, tokenHolder);
    }

    /** The oldest open stream, to make room for a token holder's; null when none is open. */
    private synchronized Stream oldest() {
        return open.isEmpty() ? null : open.iterator().next();
    }

    private synchronized void opened(Stream stream) {
        open.add(stream);
        byClient.computeIfAbsent(stream.client, c -> new LinkedHashSet<>()).add(stream);
    }

    private synchronized void forget(Stream stream) {
        open.remove(stream);
        LinkedHashSet<Stream> mine = byClient.get(stream.client);
        if (mine != null && mine.remove(stream) && mine.isEmpty()) {
            byClient.remove(stream.client);
        }
    }

    private final class Stream {
        private final HttpServerResponse response;
        private final Context context;
        private final String client;
        private final AtomicBoolean drainScheduled = new AtomicBoolean();
        private EventHub.Subscription subscription;
        private long heartbeatTimer = -1;
        private volatile boolean closed;

        Stream(HttpServerResponse response, Context context, String client) {
            this.response = response;
            this.context = context;
            this.client = client;
        }

        void open(Set<String> types, OptionalLong lastEventId, boolean tokenHolder) {
            // Subscribe before the headers go out: once a client sees them, it sees every later event.
            try {
                subscription = subscribe(types, lastEventId, tokenHolder);
            } catch (EventHub.Full e) {
                ProblemType.TOO_MANY_SUBSCRIBERS.problem(e.getMessage()).withHeader("Retry-After", "5")
                        .send(response, "/events");
                return;
            }
            opened(this);
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

        /** At the cap a token holder's subscription takes the oldest stream's place (each eviction frees one slot). */
        private EventHub.Subscription subscribe(Set<String> types, OptionalLong lastEventId, boolean tokenHolder) {
            while (true) {
                try {
                    return hub.subscribe(types, lastEventId, this::wake);
                } catch (EventHub.Full e) {
                    Stream oldest = tokenHolder ? oldest() : null;
                    if (oldest == null) {
                        throw e;
                    }
                    oldest.evict();
                }
            }
        }

        /** Frees the slot now (the hub's subscription) and ends the response on its own event loop. */
        void evict() {
            close();
            context.runOnContext(v -> {
                if (!response.ended() && !response.closed()) {
                    response.end(": closed to make room for a newer stream\n\n");
                }
            });
        }

        private void close() {
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
            }
            vertx.cancelTimer(heartbeatTimer);
            if (subscription != null) {
                subscription.close();
            }
            forget(this);
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
