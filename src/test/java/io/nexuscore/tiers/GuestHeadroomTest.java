package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An ordinary request leaves a guest's memory at the size of its image, so the pool puts the same
 * instance back to that image instead of instantiating a new one. Each guest reserves heap room in
 * its image (nexus_guest.c, HEAP_RESERVE); before it the room was what the data's last page happened
 * to leave, and one change of the cl100k tables' size made every request grow memory and pay a fresh
 * instance (1.3k instead of 48k requests per second on the nano tier).
 */
class GuestHeadroomTest {

    static Stream<Arguments> guests() {
        return Stream.of(
                Arguments.of(Tier.NANO, TierConfig.Engine.CHICORY),
                Arguments.of(Tier.NANO, TierConfig.Engine.WASMTIME),
                Arguments.of(Tier.SMALL, TierConfig.Engine.CHICORY),
                Arguments.of(Tier.LARGE, TierConfig.Engine.WASMTIME));
    }

    @ParameterizedTest
    @MethodSource("guests")
    void ordinaryRequestsKeepTheirInstance(Tier tier, TierConfig.Engine engine) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        TierConfig config = TestTiers.config(tier, engine, 1, 4, 256 * MB, 30_000);
        int requests = 0;
        try (WasmTierPool pool = new WasmTierPool(config, TestTiers.engine(engine), TestTiers.guest(tier), registry)) {
            // Real-looking text of growing size, up to the 16 KB of prompt the data plane's scan reads;
            // the last, short one is taken by the worker after it reset (or replaced) the instance.
            for (int bytes : new int[] {0, 100, 1_000, 4_000, 16_000, 10}) {
                TestTiers.await(pool.submit(TestTiers.request(text(bytes))));
                requests++;
            }
            assertEquals(requests, pool.poolState().orElseThrow().completed());
            assertEquals(1, registry.get("nexus.tier.instantiate").timer().count(),
                    "an instance was replaced: an ordinary request grew the guest's memory past its image");
        }
    }

    /** The token-count test's prompts (every branch of the cl100k split, several scripts) cycled to {@code bytes}. */
    private static String text(int bytes) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.toString().getBytes(StandardCharsets.UTF_8).length < bytes; i++) {
            b.append(GuestTokenCountTest.PROMPTS.get(i % GuestTokenCountTest.PROMPTS.size())).append('\n');
        }
        return b.toString();
    }
}
