package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.AdaptiveConfig.Scope;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import io.nexuscore.testing.RecordingEventSink;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The fleet agent over an in-memory map and fake routers: adoption, compare-and-set conflicts, last
 * writer wins after a partition, and fleet-scope adaptive steps taken once per period.
 */
class FleetAgentTest {

    private static final int PERIOD_MS = 10_000;
    private static final AdaptiveSettings ADAPTIVE = AdaptiveSettings.DEFAULT.withPeriodMs(PERIOD_MS).withCeiling(60);
    private static final PolicyContent START = PolicyContent.of(Thresholds.DEFAULT, Map.of(), Map.of(), Optional.empty());

    private final AtomicLong clock = new AtomicLong(1_000_000);
    private final MemoryMap map = new MemoryMap();

    @Test
    void aJoiningRouterTakesTheFleetsPolicyBeforeItServes() {
        Router a = router("a", Scope.NODE, START);
        a.agent.join(0);
        a.local.edit(c -> c.withThresholds(new Thresholds(40, 120)));
        a.agent.sync();

        Router b = router("b", Scope.NODE, START); // fresh: configured thresholds
        PolicyDoc joined = b.agent.join(0);
        assertEquals(2, joined.version());
        assertEquals(new Thresholds(40, 120), b.local.content.thresholds());
        assertEquals("a", joined.origin());
    }

    @Test
    void theFirstRouterUpOffersItsPolicyNumberedAfterItsSavedVersion() {
        Router a = router("a", Scope.NODE, START.withThresholds(new Thresholds(50, 100)));
        PolicyDoc first = a.agent.join(7);
        assertEquals(8, first.version());
        assertEquals(new Thresholds(50, 100), map.read().orElseThrow().content().thresholds());
    }

    @Test
    void aChangeOnOneRouterReachesTheOthersWithItsOrigin() {
        Router a = joined("a", Scope.NODE);
        Router b = joined("b", Scope.NODE);
        TenantPolicy acme = new TenantPolicy(Ipv4Prefix.parse("10.1.0.0/16"), Tier.SMALL);
        a.local.edit(c -> c.withThresholds(new Thresholds(45, 130)));
        a.local.tenants(Map.of("acme", acme));
        a.agent.sync();
        b.agent.sync();

        assertEquals(new Thresholds(45, 130), b.local.content.thresholds());
        assertEquals(Map.of("acme", acme), b.local.content.tenants());
        assertEquals(a.agent.adopted(), b.agent.adopted());
        RecordingEventSink.Event event = b.events.events().stream()
                .filter(e -> e.data().getString("action").equals("adopted")).findFirst().orElseThrow();
        assertEquals("a", event.data().getString("origin"));
        assertEquals("b", event.data().getString("node"));
        assertEquals(a.agent.adopted().version(), event.data().getLong("version"));
    }

    @Test
    void concurrentEditsOfDifferentFieldsBothSurviveOnOneVersion() {
        Router a = joined("a", Scope.NODE);
        Router b = joined("b", Scope.NODE);
        a.local.edit(c -> c.withThresholds(new Thresholds(30, 130)));
        b.local.keys(Map.of("acme", List.of("sha256:" + "ab".repeat(32))));
        a.agent.sync(); // v2
        b.agent.sync(); // its compare-and-set against v1 fails: merged onto v2 as v3
        a.agent.sync(); // takes v3

        assertEquals(3, map.read().orElseThrow().version());
        assertEquals(a.local.content, b.local.content);
        assertEquals(new Thresholds(30, 130), b.local.content.thresholds());
        assertEquals(1, a.local.content.keys().size());
        assertEquals(a.agent.adopted(), b.agent.adopted());
    }

    @Test
    void concurrentEditsOfOneFieldEndOnTheLastWriter() {
        Router a = joined("a", Scope.NODE);
        Router b = joined("b", Scope.NODE);
        a.local.edit(c -> c.withThresholds(new Thresholds(30, 130)));
        b.local.edit(c -> c.withThresholds(new Thresholds(40, 130)));
        a.agent.sync();
        b.agent.sync();
        a.agent.sync();

        assertEquals(new Thresholds(40, 130), map.read().orElseThrow().content().thresholds());
        assertEquals(new Thresholds(40, 130), a.local.content.thresholds());
        assertEquals(3, a.agent.adopted().version());
        assertEquals(a.agent.adopted(), b.agent.adopted());
    }

