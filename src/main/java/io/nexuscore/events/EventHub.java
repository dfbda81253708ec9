package io.nexuscore.events;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.config.ControlConfig;
import io.vertx.core.json.JsonObject;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The router's event stream: numbers every published event, keeps the last {@code historySize} for
 * Last-Event-ID resume, and fans events out to subscribers (the SSE connections).
 *
 * <p>Publishing never waits for a subscriber: it is called from event loops and worker threads (one
 * event per request), so it only takes a short lock to number the event and append it to bounded
 * queues. A subscriber that does not keep up loses its oldest queued events — it stays current, and
 * learns how many it lost from a {@code gap} notice ({@link Gap}) — and
 * {@code nexus_sse_dropped_total} counts every loss.
 */
public final class EventHub implements EventSink {

    private static final System.Logger LOG = System.getLogger(EventHub.class.getName());

    /**
     * A numbered event. The data is built and encoded on first use, by whichever subscriber reads it
     * first, so publishing costs the publisher no JSON tree and no encoding; every subscriber shares
     * the one encoding.
     */
    public static final class Event implements Item {
        private final long id;
        private final String type;
        private final Supplier<JsonObject> data;
        private volatile String json;

        Event(long id, String type, Supplier<JsonObject> data) {
            this.id = id;
            this.type = type;
            this.data = data;
        }

        public long id() {
            return id;
        }

        public String type() {
            return type;
        }

