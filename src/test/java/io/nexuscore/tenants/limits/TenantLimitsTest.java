package io.nexuscore.tenants.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TenantLimitsTest {

    @Test
    void jsonRoundTripsAndAbsentOrNullIsUnlimited() {
        TenantLimits l = TenantLimits.fromJson(new JsonObject("{\"requests_per_minute\":30,\"tokens_per_day\":null}"));
        assertEquals(new TenantLimits(30, 0, 0, 0), l);
        assertEquals(new JsonObject().put("requests_per_minute", 30), l.toJson());
    }

    @Test
    void unknownFieldsAndNonPositiveOrNonIntegerValuesAreRefusedNamingTheField() {
        for (String body : new String[] {"{\"rpm\":3}", "{\"requests_per_minute\":0}", "{\"tokens_per_minute\":-1}",
                "{\"max_concurrent\":1.5}", "{\"tokens_per_day\":\"10\"}", "{\"tokens_per_day\":1000000000001}"}) {
            TenantLimits.Invalid e = assertThrows(TenantLimits.Invalid.class, () -> TenantLimits.fromJson(new JsonObject(body)));
            assertTrue(body.contains(e.field), body + " named " + e.field);
        }
    }

    @Test
    void aShareIsTheCeilingOfTheLimitOverTheMembers() {
        assertEquals(new TenantLimits(10, 334, 1, 0), new TenantLimits(30, 1000, 1, 0).share(3));
        assertEquals(new TenantLimits(30, 1000, 1, 0), new TenantLimits(30, 1000, 1, 0).share(1));
    }

    @Test
    void theStoreSurvivesARestartAndReplaceIsConditional(@TempDir Path dir) throws Exception {
        Path file = TenantLimitStore.besideStateFile(dir.resolve("state.json"));
        assertEquals("state.limits.json", file.getFileName().toString());
        TenantLimitStore store = TenantLimitStore.load(file);
        assertTrue(store.put("a", new TenantLimits(30, 0, 0, 0)));
        assertTrue(Files.exists(file));
        TenantLimitStore again = TenantLimitStore.load(file);
        assertEquals(Optional.of(new TenantLimits(30, 0, 0, 0)), again.of("a"));
        assertEquals(false, again.replace("a", Optional.empty(), Optional.of(new TenantLimits(1, 0, 0, 0))));
        assertTrue(again.replace("a", Optional.of(new TenantLimits(30, 0, 0, 0)), Optional.empty()));
        assertEquals(Optional.empty(), TenantLimitStore.load(file).of("a"));
    }

    @Test
    void durationsAreWrittenAsOpenAiWritesThem() {
        long ms = 1_000_000;
        assertEquals("0s", RateLimitHeaders.duration(0));
        assertEquals("20ms", RateLimitHeaders.duration(20 * ms));
        assertEquals("1s", RateLimitHeaders.duration(1000 * ms));
        assertEquals("59.8s", RateLimitHeaders.duration(59_800 * ms));
        assertEquals("6m0s", RateLimitHeaders.duration(360_000 * ms));
        assertEquals("1m0.5s", RateLimitHeaders.duration(60_500 * ms));
        assertEquals("24h0m0s", RateLimitHeaders.duration(86_400_000 * ms));
        assertEquals("1ms", RateLimitHeaders.duration(1), "a reset never reads earlier than it is");
    }
}