    @Test
    void concurrentEditsOfNanoAndSmallOnTwoRoutersBothSurvive() {
        Router a = joined("a", Scope.NODE);
        Router b = joined("b", Scope.NODE);
        a.local.edit(c -> c.withThresholds(new Thresholds(51, 130)));
        b.local.edit(c -> c.withThresholds(new Thresholds(60, 151)));
        a.agent.sync();
        b.agent.sync();
        a.agent.sync();
        assertEquals(new Thresholds(51, 151), a.local.content.thresholds());
        assertEquals(new Thresholds(51, 151), b.local.content.thresholds());
        assertEquals(a.agent.adopted(), b.agent.adopted());
    }

    @Test
    void aPatchLandingWhileTheFleetsChangeIsAppliedIsNotOverwritten() {
        // The same field: the PATCH, the later write, wins everywhere.
        assertAPatchMidSyncEndsEverywhereOn(new Thresholds(30, 130), new Thresholds(35, 130), new Thresholds(35, 130));
    }

    @Test
    void aPatchOfNanoLandingWhileTheFleetsSmallIsAppliedKeepsBoth() {
        // FleetIT once ended with 51/150 everywhere after PATCHes of nano_max=51 on one router and
        // small_max=151 on another: the PATCH made the fleet's 151 be skipped, and the next sync sent 150 back.
        assertAPatchMidSyncEndsEverywhereOn(new Thresholds(60, 151), new Thresholds(51, 130), new Thresholds(51, 151));
    }

    /**
     * Router a writes {@code fleetEdit} to the fleet; router b's agent reads its stores, then an
     * operator's PATCH ({@code patch}, from the start's 60/130) lands there before the agent applies
     * a's change. The PATCH stands on b at once, goes to the fleet at b's next sync, and both routers
     * and the map end on {@code expected}, on one version.
     */
    private void assertAPatchMidSyncEndsEverywhereOn(Thresholds fleetEdit, Thresholds patch, Thresholds expected) {
        Router a = joined("a", Scope.NODE);
        Router b = joined("b", Scope.NODE);
        a.local.edit(c -> c.withThresholds(fleetEdit));
        a.agent.sync();
        b.local.afterRead = () -> b.local.edit(c -> c.withThresholds(patch));
        b.agent.sync();
        assertEquals(expected, b.local.content.thresholds(), "the PATCH stands, the fleet's other field beside it");
        b.agent.sync();
        a.agent.sync();
        assertEquals(expected, map.read().orElseThrow().content().thresholds());
        assertEquals(expected, a.local.content.thresholds());
        assertEquals(a.agent.adopted(), b.agent.adopted());
    }

    @Test
    void aNodeScopeKernelStepLandingWhileTheFleetsSmallIsAppliedStaysOnItsRouter() {
        Router a = joined("a", Scope.NODE);
        Router b = joined("b", Scope.NODE);
        a.local.edit(c -> c.withThresholds(new Thresholds(60, 151)));
        a.agent.sync();
        b.local.afterRead = () -> b.local.kernelStep(55); // b's loop steps nano_max after its agent read
        b.agent.sync();
        assertEquals(new Thresholds(55, 151), b.local.content.thresholds(), "the step stands beside the fleet's field");
        b.agent.sync();
        assertEquals(new Thresholds(60, 151), map.read().orElseThrow().content().thresholds(),
                "a node-scope step is its router's own, not the fleet's");
    }

