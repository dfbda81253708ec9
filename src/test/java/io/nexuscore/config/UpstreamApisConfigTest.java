package io.nexuscore.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Tier;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** upstream.apis: which client APIs a tier's servers speak themselves; chat only by default; anything else named. */
class UpstreamApisConfigTest {

    private static RouterConfig withApis(JsonArray apis) {
        JsonObject upstream = new JsonObject().put("baseUrl", "http://127.0.0.1:9/v1");
        if (apis != null) {
            upstream.put("apis", apis);
        }
        return RouterConfig.fromJson(new JsonObject().put("tiers", new JsonObject().put("large",
                new JsonObject().put("upstream", upstream))));
    }

    @Test
    void chatOnlyUnlessTheApisAreNamed() {
        assertEquals(Set.of(), withApis(null).tier(Tier.LARGE).upstream().orElseThrow().nativeApis());
        assertEquals(Set.of("responses", "messages"), withApis(new JsonArray().add("responses").add("messages"))
                .tier(Tier.LARGE).upstream().orElseThrow().nativeApis());
    }

    @Test
    void anUnknownApiIsNamedWithItsField() {
        ConfigException e = assertThrows(ConfigException.class, () -> withApis(new JsonArray().add("completions")));
        assertTrue(e.getMessage().contains("tiers.large.upstream.apis") && e.getMessage().contains("completions"),
                e.getMessage());
    }
}
