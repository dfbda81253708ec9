package io.nexuscore.kernel;

import static io.nexuscore.kernel.maps.SharedStructs.LIMIT_WINDOW_NS;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_COUNTED;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_REQUESTS;
import static io.nexuscore.kernel.maps.SharedStructs.VERDICT_F_OVER_TOKENS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.kernel.maps.TenantWindows;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/** The anchored-window rule of nexus_limits.bpf.h on memory of the map's layout, with a hand-driven clock. */
class TenantWindowsTest {

    private final TenantWindows windows = TenantWindows.over(ByteBuffer.allocateDirect(
            SharedStructs.TENANT_WINDOW.size() * SharedStructs.TENANT_LIMIT_SLOTS).order(ByteOrder.LITTLE_ENDIAN));
    private static final long T0 = 5_000_000_000L;

    @Test
    void aWindowIsAnchoredAtTheFirstRequestAndEndsSixtySecondsLater() {
        TenantWindows.Limit limit = new TenantWindows.Limit(1, 2, 0, 0, 0);
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, T0, 0));
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, T0 + 30_000_000_000L, 0));
        assertEquals(VERDICT_F_OVER_REQUESTS, windows.admit(limit, T0 + LIMIT_WINDOW_NS - 1, 0), "the window's last ns");
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, T0 + LIMIT_WINDOW_NS, 0), "a new window opens at its end");
        assertEquals(T0 + LIMIT_WINDOW_NS, windows.requestsStart(1));
        assertEquals(1, windows.requests(1, T0 + LIMIT_WINDOW_NS));
    }

    @Test
    void tokensAdmitTheFirstRequestOfAWindowWhateverItsChargeUnderTheWholeLimit() {
        TenantWindows.Limit limit = new TenantWindows.Limit(2, 0, 100, 1_000, 0);
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, T0, 300), "a share smaller than one request still admits one");
        assertEquals(VERDICT_F_OVER_TOKENS, windows.admit(limit, T0 + 1, 1));
        windows.settleTokens(2, T0, -300);
        assertEquals(0, windows.tokens(2, T0 + 2));
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, T0 + 3, 100), "settled back to zero: 100 fits exactly");
        windows.settleTokens(2, T0 + 7, 50);
        assertEquals(100, windows.tokens(2, T0 + 4), "a settle for another window changes nothing");
    }

    @Test
    void aRequestTakenBackFreesItsPlace() {
        TenantWindows.Limit limit = new TenantWindows.Limit(3, 1, 0, 0, 0);
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, T0, 0));
        windows.uncountRequest(3, T0);
        assertEquals(VERDICT_F_COUNTED, windows.admit(limit, T0 + 1, 0));
    }
}