    @Test
    void fleetScopeStepsOncePerPeriodWhenTwoRoutersSeeTheSameOverload() {
        Router a = joined("a", Scope.FLEET, START.withThresholds(new Thresholds(60, 130)), ADAPTIVE);
        Router b = joined("b", Scope.FLEET, START.withThresholds(new Thresholds(60, 130)), ADAPTIVE);
        a.agent.sync();
        b.agent.sync();
        long base = map.read().orElseThrow().version();

        // Period 1: both kernel loops lower nano_max by 5.
        a.local.kernelStep(55);
        b.local.kernelStep(55);
        a.agent.sync();
        b.agent.sync();
        assertEquals(base + 1, map.read().orElseThrow().version(), "one step for two routers");
        assertEquals(55, map.read().orElseThrow().content().thresholds().nanoMax());
        assertEquals(55, b.local.content.thresholds().nanoMax());
        assertTrue(b.events.events().stream().anyMatch(e -> e.data().getString("action").equals("step-dropped")));

        // Still period 1: b's loop, now on the fleet's 55, steps again before the period is over: dropped.
        clock.addAndGet(PERIOD_MS / 3);
        b.local.kernelStep(50);
        b.agent.sync();
        assertEquals(55, map.read().orElseThrow().content().thresholds().nanoMax());
        assertEquals(55, b.local.content.thresholds().nanoMax(), "b's early step undone");

        // Period 2: both step again; the fleet moves once more.
        clock.addAndGet(PERIOD_MS);
        b.local.kernelStep(50);
        a.local.kernelStep(50);
        b.agent.sync();
        a.agent.sync();
        assertEquals(base + 2, map.read().orElseThrow().version());
        assertEquals(50, a.local.content.thresholds().nanoMax());
        assertEquals(50, b.local.content.thresholds().nanoMax());
    }

    /**
     * The fleet took this router's edit, but its stores refuse the rest of the fleet's document: the
     * edit is not written again as a new version at every sync (it is in the fleet's document already).
     */
    @Test
    void anEditTheFleetHoldsIsNotProposedAgainWhenTheRestCannotBeAppliedHere() {
        Router a = joined("a", Scope.NODE);
        Router b = joined("b", Scope.NODE);
        b.local.edit(c -> c.withThresholds(new Thresholds(50, 140)));
        b.agent.sync();
        a.local.tenants(Map.of("acme", new TenantPolicy(Ipv4Prefix.parse("10.1.0.0/16"), Tier.SMALL)));
        a.local.refuseApply = new IllegalStateException("tenant map full (test)");
        assertThrows(IllegalStateException.class, a.agent::sync);
        long version = map.read().orElseThrow().version();
        assertEquals(1, map.read().orElseThrow().content().tenants().size(), "the fleet took a's tenant");
        for (int round = 0; round < 3; round++) {
            assertThrows(IllegalStateException.class, a.agent::sync);
        }
        assertEquals(version, map.read().orElseThrow().version(), "no new version while a cannot apply");
        a.local.refuseApply = null;
        a.agent.sync();
        assertEquals(version, map.read().orElseThrow().version());
        assertEquals(new Thresholds(50, 140), a.local.content.thresholds(), "b's edit arrived once a could apply it");
        assertEquals(version, a.agent.adopted().version());
    }

    /** A tool (or a node whose clock runs ahead) stamps the fleet's last step far in the future. */
    @Test
    void aStepStampInTheFutureDoesNotHoldTheFleetsLoopStill() {
        Router a = joined("a", Scope.FLEET, START.withThresholds(new Thresholds(60, 130)), ADAPTIVE);
        a.agent.sync();
        PolicyDoc current = map.read().orElseThrow();
        PolicyDoc stamped = current.next("tool", PolicyDoc.CAUSE_EXTERNAL, clock.get(), current.content())
                .withAdaptiveStepAt(Long.MAX_VALUE / 2);
        assertTrue(map.compareAndSet(Optional.of(current), stamped));
        a.agent.sync(); // takes the stamped document
        a.local.kernelStep(55);
        a.agent.sync();
        assertEquals(55, map.read().orElseThrow().content().thresholds().nanoMax(), "the step reached the fleet");
        assertEquals(55, a.local.content.thresholds().nanoMax());
    }

