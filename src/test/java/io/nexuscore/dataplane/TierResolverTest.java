package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.InMemoryThresholdStore;
import io.nexuscore.classify.ReadCost;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Tier;
import io.nexuscore.classify.VerdictSource;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TierResolverTest {

    private static final byte[] LINE = "POST /v1/tasks/summarize HTTP/1.1".getBytes(StandardCharsets.ISO_8859_1);
    private static final FourTuple TUPLE = tuple();
    /** A 100-byte body the scorer saw nothing of: 8 tokens from its length, plus "sum" in the line. */
    private static final PromptEstimate EST = PromptEstimate.fromLength(100);
    /**
     * By hand from the documented formula (docs/how-it-works.md), not the scorer under test: no body
     * seen, (100 - 64) bytes at 241/1024 tokens each = 8676 / 1024 = 8.47 -> 8 tokens; "sum" in
     * /v1/tasks/summarize adds 10: 18, nano.
     */
    private static final int JAVA_SCORE = 18;
    private static final int Q4 = EST.estimateQ4();

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final DataPlaneMetrics metrics = new DataPlaneMetrics(registry);

    private TierResolver resolver(VerdictSource verdicts) {
        return new TierResolver(RouterFixture.SCORER, new InMemoryThresholdStore(RouterFixture.THRESHOLDS), verdicts,
                verdicts != VerdictSource.NONE ? ReadCost.SYSCALL : ReadCost.MEMORY, metrics);
    }

    private static ConnectionInfo connection(Optional<Tier> floor) {
        return new ConnectionInfo(Optional.of(TUPLE), floor);
    }

    @Test
    void userSpaceModeScoresInJavaAndCountsNoFallback() {
        Resolution r = resolver(VerdictSource.NONE).resolve(LINE, 100, EST, connection(Optional.empty()));
        assertEquals(new Resolution(Tier.NANO, JAVA_SCORE, RouteSource.USER, RouterFixture.THRESHOLDS, Q4), r);
        assertEquals(0, registry.find("nexus_verdict_fallbacks").counters().size());
    }

    @Test
    void verifiedKernelVerdictDecidesAndADifferentJavaScoreCountsADisagreement() {
        KernelVerdict verdict = new KernelVerdict(200, Tier.LARGE, 100, Scorer.requestLineHash(LINE));
        Resolution r = resolver(c -> Optional.of(verdict)).resolve(LINE, 100, EST, connection(Optional.empty()));
        assertEquals(new Resolution(Tier.LARGE, 200, RouteSource.KERNEL, RouterFixture.THRESHOLDS, Q4), r);
        assertEquals(1, registry.get("nexus_kernel_user_disagreements").counter().count());
    }

    /** The kernel tiered 100 as small under 60/130; thresholds moved to 60/90 since: it is large now. */
    @Test
    void kernelVerdictIsReTieredUnderTheThresholdsInForceWhenServed() {
        KernelVerdict verdict = new KernelVerdict(100, Tier.SMALL, 100, Scorer.requestLineHash(LINE));
        InMemoryThresholdStore thresholds = new InMemoryThresholdStore(RouterFixture.THRESHOLDS);
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, thresholds, c -> Optional.of(verdict),
                ReadCost.SYSCALL, metrics);
        assertEquals(Tier.SMALL, resolver.resolve(LINE, 100, EST, connection(Optional.empty())).tier());
        thresholds.write(new io.nexuscore.classify.Thresholds(60, 90));
        assertEquals(new Resolution(Tier.LARGE, 100, RouteSource.KERNEL, new io.nexuscore.classify.Thresholds(60, 90), Q4),
                resolver.resolve(LINE, 100, EST, connection(Optional.empty())));
    }

    @Test
    void agreeingKernelVerdictCountsNoDisagreement() {
        int score = JAVA_SCORE;
        KernelVerdict verdict = new KernelVerdict(score, Tier.NANO, 100, Scorer.requestLineHash(LINE));
        assertEquals(RouteSource.KERNEL, resolver(c -> Optional.of(verdict)).resolve(LINE, 100, EST,
                connection(Optional.empty())).source());
        assertEquals(0, registry.get("nexus_kernel_user_disagreements").counter().count());
    }

    /** On keep-alive the map holds the latest head only: another request's verdict is never applied. */
    @Test
    void anotherRequestsVerdictIsStaleAndTheJavaScorerDecides() {
        KernelVerdict otherBody = new KernelVerdict(200, Tier.LARGE, 900, Scorer.requestLineHash(LINE));
        KernelVerdict otherLine = new KernelVerdict(200, Tier.LARGE, 100, Scorer.requestLineHash("GET / HTTP/1.1".getBytes()));
        for (KernelVerdict stale : new KernelVerdict[] {otherBody, otherLine}) {
            Resolution r = resolver(c -> Optional.of(stale)).resolve(LINE, 100, EST, connection(Optional.empty()));
            assertEquals(new Resolution(Tier.NANO, JAVA_SCORE, RouteSource.USER, RouterFixture.THRESHOLDS, Q4), r);
        }
        assertEquals(2, registry.get("nexus_verdict_fallbacks").tag("reason", "stale").counter().count());
    }

    /** The head's segment held no prompt string: the Java twin, which has the body, decides. */
    @Test
    void blindKernelVerdictLeavesTheDecisionToTheJavaScorer() {
        KernelVerdict blind = new KernelVerdict(200, Tier.LARGE, KernelVerdict.check(Scorer.requestLineHash(LINE), 100), true);
        PromptEstimate seen = PromptEstimate.scan("{\"prompt\":\"hi\"}".getBytes(StandardCharsets.UTF_8), 0, 15, 15);
        // By hand: the 15-byte body is seen whole; "hi" is a word of 2 letters, 537 + 2*129 = 795 / 1024
        // = 0.78 -> 1 token (nothing after the closing quote beyond 48 bytes); "sum" in the line: 1 + 10 = 11.
        int javaScore = 11;
        for (TierResolver resolver : new TierResolver[] {resolver(c -> Optional.of(blind)),
                resolver(withSlot(Optional.of(blind), Optional.empty()))}) {
            Resolution r = resolver.resolveWithoutSyscall(LINE, 100, seen, connection(Optional.empty()))
                    .orElseGet(() -> resolver.resolve(LINE, 100, seen, connection(Optional.empty())));
            assertEquals(new Resolution(Tier.NANO, javaScore, RouteSource.USER, RouterFixture.THRESHOLDS,
                    seen.estimateQ4()), r);
        }
        assertEquals(2, registry.get("nexus_verdict_fallbacks").tag("reason", "blind").counter().count());
        assertEquals(0, registry.get("nexus_kernel_user_disagreements").counter().count());
    }

    @Test
    void missingVerdictFallsBackAndIsCounted() {
        resolver(c -> Optional.empty()).resolve(LINE, 100, EST, connection(Optional.empty()));
        assertEquals(1, registry.get("nexus_verdict_fallbacks").tag("reason", "missing").counter().count());
    }

    @Test
    void tenantFloorRaisesButNeverLowers() {
        TierResolver resolver = resolver(VerdictSource.NONE);
        assertEquals(Tier.SMALL, resolver.resolve(LINE, 100, EST, connection(Optional.of(Tier.SMALL))).tier());
        assertEquals(Tier.LARGE, resolver.resolve(LINE, 1000, PromptEstimate.fromLength(1000), connection(Optional.of(Tier.SMALL))).tier());
        assertEquals(JAVA_SCORE, resolver.resolve(LINE, 100, EST, connection(Optional.of(Tier.LARGE))).score(),
                "the floor changes the tier, not the score");
    }

    /** A verdict source with an mmap'ed slot: {@code slot} is what plain loads see, the map holds {@code map}. */
    private static VerdictSource withSlot(Optional<KernelVerdict> slot, Optional<KernelVerdict> map) {
        return new VerdictSource() {
            @Override
            public Optional<KernelVerdict> lookup(FourTuple connection) {
                return map;
            }

            @Override
            public Optional<KernelVerdict> lookupInMemory(FourTuple connection) {
                return slot;
            }
        };
    }

    @Test
    void kernelVerdictInItsSlotResolvesWithoutASyscallAndKeepsTheFloor() {
        KernelVerdict verdict = new KernelVerdict(100, Tier.SMALL, 100, Scorer.requestLineHash(LINE));
        TierResolver resolver = resolver(withSlot(Optional.of(verdict), Optional.empty()));
        assertEquals(Optional.of(new Resolution(Tier.SMALL, 100, RouteSource.KERNEL, RouterFixture.THRESHOLDS, Q4)),
                resolver.resolveWithoutSyscall(LINE, 100, EST, connection(Optional.empty())));
        assertEquals(Optional.of(new Resolution(Tier.LARGE, 100, RouteSource.KERNEL, RouterFixture.THRESHOLDS, Q4)),
                resolver.resolveWithoutSyscall(LINE, 100, EST, connection(Optional.of(Tier.LARGE))));
        assertEquals(2, registry.get("nexus_kernel_user_disagreements").counter().count(),
                "the slot path counts disagreements as the map path does");
    }

    /** A slot miss or another request's slot verdict leaves the decision to the syscall path. */
    @Test
    void slotMissOrStaleSlotNeedsTheSyscallPath() {
        KernelVerdict stale = new KernelVerdict(200, Tier.LARGE, 900, Scorer.requestLineHash(LINE));
        KernelVerdict fresh = new KernelVerdict(200, Tier.SMALL, 100, Scorer.requestLineHash(LINE));
        for (Optional<KernelVerdict> slot : java.util.List.of(Optional.<KernelVerdict>empty(), Optional.of(stale))) {
            TierResolver resolver = resolver(withSlot(slot, Optional.of(fresh)));
            assertEquals(Optional.empty(), resolver.resolveWithoutSyscall(LINE, 100, EST, connection(Optional.empty())));
            assertEquals(RouteSource.KERNEL, resolver.resolve(LINE, 100, EST, connection(Optional.empty())).source());
        }
    }

    /** The slot path runs on the event loop: it reads the snapshot, never the store (a syscall in kernel mode). */
    @Test
    void slotPathReadsTheSnapshotNotTheStore() {
        KernelVerdict verdict = new KernelVerdict(200, Tier.SMALL, 100, Scorer.requestLineHash(LINE));
        io.nexuscore.classify.ThresholdStore syscallStore = new io.nexuscore.classify.ThresholdStore() {
            @Override
            public io.nexuscore.classify.ThresholdState state() {
                throw new AssertionError("store read on the slot path");
            }

            @Override
            public boolean compareAndSet(io.nexuscore.classify.ThresholdState expected,
                                         io.nexuscore.classify.ThresholdState next) {
                throw new UnsupportedOperationException();
            }
        };
        TierResolver resolver = new TierResolver(RouterFixture.SCORER, syscallStore, () -> RouterFixture.THRESHOLDS,
                withSlot(Optional.of(verdict), Optional.empty()), ReadCost.SYSCALL, metrics);
        assertEquals(RouterFixture.THRESHOLDS, resolver.resolveWithoutSyscall(LINE, 100, EST, connection(Optional.empty()))
                .orElseThrow().thresholds());
    }

    @Test
    void userSpaceModeAlwaysResolvesWithoutASyscall() {
        assertEquals(Optional.of(new Resolution(Tier.NANO, JAVA_SCORE, RouteSource.USER, RouterFixture.THRESHOLDS, Q4)),
                resolver(VerdictSource.NONE).resolveWithoutSyscall(LINE, 100, EST, connection(Optional.empty())));
    }

    private static FourTuple tuple() {
        try {
            Inet4Address lo = (Inet4Address) InetAddress.getByName("127.0.0.1");
            return new FourTuple(lo, 40000, lo, 8080);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
