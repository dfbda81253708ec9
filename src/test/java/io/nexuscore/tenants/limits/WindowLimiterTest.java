package io.nexuscore.tenants.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.tenants.limits.LimitCounter.Admitted;
import io.nexuscore.tenants.limits.LimitCounter.Reason;
import io.nexuscore.tenants.limits.LimitCounter.Refused;
import io.nexuscore.tenants.limits.LimitCounter.Verdict;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The algorithm of docs/tenant-limits.md on a clock the test moves. */
class WindowLimiterTest {

    private static final long SECOND = 1_000_000_000L;
    /** 2026-12-07T23:59:00Z: a day boundary a minute away. */
    private static final long WALL = 1_796_687_940_000L;

    static final class TestClock implements LimitClock {
        long nanos = 5 * SECOND;
        long millis = WALL;

        void advance(long n) {
            nanos += n;
            millis += n / 1_000_000;
        }

        @Override
        public long monotonicNanos() {
            return nanos;
        }

        @Override
        public long epochMillis() {
            return millis;
        }
    }

    private final TestClock clock = new TestClock();
    private final WindowLimiter limiter = new WindowLimiter(clock);

    private Verdict admit(String tenant, TenantLimits limits, long charge) {
        return limiter.admit(tenant, limits, limits, charge);
    }

    @Test
    void requestsPerMinuteAdmitsTheLimitThenRefusesUntilTheAnchoredWindowEnds() {
        TenantLimits rpm = new TenantLimits(3, 0, 0, 0);
        assertInstanceOf(Admitted.class, admit("a", rpm, 0));
        clock.advance(10 * SECOND);
        assertInstanceOf(Admitted.class, admit("a", rpm, 0));
        Admitted third = (Admitted) admit("a", rpm, 0);
        assertEquals(0, third.state().requestsRemaining());
        assertEquals(50 * SECOND, third.state().requestsResetNanos(), "the window is anchored at the first request");
        Refused refused = (Refused) admit("a", rpm, 0);
        assertEquals(Reason.REQUESTS_PER_MINUTE, refused.reason());
        assertEquals(50, refused.retryAfterSeconds());
        clock.advance(49 * SECOND + 1);
        Refused last = (Refused) admit("a", rpm, 0);
        assertEquals(1, last.retryAfterSeconds(), "a part of a second left rounds up to 1");
        clock.advance(SECOND - 1);
        Admitted next = (Admitted) admit("a", rpm, 0);
        assertEquals(2, next.state().requestsRemaining(), "at the window's end a new window starts with this request");
        assertEquals(60 * SECOND, next.state().requestsResetNanos());
    }

    @Test
    void aRefusalCountsNothingAndStartsNoWindow() {
        TenantLimits limits = new TenantLimits(1, 100, 0, 0);
        assertInstanceOf(Admitted.class, admit("a", limits, 10));
        for (int i = 0; i < 5; i++) {
            assertInstanceOf(Refused.class, admit("a", limits, 10));
        }
        clock.advance(60 * SECOND);
        Admitted after = (Admitted) admit("a", limits, 10);
        assertEquals(90, after.state().tokensRemaining(), "only the admitted request's charge is in the new window");
    }

    @Test
    void tokensAreChargedAtAdmissionAndSettledByRealUsageInTheSameWindowOnly() {
        TenantLimits tpm = new TenantLimits(0, 1000, 0, 0);
        Admitted first = (Admitted) admit("a", tpm, 600);
        Refused refused = (Refused) admit("a", tpm, 600);
        assertEquals(Reason.TOKENS_PER_MINUTE, refused.reason());
        assertTrue(refused.retryable());
        first.admission().settle(100); // the answer used 100: 500 back
        Admitted second = (Admitted) admit("a", tpm, 600);
        assertEquals(300, second.state().tokensRemaining());
        clock.advance(60 * SECOND);
        Admitted third = (Admitted) admit("a", tpm, 900);
        second.admission().settle(0); // its window ended: nothing to give back in this one
        assertEquals(100, ((Admitted) admit("a", new TenantLimits(0, 1000, 0, 0), 0)).state().tokensRemaining());
        third.admission().settle(900);
    }