    @Test
    void nodeScopeKeepsAKernelStepOnItsRouter() {
        Router a = joined("a", Scope.NODE, START, ADAPTIVE);
        a.agent.sync();
        long version = map.read().orElseThrow().version();
        a.local.kernelStep(55);
        a.agent.sync();
        assertEquals(version, map.read().orElseThrow().version());
        assertEquals(60, map.read().orElseThrow().content().thresholds().nanoMax());
        assertEquals(55, a.local.content.thresholds().nanoMax());
    }

    @Test
    void aCutOffRouterKeepsServingAndTakesTheFleetsNewerPolicyWhenBack() {
        Router a = joined("a", Scope.NODE);
        Router c = joined("c", Scope.NODE);
        map.reachable = false;
        c.agent.sync();
        assertFalse(c.agent.reachable());
        map.reachable = true;
        a.local.edit(x -> x.withThresholds(new Thresholds(35, 130)));
        a.agent.sync();
        a.local.edit(x -> x.withThresholds(new Thresholds(36, 130)));
        a.agent.sync();
        assertEquals(60, c.local.content.thresholds().nanoMax(), "cut off: its last policy");

        c.agent.sync();
        assertTrue(c.agent.reachable());
        assertEquals(36, c.local.content.thresholds().nanoMax());
        assertEquals(a.agent.adopted(), c.agent.adopted());
    }

    @Test
    void afterASplitTheHigherVersionWinsWhateverTheMapKept() {
        Router a = joined("a", Scope.NODE);
        MapView cView = new MapView(map);
        Router c = new Router("c", Scope.NODE, new FakeLocal(START), cView, new RecordingEventSink(), clock);
        c.agent.join(0);

        MemoryMap cSide = cView.split();
        c.local.edit(x -> x.withThresholds(new Thresholds(20, 130)));
        c.agent.sync();
        c.local.edit(x -> x.withThresholds(new Thresholds(21, 130)));
        c.agent.sync(); // c alone: version 3
        a.local.edit(x -> x.withThresholds(new Thresholds(50, 130)));
        a.agent.sync(); // the majority: version 2
        assertEquals(3, cSide.read().orElseThrow().version());

        cView.target = map; // healed; the map kept the majority's version 2
        c.agent.sync();     // c holds version 3: written back
        a.agent.sync();     // a takes it
        assertEquals(3, map.read().orElseThrow().version());
        assertEquals(21, a.local.content.thresholds().nanoMax());
        assertEquals(a.agent.adopted(), c.agent.adopted());
        assertTrue(c.events.events().stream().anyMatch(e -> e.data().getString("action").equals("reconciled")));
    }

    @Test
    void afterASplitTheCutOffSideTakesTheMajoritysHigherVersion() {
        Router a = joined("a", Scope.NODE);
        MapView cView = new MapView(map);
        Router c = new Router("c", Scope.NODE, new FakeLocal(START), cView, new RecordingEventSink(), clock);
        c.agent.join(0);

        MemoryMap cSide = cView.split();
        c.local.edit(x -> x.withThresholds(new Thresholds(20, 130)));
        c.agent.sync(); // c alone: version 2
        a.local.edit(x -> x.withThresholds(new Thresholds(50, 130)));
        a.agent.sync();
        a.local.edit(x -> x.withThresholds(new Thresholds(51, 130)));
        a.agent.sync(); // the majority: version 3

        map.value = cSide.value; // healed; the map kept c's version 2
        cView.target = map;
        c.agent.sync();
        a.agent.sync(); // a holds version 3: written back
        c.agent.sync(); // c takes it
        assertEquals(3, map.read().orElseThrow().version());
        assertEquals(51, c.local.content.thresholds().nanoMax());
        assertEquals(a.agent.adopted(), c.agent.adopted());
    }

    // --- fakes --------------------------------------------------------------------------------------

    private Router joined(String node, Scope scope) {
        return joined(node, scope, START, null);
    }

    private Router joined(String node, Scope scope, PolicyContent content, AdaptiveSettings adaptive) {
        PolicyContent c = adaptive == null ? content
                : new PolicyContent(content.thresholds(), content.tenants(), content.keys(), Optional.of(adaptive));
        Router r = router(node, scope, c);
        r.agent.join(0);
        return r;
    }

