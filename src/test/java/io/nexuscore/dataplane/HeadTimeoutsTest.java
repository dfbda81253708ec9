package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.ScheduledFuture;
import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The head timeout on a real Netty channel (embedded: its clock and tasks run when the test says). */
class HeadTimeoutsTest {

    @Test
    void anIdleConnectionIsClosedAtTheTimeoutAndAnAnsweredOneRearms() {
        HeadTimeouts timeouts = new HeadTimeouts(1_000);
        EmbeddedChannel channel = new EmbeddedChannel();
        timeouts.accepted(channel);
        channel.advanceTimeBy(999, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertTrue(channel.isOpen(), "closed before its timeout");

        timeouts.disarm(channel); // a head arrived: no clock while the request is served
        channel.advanceTimeBy(5_000, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertTrue(channel.isOpen(), "closed while serving a request");

        timeouts.arm(channel); // its answer went out: the next head has the full period again
        channel.advanceTimeBy(1_001, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertFalse(channel.isOpen(), "an idle keep-alive connection must be closed");
    }

    @Test
    void keepAliveRequestsAddNothingThatLivesAsLongAsTheConnection() throws Exception {
        HeadTimeouts timeouts = new HeadTimeouts(60_000);
        EmbeddedChannel channel = new EmbeddedChannel();
        timeouts.accepted(channel);
        for (int request = 0; request < 10_000; request++) {
            timeouts.disarm(channel);
            timeouts.arm(channel);
        }
        // One close listener (registered at accept), not one per request.
        DefaultPromise<?> closeFuture = (DefaultPromise<?>) channel.closeFuture();
        assertNotNull(field(closeFuture, "listener"), "the close listener registered at accept");
        assertNull(field(closeFuture, "listeners"), "more than one close listener: one was added per request");
        channel.close();
        channel.advanceTimeBy(60_001, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks(); // the pending timeout was cancelled at close: nothing runs, nothing throws
        assertFalse(channel.isOpen());
    }

    @Test
    void aHeadAnsweredJustBeforeTheTimeoutGetsTheFullPeriodFromItsAnswer() {
        HeadTimeouts timeouts = new HeadTimeouts(1_000);
        EmbeddedChannel channel = new EmbeddedChannel();
        timeouts.accepted(channel);
        channel.advanceTimeBy(900, TimeUnit.MILLISECONDS);
        timeouts.disarm(channel); // a head at 900 ms, answered at once: due at 1,900 ms now
        timeouts.arm(channel);
        channel.advanceTimeBy(200, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks(); // the task set at accept fires at 1,000 ms and sleeps on
        assertTrue(channel.isOpen(), "closed by the timeout of the previous head");
        channel.advanceTimeBy(799, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertTrue(channel.isOpen(), "closed before its answer's full period");
        channel.advanceTimeBy(2, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        assertFalse(channel.isOpen(), "idle a full period after its answer, yet open");
    }

    @Test
    void keepAliveRequestsScheduleNoTaskOfTheirOwn() {
        HeadTimeouts timeouts = new HeadTimeouts(60_000);
        EmbeddedChannel channel = new EmbeddedChannel();
        timeouts.accepted(channel);
        ScheduledFuture<?> atAccept = channel.attr(HeadTimeouts.CLOCK).get().pending();
        assertNotNull(atAccept);
        for (int request = 0; request < 1_000; request++) {
            timeouts.disarm(channel);
            timeouts.arm(channel);
        }
        assertSame(atAccept, channel.attr(HeadTimeouts.CLOCK).get().pending(), "a request scheduled a task of its own");
        assertFalse(atAccept.isCancelled());
        channel.close();
        assertTrue(atAccept.isCancelled(), "the pending task outlived its connection");
    }

    private static Object field(Object target, String name) throws Exception {
        Field f = DefaultPromise.class.getDeclaredField(name); // Netty 4.2's DefaultPromise: listener, then listeners
        f.setAccessible(true);
        return f.get(target);
    }
}