        /** The data as one line of JSON ({@code "{}"} for data that cannot be encoded). */
        public String json() {
            String encoded = json;
            if (encoded == null) {
                try {
                    encoded = data.get().encode();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "'" + type + "' event " + id + " does not encode as JSON: " + e);
                    encoded = "{}";
                }
                json = encoded;
            }
            return encoded;
        }
    }

    /** Events a subscriber did not get: too old for the history, or dropped from its full buffer. */
    public record Gap(String reason, long missed, long firstMissed, long lastMissed) implements Item {
        public JsonObject toJson() {
            JsonObject json = new JsonObject().put("reason", reason).put("missed", missed);
            if (firstMissed > 0) {
                json.put("first_missed_id", firstMissed).put("last_missed_id", lastMissed);
            }
            return json;
        }
    }

    /** What a subscriber polls: an event or a notice that events were missed. */
    public sealed interface Item permits Event, Gap {
    }

    /** Every subscription slot is taken. */
    public static final class Full extends RuntimeException {
        Full(int maxSubscribers) {
            super(maxSubscribers + " event streams are open, the most this control plane serves "
                    + "(control.maxSubscribers); close one or retry later");
        }
    }

    private final int historySize;
    private final int subscriberBuffer;
    private final int maxSubscribers;
    private final Counter refused;
    private final ArrayDeque<Event> history;
    private final List<Subscription> subscribers = new CopyOnWriteArrayList<>();
    private final Counter dropped;
    private long lastId;

    /**
     * @param historySize      events kept for resume (0: no resume)
     * @param subscriberBuffer events queued per subscriber before its oldest are dropped
     * @param registry         where {@code nexus_sse_subscribers} and {@code nexus_sse_dropped_total} go
     */
    public EventHub(int historySize, int subscriberBuffer, MeterRegistry registry) {
        this(historySize, subscriberBuffer, ControlConfig.DEFAULT_MAX_SUBSCRIBERS, registry);
    }

    /** @param maxSubscribers open subscriptions at most; {@link #subscribe} refuses one more */
    public EventHub(int historySize, int subscriberBuffer, int maxSubscribers, MeterRegistry registry) {
        if (historySize < 0 || subscriberBuffer < 1 || maxSubscribers < 1) {
            throw new IllegalArgumentException("historySize must be >= 0, subscriberBuffer and maxSubscribers >= 1");
        }
        this.historySize = historySize;
        this.subscriberBuffer = subscriberBuffer;
        this.maxSubscribers = maxSubscribers;
        this.refused = Counter.builder("nexus.sse.refused")
                .description("GET /events streams refused because control.maxSubscribers were open")
                .register(registry);
        this.history = new ArrayDeque<>(Math.min(historySize, 4096));
        this.dropped = Counter.builder("nexus.sse.dropped")
                .description("Events dropped because an SSE subscriber's buffer was full")
                .register(registry);
        Gauge.builder("nexus.sse.subscribers", subscribers, List::size)
                .description("Open SSE subscriptions on GET /events")
                .register(registry);
        Gauge.builder("nexus.sse.queue.max", this, EventHub::maxQueued)
                .description("Events queued for the slowest SSE subscriber")
                .register(registry);
    }

    public static EventHub from(ControlConfig config, MeterRegistry registry) {
        return new EventHub(config.eventHistory(), config.subscriberBuffer(), config.maxSubscribers(), registry);
    }

    /**
     * Numbers and queues the event. The hub keeps {@code data} (it is encoded later, off the caller's
     * thread): callers hand over a fresh object and do not change it afterwards.
     */
    @Override
    public void publish(String type, JsonObject data) {
        publishLazily(type, data == null ? null : () -> data);
    }

    /** As {@link #publish}, with the data built on first read (by a subscriber or a resume), if ever. */
    @Override
    public void publishLazily(String type, Supplier<JsonObject> data) {
        if (type == null || data == null) {
            LOG.log(Level.WARNING, "ignoring an event with no type or no data");
            return;
        }
        synchronized (this) {
            Event event = new Event(++lastId, type, data);
            if (historySize > 0) {
                if (history.size() == historySize) {
                    history.removeFirst();
                }
                history.addLast(event);
            }
            for (Subscription s : subscribers) {
                s.offer(event);
            }
        }
    }

    /** The id of the newest event, 0 before the first. */
    public synchronized long lastId() {
        return lastId;
    }

    /** The longest subscriber queue: how far the slowest reader lags (bounded by the subscriber buffer). */
    public int maxQueued() {
        int max = 0;
        for (Subscription s : subscribers) {
            max = Math.max(max, s.queued());
        }
        return max;
    }

    public int subscriberCount() {
        return subscribers.size();
    }

    public double droppedTotal() {
        return dropped.count();
    }

    /**
     * Subscribes to events of the given types (empty: all), first replaying what the history holds
     * after {@code lastEventId} when one is given.
     *
     * @param wake called, on the publisher's thread, when the subscription's queue turns non-empty;
     *             it must only schedule the drain (e.g. {@code context.runOnContext}), never block
     * @throws Full when {@code maxSubscribers} subscriptions are open
     */
    public Subscription subscribe(Set<String> types, OptionalLong lastEventId, Runnable wake) {
        Subscription s = new Subscription(Set.copyOf(types), wake);
        synchronized (this) {
            if (subscribers.size() >= maxSubscribers) {
                refused.increment();
                throw new Full(maxSubscribers);
            }
            if (lastEventId.isPresent()) {
                s.replay(replayAfter(lastEventId.getAsLong(), s));
            }
            subscribers.add(s);
        }
        return s;
    }

    /** Under the hub's lock: the gap notice (if any) and the history events after {@code after}. */
    private List<Item> replayAfter(long after, Subscription s) {
        List<Item> items = new ArrayList<>();
        long oldest = history.isEmpty() ? lastId + 1 : history.peekFirst().id();
        if (after > lastId) {
            // An id this hub never issued: most likely from before a restart. Send what we have.
            items.add(new Gap("unknown last event id " + after + " (the router restarted?)", 0, 0, 0));
            after = 0;
        } else if (after < oldest - 1) {
            items.add(new Gap("history exhausted", oldest - 1 - after, after + 1, oldest - 1));
        }
        for (Event e : history) {
            if (e.id() > after && s.accepts(e.type())) {
                items.add(e);
            }
        }
        return items;
    }

    /** One subscriber's queue. Polled by its consumer; closed when the consumer goes away. */
    public final class Subscription implements AutoCloseable {
        private final Set<String> types;
        private final Runnable wake;
        private final ArrayDeque<Item> replay = new ArrayDeque<>();
        private final ArrayDeque<Event> live = new ArrayDeque<>();
        private long droppedSincePoll;

        private Subscription(Set<String> types, Runnable wake) {
            this.types = types;
            this.wake = wake;
        }

        boolean accepts(String type) {
            return types.isEmpty() || types.contains(type);
        }

        private synchronized void replay(List<Item> items) {
            replay.addAll(items);
        }

        private void offer(Event event) {
            if (!accepts(event.type())) {
                return;
            }
            boolean wasEmpty;
            synchronized (this) {
                wasEmpty = isEmpty();
                if (live.size() == subscriberBuffer) {
                    live.removeFirst();
                    droppedSincePoll++;
                    dropped.increment();
                }
                live.addLast(event);
            }
            if (wasEmpty) {
                try {
                    wake.run();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "SSE subscriber wake-up failed: " + e);
                }
            }
        }

        private boolean isEmpty() {
            return replay.isEmpty() && live.isEmpty() && droppedSincePoll == 0;
        }

        /** The next item, or null when there is none: replayed history, then a drop notice, then live events. */
        public synchronized Item poll() {
            if (!replay.isEmpty()) {
                return replay.removeFirst();
            }
            if (droppedSincePoll > 0) {
                long n = droppedSincePoll;
                droppedSincePoll = 0;
                return new Gap("subscriber buffer overflow", n, 0, 0);
            }
            return live.pollFirst();
        }

        /** Events queued and not yet polled (bounded by the subscriber buffer plus the replay). */
        public synchronized int queued() {
            return replay.size() + live.size();
        }

        @Override
        public void close() {
            subscribers.remove(this);
        }
    }
}
