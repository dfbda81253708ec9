package io.nexuscore.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The hub's queueing rules, without sockets: drop-oldest, gap notices, replay, filters, wake-ups. */
class EventHubTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private static List<EventHub.Item> drain(EventHub.Subscription s) {
        List<EventHub.Item> items = new ArrayList<>();
        for (EventHub.Item i; (i = s.poll()) != null; ) {
            items.add(i);
        }
        return items;
    }

    @Test
    void aFullSubscriberLosesItsOldestEventsAndIsToldHowMany() {
        EventHub hub = new EventHub(100, 4, registry);
        EventHub.Subscription s = hub.subscribe(Set.of(), OptionalLong.empty(), () -> { });
        for (int i = 1; i <= 10; i++) {
            hub.publish("request", new JsonObject().put("n", i));
        }
        List<EventHub.Item> items = drain(s);
        EventHub.Gap gap = assertInstanceOf(EventHub.Gap.class, items.get(0));
        assertEquals(6, gap.missed());
        assertEquals(List.of(7L, 8L, 9L, 10L), items.subList(1, 5).stream().map(i -> ((EventHub.Event) i).id()).toList());
        assertEquals(6.0, registry.get("nexus.sse.dropped").counter().count());
        assertEquals(6.0, hub.droppedTotal());
    }

    @Test
    void lazyDataIsBuiltOnlyWhenReadAndThenOnceForEveryReader() {
        EventHub hub = new EventHub(100, 4, registry);
        AtomicInteger built = new AtomicInteger();
        hub.publishLazily("request", () -> new JsonObject().put("n", built.incrementAndGet()));
        assertEquals(0, built.get(), "nobody read the event yet");

        EventHub.Subscription first = hub.subscribe(Set.of(), OptionalLong.of(0), () -> { });
        EventHub.Subscription second = hub.subscribe(Set.of(), OptionalLong.of(0), () -> { });
        assertEquals(0, built.get(), "a subscription alone builds nothing");
        EventHub.Event a = assertInstanceOf(EventHub.Event.class, drain(first).get(0));
        EventHub.Event b = assertInstanceOf(EventHub.Event.class, drain(second).get(0));
        assertEquals("{\"n\":1}", a.json());
        assertEquals("{\"n\":1}", b.json(), "the second reader shares the first one's encoding");
        assertEquals(1, built.get());
    }

    @Test
    void lazyDataThatFailsToBuildIsAnEmptyObjectNotAnError() {
        EventHub hub = new EventHub(100, 4, registry);
        EventHub.Subscription s = hub.subscribe(Set.of(), OptionalLong.empty(), () -> { });
        hub.publishLazily("request", () -> {
            throw new IllegalStateException("broken event");
        });
        hub.publish("request", new JsonObject().put("after", true));
        List<EventHub.Item> items = drain(s);
        assertEquals("{}", ((EventHub.Event) items.get(0)).json());
        assertEquals("{\"after\":true}", ((EventHub.Event) items.get(1)).json(), "the stream goes on");
    }

    @Test
    void wakeRunsOnlyWhenTheQueueTurnsNonEmpty() {
        EventHub hub = new EventHub(0, 8, registry);
        AtomicInteger wakes = new AtomicInteger();
        EventHub.Subscription s = hub.subscribe(Set.of(), OptionalLong.empty(), wakes::incrementAndGet);
        hub.publish("request", new JsonObject());
        hub.publish("request", new JsonObject());
        assertEquals(1, wakes.get());
        drain(s);
        hub.publish("request", new JsonObject());
        assertEquals(2, wakes.get());
    }

    @Test
    void resumeReplaysTheFilteredHistoryAfterTheGivenId() {
        EventHub hub = new EventHub(100, 4, registry);
        for (int i = 1; i <= 6; i++) {
            hub.publish(i % 2 == 0 ? "threshold" : "request", new JsonObject().put("n", i));
        }
        // Replay is not limited by the subscriber buffer (4): it is bounded by the history instead.
        EventHub.Subscription s = hub.subscribe(Set.of("threshold"), OptionalLong.of(1), () -> { });
        hub.publish("threshold", new JsonObject().put("n", 7));
        hub.publish("request", new JsonObject().put("n", 8));
        assertEquals(List.of(2L, 4L, 6L, 7L), drain(s).stream().map(i -> ((EventHub.Event) i).id()).toList());
    }

    @Test
    void closedSubscriptionsReceiveNothingAndStopCounting() {
        EventHub hub = new EventHub(10, 4, registry);
        EventHub.Subscription s = hub.subscribe(Set.of(), OptionalLong.empty(), () -> { });
        assertEquals(1.0, registry.get("nexus.sse.subscribers").gauge().value());
        s.close();
        hub.publish("request", new JsonObject());
        assertNull(s.poll());
        assertEquals(0.0, registry.get("nexus.sse.subscribers").gauge().value());
    }

    @Test
    void anUnencodableEventNeverThrowsAtThePublisherOrTheReader() {
        EventHub hub = new EventHub(10, 4, registry);
        EventHub.Subscription s = hub.subscribe(Set.of(), OptionalLong.empty(), () -> { });
        hub.publish("request", new JsonObject().put("bad", new Object()));
        hub.publish(null, new JsonObject());
        assertEquals("{}", ((EventHub.Event) s.poll()).json());
        assertNull(s.poll());
    }
}
