package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What a router makes of the document another cluster member (or anything on the cluster's port) wrote. */
class SharedMapPolicyTest {

    private static String valid() {
        return new PolicyDoc(7, "n1", PolicyDoc.CAUSE_API, 1_700_000_000_000L, 0,
                PolicyContent.of(new Thresholds(40, 120), Map.of(), Map.of(), Optional.empty())).encode();
    }

    @Test
    void aValidDocumentDecodes() {
        assertEquals(new Thresholds(40, 120), SharedMapPolicy.decoded(valid()).content().thresholds());
    }

    /** Garbage, a missing section, thresholds out of range or in the wrong order: the fleet counts as unreachable. */
    @ParameterizedTest
    @ValueSource(strings = {"not json", "[]", "{}", "thresholds", "nano_max=300", "nano_max=130,small_max=60"})
    void anUnreadableDocumentIsAnUnreachableFleetNotAFailedRouter(String variant) {
        String text = switch (variant) {
            case "thresholds" -> new JsonObject(valid()).put("thresholds", (Object) null).encode();
            case "nano_max=300" -> edited(300, 320);
            case "nano_max=130,small_max=60" -> edited(130, 60);
            default -> variant;
        };
        SharedPolicy.Unreachable e = assertThrows(SharedPolicy.Unreachable.class, () -> SharedMapPolicy.decoded(text));
        assertTrue(e.getMessage().contains("unreadable") && e.getMessage().contains(SharedMapPolicy.MAP), e.getMessage());
    }

    private static final String HASH = "sha256:" + "ab".repeat(32);

    /**
     * Documents that decode as JSON but that a router's stores would refuse part-way through applying
     * them, or that would freeze the fleet: refused whole at the read, named, before anything is applied.
     */
    @ParameterizedTest
    @ValueSource(strings = {"no origin", "version past the cap", "version 0", "negative step stamp",
            "bad tenant id", "bad key hash", "two tenants on one prefix", "one hash for two tenants", "keys of a bad id"})
    void aDocumentTheStoresWouldRefuseIsRefusedWhole(String variant) {
        JsonObject doc = new JsonObject(valid());
        JsonObject tenants = new JsonObject();
        JsonObject keys = new JsonObject();
        switch (variant) {
            case "no origin" -> doc.remove("origin");
            case "version past the cap" -> doc.put("version", Long.MAX_VALUE);
            case "version 0" -> doc.put("version", 0);
            case "negative step stamp" -> doc.put("adaptive_step_at_ms", -1);
            case "bad tenant id" -> tenants.put("../etc", tenant("10.1.0.0/16"));
            case "bad key hash" -> keys.put("acme", new JsonArray().add("x"));
            case "two tenants on one prefix" -> tenants.put("acme", tenant("10.1.0.0/16")).put("zeta", tenant("10.1.0.0/16"));
            case "one hash for two tenants" -> keys.put("acme", new JsonArray().add(HASH)).put("zeta", new JsonArray().add(HASH));
            case "keys of a bad id" -> keys.put("-x", new JsonArray().add(HASH));
            default -> throw new IllegalArgumentException(variant);
        }
        if (!tenants.isEmpty()) {
            doc.put("tenants", tenants);
        }
        if (!keys.isEmpty()) {
            doc.put("keys", keys);
        }
        String text = doc.encode();
        SharedPolicy.Unreachable e = assertThrows(SharedPolicy.Unreachable.class, () -> SharedMapPolicy.decoded(text));
        assertTrue(e.getMessage().contains("unreadable"), e.getMessage());
    }

    @Test
    void theSameDocumentWithValidTenantsAndKeysDecodes() {
        JsonObject doc = new JsonObject(valid())
                .put("tenants", new JsonObject().put("acme", tenant("10.1.0.0/16")).put("zeta", tenant("10.2.0.0/16")))
                .put("keys", new JsonObject().put("acme", new JsonArray().add(HASH)));
        PolicyDoc decoded = SharedMapPolicy.decoded(doc.encode());
        assertEquals(2, decoded.content().tenants().size());
        assertEquals(Map.of("acme", java.util.List.of(HASH)), decoded.content().keys());
    }

    @Test
    void theNextVersionNeverWraps() {
        PolicyDoc last = new PolicyDoc(Long.MAX_VALUE, "n1", PolicyDoc.CAUSE_API, 1, 0,
                PolicyContent.of(Thresholds.DEFAULT, Map.of(), Map.of(), Optional.empty()));
        assertThrows(ArithmeticException.class, () -> last.next("n2", PolicyDoc.CAUSE_API, 2, last.content()));
    }

    private static JsonObject tenant(String prefix) {
        return new JsonObject().put("prefix", prefix).put("floor", "small");
    }

    private static String edited(int nanoMax, int smallMax) {
        JsonObject doc = new JsonObject(valid());
        doc.getJsonObject("thresholds").put("nano_max", nanoMax).put("small_max", smallMax);
        return doc.encode();
    }
}