    private Router router(String node, Scope scope, PolicyContent content) {
        return new Router(node, scope, new FakeLocal(content), map, new RecordingEventSink(), clock);
    }

    private static final class Router {
        final FakeLocal local;
        final RecordingEventSink events;
        final FleetAgent agent;

        Router(String node, Scope scope, FakeLocal local, SharedPolicy map, RecordingEventSink events, AtomicLong clock) {
            this.local = local;
            this.events = events;
            this.agent = new FleetAgent(node, map, local, events, scope, clock::get, doc -> { });
        }
    }

    /** A router's stores: the content, and who wrote the thresholds last. */
    static final class FakeLocal implements LocalPolicy {
        PolicyContent content;
        Writer writer = Writer.API;
        long version;
        /** When set, every apply throws it and changes nothing. */
        RuntimeException refuseApply;
        /** Runs right after the agent read the stores: a PATCH landing mid-sync. */
        Runnable afterRead = () -> { };

        FakeLocal(PolicyContent content) {
            this.content = content;
        }

        void edit(java.util.function.UnaryOperator<PolicyContent> change) {
            content = change.apply(content);
            writer = Writer.API;
            version++;
        }

        void tenants(Map<String, TenantPolicy> tenants) {
            content = new PolicyContent(content.thresholds(), new java.util.TreeMap<>(tenants), content.keys(),
                    content.adaptive());
        }

        void keys(Map<String, List<String>> keys) {
            content = new PolicyContent(content.thresholds(), content.tenants(), new java.util.TreeMap<>(keys),
                    content.adaptive());
        }

        void kernelStep(int nanoMax) {
            content = content.withThresholds(new Thresholds(nanoMax, content.thresholds().smallMax()));
            writer = Writer.KERNEL;
            version++;
        }

        @Override
        public State read() {
            State state = new State(content, writer, version);
            Runnable hook = afterRead;
            afterRead = () -> { };
            hook.run();
            return state;
        }

        @Override
        public void apply(PolicyDelta delta, State seen) {
            if (refuseApply != null) {
                throw refuseApply; // the stores refuse the fleet's change (a full tenant map, a disk error)
            }
            Thresholds before = content.thresholds();
            // A field written here since seen stands, as in RouterLocalPolicy (same merge, same writer rule).
            Thresholds t = delta.thresholdsOnto(before, seen.content().thresholds());
            content = content.with(delta.withoutThresholds()).withThresholds(t);
            if (!t.equals(before)) {
                writer = before.equals(seen.content().thresholds()) ? Writer.API : writer;
                version++;
            }
        }
    }

    /** The replicated map: one encoded document, compare-and-set on the encoded text, and an off switch. */
    static final class MemoryMap implements SharedPolicy {
        String value;
        boolean reachable = true;

        @Override
        public synchronized Optional<PolicyDoc> read() {
            check();
            return Optional.ofNullable(value).map(PolicyDoc::decode);
        }

        @Override
        public synchronized boolean compareAndSet(Optional<PolicyDoc> expected, PolicyDoc next) {
            check();
            String want = expected.map(PolicyDoc::encode).orElse(null);
            if (!java.util.Objects.equals(want, value)) {
                return false;
            }
            value = next.encode();
            return true;
        }

        private void check() {
            if (!reachable) {
                throw new Unreachable("partitioned (test)", null);
            }
        }
    }

    /** One router's way to the map; {@link #split} cuts it off onto a copy of its own. */
    static final class MapView implements SharedPolicy {
        SharedPolicy target;

        MapView(SharedPolicy target) {
            this.target = target;
        }

        MemoryMap split() {
            MemoryMap alone = new MemoryMap();
            alone.value = ((MemoryMap) target).value;
            target = alone;
            return alone;
        }

        @Override
        public Optional<PolicyDoc> read() {
            return target.read();
        }

        @Override
        public boolean compareAndSet(Optional<PolicyDoc> expected, PolicyDoc next) {
            return target.compareAndSet(expected, next);
        }
    }
}
