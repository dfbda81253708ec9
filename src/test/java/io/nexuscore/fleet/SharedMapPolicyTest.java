package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
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

    private static String edited(int nanoMax, int smallMax) {
        JsonObject doc = new JsonObject(valid());
        doc.getJsonObject("thresholds").put("nano_max", nanoMax).put("small_max", smallMax);
        return doc.encode();
    }
}
