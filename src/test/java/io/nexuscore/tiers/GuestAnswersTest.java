package io.nexuscore.tiers;

import static io.nexuscore.tiers.TestTiers.MB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.dylibso.chicory.wasm.Parser;
import com.dylibso.chicory.wasm.WasmModule;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.tiers.wasm.CoreInstance;
import io.nexuscore.tiers.wasm.GuestAbi;
import io.nexuscore.tiers.wasm.GuestAbi.GuestAnswer;
import io.nexuscore.tiers.wasm.WasmEngine;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Every guest, built from C by this Maven build, answers by the WIT contract through both engines. */
class GuestAnswersTest {

    static Stream<Arguments> guestsAndEngines() {
        return Stream.of(Tier.values()).flatMap(t -> Stream.of(TierConfig.Engine.values()).map(e -> Arguments.of(t, e)));
    }

    private static GuestAnswer ask(CoreInstance instance, TierRequest request) {
        return instance.withDeadline(10_000, () -> GuestAbi.call(instance, request));
    }

    @ParameterizedTest(name = "{0} guest on {1}")
    @MethodSource("guestsAndEngines")
    void answersCountTokensAndAssessTier(Tier guest, TierConfig.Engine engineKind) {
        int budget = switch (guest) {
            case NANO -> 8;
            case SMALL -> 32;
            case LARGE -> 128;
        };
        try (WasmEngine engine = TestTiers.engine(engineKind);
             CoreInstance instance = engine.compile(guest.label(), TestTiers.guest(guest)).instantiate(1, (int) (64 * MB / 65536))) {

            // cl100k_base: "  Hello,\tworld!\n Ça va?" is 9 tokens (jtokkit agrees; GuestTokenCountTest
            // compares a whole table of prompts).
            GuestAnswer hello = ask(instance, new TierRequest("chat", "  Hello,\tworld!\n Ça va?", 0, TierRequest.Simulation.NONE));
            assertEquals(9, hello.promptTokens());
            assertEquals(9, hello.observedScore());
            assertEquals(Tier.NANO, hello.observedTier());
            // Words are copied as written; whitespace runs fold to one space.
            assertEquals("[" + guest.label() + "] chat: Hello, world! Ça va?", hello.text());
            assertTrue(hello.completionTokens() > 9, hello.text());

            // "w0 w1 ... w499" is 1000 tokens: the score saturates at 255.
            GuestAnswer large = ask(instance, TestTiers.request(TestTiers.words(500)));
            assertEquals(Tier.LARGE, large.observedTier());
            assertEquals(255, large.observedScore());

            // The completion stops at the guest's budget (or max_tokens when smaller) and says it was cut.
            String expected = "[" + guest.label() + "] summarize: " + TestTiers.words(budget) + " ...";
            assertEquals(expected, large.text());
            GuestAnswer three = ask(instance, new TierRequest("summarize", TestTiers.words(500), 3, TierRequest.Simulation.NONE));
            assertEquals("[" + guest.label() + "] summarize: w0 w1 w2 ...", three.text());

            // A 4 KB prompt and an empty one; the instance serves call after call (its heap is reset).
            String big = "x".repeat(4096);
            for (int i = 0; i < 50; i++) {
                GuestAnswer a = ask(instance, TestTiers.request(big));
                assertEquals(512, a.promptTokens()); // "xxxxxxxx" is one cl100k token
            }
            assertEquals(0, ask(instance, TestTiers.request("")).promptTokens());
        }
    }

    @ParameterizedTest(name = "{0} guest")
    @EnumSource(Tier.class)
    void guestImportsOnlyItsMemoryAndTheHostInterface(Tier guest) {
        WasmModule module = Parser.parse(TestTiers.guest(guest));
        Set<String> imports = module.importSection().stream().map(i -> i.module() + "." + i.name())
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of("env.memory", "nexus:tier/host@0.1.0.now-ns", "nexus:tier/host@0.1.0.memory-exhausted"), imports);
        Set<String> exports = IntStream.range(0, module.exportSection().exportCount())
                .mapToObj(i -> module.exportSection().getExport(i).name()).collect(Collectors.toSet());
        assertTrue(exports.containsAll(Set.of("_initialize", "cabi_realloc", "handle", "cabi_post_handle")), exports.toString());
    }
}
