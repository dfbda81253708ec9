package io.nexuscore.tenants.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.nexuscore.classify.Tier;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.InMemoryPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantPolicies;
import java.net.InetAddress;
import java.net.Inet4Address;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Kernel-mode tenant limits in user space: KernelLimitSlots writes tenant_limits from the limits and
 * the prefixes, and KernelWindowLimiter counts in the kernel's windows, so the data plane's counts
 * and XDP's are one counter; a tenant without a prefix stays the WindowLimiter's.
 */
class KernelWindowLimiterTest {

    private static KernelDataPath kernel;

    @BeforeAll
    static void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
    }

    @AfterAll
    static void unload() {
        KernelTestSupport.dispose(kernel);
    }

    @Test
    void aPrefixTenantIsCountedInTheKernelsWindowAndXdpSeesTheSameCount() throws Exception {
        TenantPolicies prefixes = new PrefixTenantPolicies(new InMemoryPrefixFloors());
        prefixes.put("team-a", new TenantPolicies.TenantPolicy(Ipv4Prefix.parse("192.0.2.0/24"), Tier.NANO));
        TenantLimitStore store = TenantLimitStore.inMemory();
        TenantLimits limits = new TenantLimits(3, 0, 0, 0);
        store.put("team-a", limits);
        store.put("team-b", limits);
        KernelLimitSlots slots = new KernelLimitSlots(Optional.of(kernel.tenantLimits()), prefixes, store, FleetShare.ALONE, 64);
        slots.sync();
        KernelWindowLimiter limiter = new KernelWindowLimiter(new WindowLimiter(), slots, LimitClock.SYSTEM);

        Inet4Address client = (Inet4Address) InetAddress.getByName("192.0.2.10");
        assertEquals(Optional.of("team-a"), slots.tenantAt(client));
        int slot = slots.slotOf("team-a").orElseThrow();
        assertEquals(Optional.empty(), slots.slotOf("team-b"), "no prefix: user space only");
        assertEquals(slot, kernel.tenantLimits().limitFor(client).orElseThrow().slot());

        assertInstanceOf(LimitCounter.Admitted.class, limiter.admit("team-a", limits, limits, 10));
        // XDP counted one of team-a's requests in the same window (its verdict said COUNTED):
        TenantWindowsFixture.count(kernel, slot, 10);
        assertInstanceOf(LimitCounter.Admitted.class,
                limiter.admitCounted("team-a", limits, limits, 10, SharedStructs.VERDICT_F_COUNTED));
        assertEquals(SharedStructs.VERDICT_F_COUNTED, kernel.tenantLimits().windows()
                .admit(kernel.tenantLimits().limitFor(client).orElseThrow(), System.nanoTime(), 10), "XDP's third");
        LimitCounter.Verdict fourth = limiter.admit("team-a", limits, limits, 10);
        LimitCounter.Refused refused = assertInstanceOf(LimitCounter.Refused.class, fourth);
        assertEquals(LimitCounter.Reason.REQUESTS_PER_MINUTE, refused.reason());
        assertEquals(3, kernel.tenantLimits().windows().requests(slot, System.nanoTime()));

        for (int i = 0; i < 4; i++) {
            Class<? extends LimitCounter.Verdict> expected = i < 3 ? LimitCounter.Admitted.class : LimitCounter.Refused.class;
            assertInstanceOf(expected, limiter.admit("team-b", limits, limits, 10), "team-b's own window, request " + (i + 1));
        }

        store.delete("team-a");
        slots.sync();
        assertEquals(Optional.empty(), kernel.tenantLimits().limitFor(client), "a tenant without limits leaves the kernel map");
        assertEquals(Optional.empty(), slots.slotOf("team-a"));
    }

    @Test
    void aRequestTheDataPlaneRefusesAfterXdpCountedItIsTakenBack() throws Exception {
        TenantPolicies prefixes = new PrefixTenantPolicies(new InMemoryPrefixFloors());
        prefixes.put("team-c", new TenantPolicies.TenantPolicy(Ipv4Prefix.parse("198.51.100.0/24"), Tier.NANO));
        TenantLimitStore store = TenantLimitStore.inMemory();
        TenantLimits limits = new TenantLimits(5, 1_000, 1, 0); // one in flight at a time
        store.put("team-c", limits);
        KernelLimitSlots slots = new KernelLimitSlots(Optional.of(kernel.tenantLimits()), prefixes, store, FleetShare.ALONE, 64);
        slots.sync();
        KernelWindowLimiter limiter = new KernelWindowLimiter(new WindowLimiter(), slots, LimitClock.SYSTEM);
        int slot = slots.slotOf("team-c").orElseThrow();
        TenantWindowsFixture.count(kernel, slot, 100); // XDP counted a request of 100 tokens...
        LimitCounter.Admitted first = assertInstanceOf(LimitCounter.Admitted.class,
                limiter.admitCounted("team-c", limits, limits, 100, SharedStructs.VERDICT_F_COUNTED));
        TenantWindowsFixture.count(kernel, slot, 100); // ...and another, while the first is in flight
        LimitCounter.Refused second = assertInstanceOf(LimitCounter.Refused.class,
                limiter.admitCounted("team-c", limits, limits, 100, SharedStructs.VERDICT_F_COUNTED));
        assertEquals(LimitCounter.Reason.MAX_CONCURRENT, second.reason());
        assertEquals(1, kernel.tenantLimits().windows().requests(slot, System.nanoTime()), "the refused one is taken back");
        assertEquals(100, kernel.tenantLimits().windows().tokens(slot, System.nanoTime()));
        first.admission().settle(40);
        first.admission().release();
        assertEquals(40, kernel.tenantLimits().windows().tokens(slot, System.nanoTime()), "settled to the real usage");
    }
}
