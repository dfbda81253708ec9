package io.nexuscore.tenants.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.http.Problem;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.vertx.core.json.JsonObject;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class LimitGateTest {

    private final WindowLimiterTest.TestClock clock = new WindowLimiterTest.TestClock();
    private final TenantLimitStore store = TenantLimitStore.inMemory();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final LimitGate gate = new LimitGate(store, new TenantLimits(0, 0, 1, 0), 256, new WindowLimiter(clock),
            FleetShare.ALONE, clock, registry, 2, name -> false);

    @Test
    void theChargeIsThePromptEstimatePlusTheOutputCapPerChoiceOrTheAssumedCap() {
        assertEquals(10 + 256, gate.charge(10, 0, 0));
        assertEquals(10 + 100, gate.charge(10, 100, 1));
        assertEquals(10 + 300, gate.charge(10, 100, 3));
    }

    @Test
    void aRefusalIsA429WithRetryAfterTheHeadersAndTheLimitNamed() {
        store.put("a", new TenantLimits(1, 1000, 0, 0));
        Ticket first = gate.admit("a", 10, 20, 0);
        assertEquals("1", first.headers().get(RateLimitHeaders.LIMIT_REQUESTS));
        assertEquals("0", first.headers().get(RateLimitHeaders.REMAINING_REQUESTS));
        assertEquals("970", first.headers().get(RateLimitHeaders.REMAINING_TOKENS));
        assertEquals("1m0s", first.headers().get(RateLimitHeaders.RESET_TOKENS));
        clock.advance(200_000_000L);
        Problem p = assertThrows(ProblemException.class, () -> gate.admit("a", 10, 20, 0)).problem();
        assertEquals(ProblemType.RATE_LIMITED, p.kind());
        assertEquals(429, p.status());
        assertEquals("requests_per_minute", p.field().orElseThrow());
        assertEquals("60", p.headers().get("Retry-After"));
        assertEquals("59.8s", p.headers().get(RateLimitHeaders.RESET_REQUESTS));
        first.finish("nano", true, 5, 1);
        JsonObject usage = gate.usage().toJson("a").orElseThrow();
        assertEquals(1, usage.getLong("requests"));
        assertEquals(6, usage.getLong("prompt_tokens") + usage.getLong("completion_tokens"));
        assertEquals(1, usage.getJsonObject("refusals").getLong("requests_per_minute"));
        assertEquals(1.0, registry.get("nexus.tenant.limit.refusals").tag("tenant", "a").counter().count());
    }

    @Test
    void aRequestAboveTheWholeLimitIsToldNotToRetry() {
        store.put("a", new TenantLimits(0, 100, 0, 0));
        Problem p = assertThrows(ProblemException.class, () -> gate.admit("a", 10, 200, 0)).problem();
        assertFalse(p.headers().containsKey("Retry-After"));
        assertEquals("false", p.headers().get(LimitGate.SHOULD_RETRY));
    }

    @Test
    void theDefaultHoldsTenantsWithoutTheirOwnAndEveryPathReleasesOnce() {
        Ticket held = gate.admit("anonymous", 0, 0, 0); // default: max_concurrent 1
        assertThrows(ProblemException.class, () -> gate.admit("anonymous", 0, 0, 0));
        held.release();
        held.finish("nano", true, 1, 1); // after release: counts nothing, frees nothing twice
        Ticket next = gate.admit("anonymous", 0, 0, 0);
        assertThrows(ProblemException.class, () -> gate.admit("anonymous", 0, 0, 0));
        next.finish("small", false, 0, 0);
        gate.admit("anonymous", 0, 0, 0).finish("small", true, 3, 4);
        JsonObject usage = gate.usage().toJson("anonymous").orElseThrow();
        assertEquals(2, usage.getLong("requests"), "the released request never reached a tier");
        assertEquals(2, usage.getJsonObject("tiers").getJsonObject("small").getLong("requests"));
        assertEquals(3, usage.getLong("prompt_tokens"));
    }

    @Test
    void releasingBeforeAnyTierGivesTheTokensBack() {
        store.put("a", new TenantLimits(0, 1000, 0, 0));
        gate.admit("a", 0, 600, 0).release();
        assertEquals("400", gate.admit("a", 0, 600, 0).headers().get(RateLimitHeaders.REMAINING_TOKENS),
                "only the second charge is in the window");
    }

    @Test
    void aFleetShareFollowsTheLiveMembersAndKeepsTheLastWhenUnreachable() {
        int[] live = {3};
        boolean[] reachable = {true};
        FleetShare share = new FleetShare(() -> reachable[0] ? OptionalInt.of(live[0]) : OptionalInt.empty());
        assertEquals(new TenantLimits(10, 0, 0, 0), share.of(new TenantLimits(30, 0, 0, 0)));
        live[0] = 2;
        assertEquals(new TenantLimits(15, 0, 0, 0), share.of(new TenantLimits(30, 0, 0, 0)));
        reachable[0] = false;
        live[0] = 1;
        assertEquals(new TenantLimits(15, 0, 0, 0), share.of(new TenantLimits(30, 0, 0, 0)), "the last share stands");
    }

    @Test
    void theShareReadsTheFleetViewAndKeepsTheLastCountWhileUnreachable() {
        JsonObject[] view = {new JsonObject().put("reachable", true).put("members", new io.vertx.core.json.JsonArray()
                .add(new JsonObject()).add(new JsonObject()))};
        FleetShare share = FleetShare.ofView(() -> java.util.Optional.of(view[0]));
        assertEquals(2, share.members());
        view[0] = new JsonObject().put("reachable", false).put("members", new io.vertx.core.json.JsonArray().add(new JsonObject()));
        assertEquals(2, share.members());
        assertEquals(1, FleetShare.ofView(java.util.Optional::empty).members());
    }

    @Test
    void headerNamedTenantsBeyondTheBoundShareOneUsageRecordAndSeries() {
        for (String t : new String[] {"h1", "h2", "h3", "h4"}) {
            gate.admit(t, 0, 0, 0).finish("nano", true, 1, 1);
        }
        assertTrue(gate.usage().toJson("h2").isPresent());
        assertFalse(gate.usage().toJson("h3").isPresent());
        assertEquals(2, gate.usage().toJson(BoundedTenants.OTHER).orElseThrow().getLong("requests"));
    }
}