    @Test
    void settlingUpwardsCountsTheExcessAndOnlyTheFirstSettleCounts() {
        TenantLimits tpm = new TenantLimits(0, 1000, 0, 0);
        Admitted a = (Admitted) admit("a", tpm, 100);
        a.admission().settle(700);
        a.admission().settle(0);
        assertEquals(300, ((Admitted) admit("a", tpm, 0)).state().tokensRemaining());
    }

    @Test
    void aRequestAboveTheWholeLimitIsRefusedForGoodButAShareSmallerThanOneRequestTakesItIntoAnEmptyWindow() {
        TenantLimits whole = new TenantLimits(0, 900, 0, 0);
        Refused never = (Refused) admit("a", whole, 901);
        assertFalse(never.retryable());
        assertTrue(never.detail().contains("never"), never.detail());
        TenantLimits share = whole.share(3); // 300
        assertInstanceOf(Admitted.class, limiter.admit("b", whole, share, 500));
        assertInstanceOf(Refused.class, limiter.admit("b", whole, share, 1));
    }

    @Test
    void concurrencyIsHeldUntilReleasedAndReleasedOnlyOnce() {
        TenantLimits two = new TenantLimits(0, 0, 2, 0);
        Admitted a = (Admitted) admit("a", two, 0);
        Admitted b = (Admitted) admit("a", two, 0);
        Refused refused = (Refused) admit("a", two, 0);
        assertEquals(Reason.MAX_CONCURRENT, refused.reason());
        assertEquals(1, refused.retryAfterSeconds());
        a.admission().release();
        a.admission().release(); // a second release must not free a slot b still holds
        assertInstanceOf(Admitted.class, admit("a", two, 0));
        assertInstanceOf(Refused.class, admit("a", two, 0));
        b.admission().release();
        assertInstanceOf(Admitted.class, admit("a", two, 0));
    }

    @Test
    void tokensPerDayFollowTheUtcCalendarDay() {
        TenantLimits day = new TenantLimits(0, 0, 0, 1000);
        assertInstanceOf(Admitted.class, admit("a", day, 800));
        Refused refused = (Refused) admit("a", day, 300);
        assertEquals(Reason.TOKENS_PER_DAY, refused.reason());
        assertEquals(60, refused.retryAfterSeconds(), "until 00:00 UTC");
        clock.advance(60 * SECOND);
        assertInstanceOf(Admitted.class, admit("a", day, 300), "a new UTC day");
    }

    @Test
    void tenantsAreCountedApart() {
        TenantLimits one = new TenantLimits(1, 0, 0, 0);
        assertInstanceOf(Admitted.class, admit("a", one, 0));
        assertInstanceOf(Refused.class, admit("a", one, 0));
        assertInstanceOf(Admitted.class, admit("b", one, 0));
    }

    @Test
    void idleTenantsAreSweptPastTheBound() {
        TenantLimits one = new TenantLimits(1, 0, 0, 0);
        Admitted inFlight = (Admitted) admit("busy", one, 0);
        for (int i = 1; i < WindowLimiter.SWEEP_ABOVE; i++) {
            ((Admitted) admit("t" + i, one, 0)).admission().release();
        }
        clock.advance(61 * SECOND);
        admit("late", one, 0);
        assertEquals(2, limiter.tenantsHeld(), "the new tenant and the one with a request in flight");
        inFlight.admission().release();
    }

    @Test
    void parallelAdmissionsNeverPassTheLimit() throws Exception {
        TenantLimits limits = new TenantLimits(500, 0, 0, 0);
        List<Thread> threads = new ArrayList<>();
        java.util.concurrent.atomic.AtomicInteger admitted = new java.util.concurrent.atomic.AtomicInteger();
        for (int t = 0; t < 4; t++) {
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 400; i++) {
                    if (limiter.admit("a", limits, limits, 0) instanceof Admitted) {
                        admitted.incrementAndGet();
                    }
                }
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        assertEquals(500, admitted.get());
    }
}
