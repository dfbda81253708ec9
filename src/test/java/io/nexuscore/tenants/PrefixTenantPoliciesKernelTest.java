package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.classify.Tier;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Tenant policies over the real pinned tenant_policy map: its capacity is user space's, and a full map says so. */
class PrefixTenantPoliciesKernelTest {

    private KernelDataPath kernel;

    @BeforeEach
    void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
    }

    @AfterEach
    void unload() {
        KernelTestSupport.dispose(kernel);
    }

    @Test
    void aFullMapRefusesTheNextPrefixAsFullNotAsAnErrno() {
        KernelPrefixFloors store = new KernelPrefixFloors(kernel.tenantPolicy());
        assertEquals(PrefixFloors.USER_SPACE_CAPACITY, store.capacity(), "tenant_policy's max_entries is user space's limit");
        for (int i = 0; i < store.capacity(); i++) {
            store.put(Ipv4Prefix.covering(0x0A000000 | i << 8, 24), Tier.SMALL);
        }
        PrefixTenantPolicies tenants = new PrefixTenantPolicies(store);
        assertThrows(TenantPolicies.Full.class,
                () -> tenants.put("one-more", new TenantPolicy(Ipv4Prefix.parse("192.0.2.0/24"), Tier.LARGE)));
        assertEquals(store.capacity(), store.entries().size());
    }
}
