package io.nexuscore.tenants.limits;

import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.maps.TenantWindows;

/** Counts in a slot as XDP would (its rule, its memory), for tests that stand in for a packet. */
final class TenantWindowsFixture {

    private TenantWindowsFixture() {
    }

    static void count(KernelDataPath kernel, int slot, long charge) {
        TenantWindows.Limit counting = new TenantWindows.Limit(slot, 1_000_000, 1_000_000_000L, 0, 0);
        kernel.tenantLimits().windows().admit(counting, System.nanoTime(), charge);
    }
}
