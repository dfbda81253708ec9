package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Tier;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Tenant ids over a prefix-keyed store, including entries the store holds without an id. */
class PrefixTenantPoliciesTest {

    private final InMemoryPrefixFloors store = new InMemoryPrefixFloors();
    private final PrefixTenantPolicies tenants = new PrefixTenantPolicies(store);

    private static TenantPolicy policy(String prefix, Tier floor) {
        return new TenantPolicy(Ipv4Prefix.parse(prefix), floor);
    }

    @Test
    void movingATenantToAnotherPrefixRemovesTheOldOne() {
        assertTrue(tenants.put("acme", policy("10.0.0.0/8", Tier.SMALL)));
        assertFalse(tenants.put("acme", policy("10.1.0.0/16", Tier.LARGE)));
        assertEquals(Map.of(Ipv4Prefix.parse("10.1.0.0/16"), Tier.LARGE), store.entries());
    }

    @Test
    void entriesWithoutAnIdAreListedUnderTheirPrefixAndCanBeAdoptedOrDeleted() {
        // Written before a restart, or with bpftool: the store has it, nobody here named it.
        store.put(Ipv4Prefix.parse("198.51.100.0/24"), Tier.LARGE);
        store.put(Ipv4Prefix.parse("203.0.113.0/24"), Tier.SMALL);
        assertEquals(Map.of("198.51.100.0_24", policy("198.51.100.0/24", Tier.LARGE),
                "203.0.113.0_24", policy("203.0.113.0/24", Tier.SMALL)), tenants.list());
        assertTrue(tenants.put("beta", policy("198.51.100.0/24", Tier.NANO)), "adopting an unnamed prefix");
        assertTrue(tenants.delete("203.0.113.0_24"));
        assertEquals(Map.of("beta", policy("198.51.100.0/24", Tier.NANO)), tenants.list());
    }

    @Test
    void aNamedPrefixIsNotTakenByAnotherTenant() {
        tenants.put("a", policy("10.0.0.0/8", Tier.SMALL));
        assertThrows(TenantPolicies.PrefixInUse.class, () -> tenants.put("b", policy("10.0.0.0/8", Tier.LARGE)));
        assertEquals(Optional.of(Tier.SMALL), store.floorFor(0x0A000001));
    }

    /**
     * The store's capacity (the kernel map's max_entries; the same number in user space) bounds the
     * prefixes: the next new one is refused with a clear error instead of the kernel's ENOSPC as a
     * 500, while a tenant already holding a prefix may still change its floor.
     */
    @Test
    void aFullStoreRefusesANewPrefixButNotAChangedFloor() {
        int capacity = store.capacity();
        assertEquals(16_384, capacity, "tenant_policy's max_entries");
        for (int i = 0; i < capacity; i++) {
            store.put(Ipv4Prefix.covering(0x0A000000 | i << 8, 24), Tier.SMALL);
        }
        TenantPolicies.Full full = assertThrows(TenantPolicies.Full.class,
                () -> tenants.put("one-more", policy("192.0.2.0/24", Tier.LARGE)));
        assertTrue(full.getMessage().contains("16384 prefixes"), full.getMessage());
        assertEquals(capacity, store.entries().size(), "nothing written");
        assertFalse(tenants.put("10.0.0.0_24", policy("10.0.0.0/24", Tier.LARGE)), "an existing prefix's floor changes");
        assertEquals(Optional.of(Tier.LARGE), store.floorFor(0x0A000001));
        assertTrue(tenants.delete("10.0.1.0_24"));
        assertTrue(tenants.put("one-more", policy("192.0.2.0/24", Tier.LARGE)), "room again after a delete");
    }

    @Test
    void longestPrefixWins() {
        tenants.put("wide", policy("10.0.0.0/8", Tier.SMALL));
        tenants.put("narrow", policy("10.1.2.0/24", Tier.LARGE));
        assertEquals(Optional.of(Tier.LARGE), store.floorFor(0x0A010203));
        assertEquals(Optional.of(Tier.SMALL), store.floorFor(0x0A020203));
        assertEquals(Optional.empty(), store.floorFor(0x0B000001));
    }

    @Test
    void prefixesParseStrictly() {
        assertEquals("0.0.0.0/0", Ipv4Prefix.parse("0.0.0.0/0").toString());
        assertEquals("255.255.255.255/32", Ipv4Prefix.parse("255.255.255.255/32").toString());
        for (String bad : new String[] {"10.0.0.1/8", "10.0.0/8", "10.0.0.0", "10.0.0.0/", "1.2.3.4/33", "a.b.c.d/8", "01234.0.0.0/8"}) {
            assertThrows(IllegalArgumentException.class, () -> Ipv4Prefix.parse(bad), bad);
        }
    }

    @Test
    void aConditionalWriteHappensOnlyWhileTheTenantIsAsExpected() {
        TenantPolicy small = policy("10.0.0.0/8", Tier.SMALL);
        TenantPolicy large = policy("10.0.0.0/8", Tier.LARGE);
        assertTrue(tenants.replace("acme", Optional.empty(), Optional.of(small)), "created: it did not exist");
        assertFalse(tenants.replace("acme", Optional.empty(), Optional.of(large)), "it exists now");
        assertFalse(tenants.replace("acme", Optional.of(large), Optional.empty()), "not deleted: it is small, not large");
        assertEquals(Map.of("acme", small), tenants.list(), "the refused writes changed nothing");
        assertTrue(tenants.replace("acme", Optional.of(small), Optional.of(large)));
        assertTrue(tenants.replace("acme", Optional.of(large), Optional.empty()));
        assertEquals(Map.of(), tenants.list());
    }
}
