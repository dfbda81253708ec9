package io.nexuscore.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The embeddings section: absent by default, a tier upstream's shape when present, bad values named. */
class EmbeddingsConfigTest {

    private static RouterConfig with(JsonObject embeddings) {
        return RouterConfig.fromJson(new JsonObject().put("embeddings", embeddings));
    }

    @Test
    void noTargetByDefault() {
        EmbeddingsConfig none = RouterConfig.load(Optional.empty()).embeddings();
        assertTrue(none.upstream().isEmpty());
        assertEquals(Optional.empty(), none.listedModel());
    }

    @Test
    void theTargetIsAnUpstreamAndItsModelIsListedUnlessNamed() {
        EmbeddingsConfig config = with(new JsonObject().put("upstream", new JsonObject()
                .put("baseUrls", List.of("http://10.0.0.1:9000/v1", "http://10.0.0.2:9000/v1")).put("model", "bge")
                .put("maxRetries", 2))).embeddings();
        assertEquals(List.of(URI.create("http://10.0.0.1:9000/v1"), URI.create("http://10.0.0.2:9000/v1")),
                config.upstream().orElseThrow().baseUrls());
        assertEquals(2, config.upstream().orElseThrow().maxRetries());
        assertEquals(Optional.of("bge"), config.listedModel());
        assertEquals(16, config.maxConnections());
        assertEquals(Optional.of("text-embedding-3-small"), with(new JsonObject().put("model", "text-embedding-3-small")
                .put("upstream", new JsonObject().put("baseUrl", "http://h:1/v1"))).embeddings().listedModel());
    }

    @Test
    void badValuesAreNamed() {
        assertTrue(assertThrows(ConfigException.class, () -> with(new JsonObject().put("model", "m")))
                .getMessage().contains("embeddings.upstream"));
        assertTrue(assertThrows(ConfigException.class, () -> with(new JsonObject().put("upstrem", new JsonObject())))
                .getMessage().contains("upstrem"));
        assertTrue(assertThrows(ConfigException.class, () -> with(new JsonObject().put("upstream",
                new JsonObject().put("baseUrl", "ftp://h/v1")))).getMessage().contains("embeddings.upstream.baseUrl"));
        assertTrue(assertThrows(ConfigException.class, () -> with(new JsonObject().put("maxConnections", 0)
                .put("upstream", new JsonObject().put("baseUrl", "http://h:1/v1")))).getMessage()
                .contains("embeddings.maxConnections"));
    }
}
