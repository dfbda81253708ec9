package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.fleet.FleetKeys.Reason;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The policy map as a stranger on the cluster port leaves it: a document without the fleet's secret
 * is never returned (so never applied), is counted once however often it is read, and the next write
 * from "no document" puts the fleet's signed one back over it. A real Vert.x async map, no cluster.
 */
class SignedSharedPolicyTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final FleetKeys KEYS = FleetKeys.of(List.of("fleet-secret-for-this-test-0123456789"));
    private static final String HASH = "sha256:" + "cd".repeat(32);

    private Vertx vertx;
    private AsyncMap<String, Object> map;
    private SimpleMeterRegistry registry;
    private FleetRejections rejections;
    private SharedMapPolicy policy;

    @BeforeEach
    void open() throws Exception {
        vertx = Vertx.vertx();
        map = vertx.sharedData().<String, Object>getAsyncMap(SharedMapPolicy.MAP).await();
        registry = new SimpleMeterRegistry();
        rejections = new FleetRejections(registry);
        policy = new SharedMapPolicy(map, TIMEOUT, KEYS, rejections);
    }

    @AfterEach
    void close() {
        vertx.close().await();
    }

    private static PolicyDoc doc(long version, int nanoMax, Map<String, List<String>> keys) {
        return new PolicyDoc(version, "n1", PolicyDoc.CAUSE_API, 1_700_000_000_000L + version, 0,
                PolicyContent.of(new Thresholds(nanoMax, 130), Map.of(), keys, Optional.empty()));
    }

    private double rejected(Reason reason) {
        return registry.get("nexus.fleet.rejected").tag("reason", reason.label()).counter().count();
    }

    @Test
    void aDocumentWrittenWithTheSecretIsReadBack() {
        PolicyDoc ours = doc(3, 60, Map.of());
        assertTrue(policy.compareAndSet(Optional.empty(), ours));
        assertEquals(Optional.of(ours), new SharedMapPolicy(map, TIMEOUT, KEYS, rejections).read());
        assertEquals(0, registry.get("nexus.fleet.rejected").counters().stream().mapToDouble(c -> c.count()).sum());
    }

    @Test
    void aForgedDocumentIsNeverReturnedCountedOnceAndHealedByTheNextWrite() {
        PolicyDoc ours = doc(3, 60, Map.of("acme", List.of()));
        assertTrue(policy.compareAndSet(Optional.empty(), ours));
        // The attack of issue 46: a newer version with other thresholds and the attacker's key for acme.
        String forged = doc(4, 7, Map.of("acme", List.of(HASH))).encode();
        map.put(SharedMapPolicy.KEY, forged).await();
        for (int sync = 0; sync < 3; sync++) {
            assertEquals(Optional.empty(), policy.read(), "a forged document reads as none");
        }
        assertEquals(1, rejected(Reason.UNSIGNED), "counted once, not once per read");

        assertTrue(policy.compareAndSet(Optional.empty(), ours), "the fleet's document goes back over the forged one");
        assertEquals(Optional.of(ours), policy.read());
        assertTrue(((String) map.get(SharedMapPolicy.KEY).await()).contains("\"mac\""));
    }

    @Test
    void aDocumentSignedWithAnotherSecretIsAnUnknownKey() {
        String foreign = FleetKeys.of(List.of("another-fleet-secret-0123456789abcdef"))
                .seal(SharedMapPolicy.MAP, SharedMapPolicy.KEY, doc(9, 7, Map.of()).encode());
        map.put(SharedMapPolicy.KEY, foreign).await();
        assertEquals(Optional.empty(), policy.read());
        assertEquals(1, rejected(Reason.UNKNOWN_KEY));
    }

    @Test
    void anEnvelopeWithAForgedMacIsRefused() {
        JsonObject envelope = new JsonObject(KEYS.seal(SharedMapPolicy.MAP, SharedMapPolicy.KEY, doc(4, 60, Map.of()).encode()));
        envelope.put("body", doc(5, 7, Map.of()).encode());
        map.put(SharedMapPolicy.KEY, envelope.encode()).await();
        assertEquals(Optional.empty(), policy.read());
        assertEquals(1, rejected(Reason.BAD_MAC));
    }

    @Test
    void aValueThatIsNotTextIsRefusedAndReplaced() {
        map.put(SharedMapPolicy.KEY, 42).await();
        assertEquals(Optional.empty(), policy.read());
        assertEquals(1, rejected(Reason.NOT_TEXT));
        PolicyDoc ours = doc(3, 60, Map.of());
        assertTrue(policy.compareAndSet(Optional.empty(), ours));
        assertEquals(Optional.of(ours), policy.read());
    }

    @Test
    void theCompareAndSetExpectsTheTextReadNotARecomputedOne() {
        // Written by a router still signing with the previous secret of a rotation.
        FleetKeys previous = FleetKeys.of(List.of("previous-fleet-secret-0123456789abcdef"));
        FleetKeys rotating = FleetKeys.of(List.of("fleet-secret-for-this-test-0123456789",
                "previous-fleet-secret-0123456789abcdef"));
        PolicyDoc v3 = doc(3, 60, Map.of());
        map.put(SharedMapPolicy.KEY, previous.seal(SharedMapPolicy.MAP, SharedMapPolicy.KEY, v3.encode())).await();
        SharedMapPolicy here = new SharedMapPolicy(map, TIMEOUT, rotating, rejections);
        assertEquals(Optional.of(v3), here.read());
        assertTrue(here.compareAndSet(Optional.of(v3), doc(4, 61, Map.of())));
        assertEquals(61, here.read().orElseThrow().content().thresholds().nanoMax());
    }
}
