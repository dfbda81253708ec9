package io.nexuscore.dataplane;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.AbstractScheduledEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.TimeUnit;

/**
 * The header-read timeout of the inference listener: a connection must deliver a complete request
 * head within {@code headerTimeoutMs} of its accept, and of its previous answer (keep-alive); else it
 * is closed. (The listener runs with h2c off, so Vert.x reports a connection at accept, not after
 * protocol detection on its first bytes.) Traffic does not reset it, so a client trickling a head byte by byte (which
 * keeps an idle timeout quiet) is closed all the same.
 *
 * <p>One {@link HeadClock} per connection, on the connection's own Netty event loop, re-armed
 * lazily as Netty's IdleStateHandler does: a request only moves the clock's due time, and the one
 * task a connection has pending, when it fires, closes the connection or sleeps until the current
 * due time. Scheduling and cancelling a task per keep-alive request, as before, cost a priority-queue
 * insert and removal each (~1.5 % of the event loop's samples).
 */
final class HeadTimeouts {

    static final AttributeKey<HeadClock> CLOCK = AttributeKey.valueOf("nexuscore.headTimeout");

    private final long timeoutNanos;

    HeadTimeouts(long timeoutMs) {
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    }

    void accepted(HttpConnection connection) {
        accepted(ConnectionInspector.channelOf(connection));
    }

    /**
     * Starts the connection's clock and, once per connection, stops it when the connection closes
     * (one close listener per connection, never one per request: that grew without bound once).
     */
    void accepted(Channel channel) {
        if (channel == null) {
            return;
        }
        HeadClock clock = new HeadClock(channel, timeoutNanos);
        channel.attr(CLOCK).set(clock);
        channel.closeFuture().addListener(f -> clock.stop());
        clock.arm();
    }

    /** A head arrived: stop the clock until this request's answer (whatever it is) has gone out. */
    void headReceived(HttpServerRequest request) {
        Channel channel = ConnectionInspector.channelOf(request.connection());
        disarm(channel);
        if (channel != null) {
            request.response().endHandler(v -> arm(channel));
        }
    }

    void arm(Channel channel) {
        HeadClock clock = channel == null ? null : channel.attr(CLOCK).get();
        if (clock != null) {
            clock.arm();
        }
    }

    void disarm(Channel channel) {
        HeadClock clock = channel == null ? null : channel.attr(CLOCK).get();
        if (clock != null) {
            clock.disarm();
        }
    }

    /**
     * One connection's clock. Confined to the connection's event loop (accept, heads and answers
     * all happen there), so its fields need no synchronization. Time is the event loop's ticker, so
     * a test's embedded loop can move it.
     */
    static final class HeadClock {
        private static final long DISARMED = Long.MIN_VALUE;

        private final Channel channel;
        private final long timeoutNanos;
        private final Ticker ticker;
        /** When the connection is closed unless a head arrives first; DISARMED while one is served. */
        private long dueNanos = DISARMED;
        private ScheduledFuture<?> pending;
        private boolean stopped;

        HeadClock(Channel channel, long timeoutNanos) {
            this.channel = channel;
            this.timeoutNanos = timeoutNanos;
            this.ticker = channel.eventLoop() instanceof AbstractScheduledEventExecutor loop
                    ? loop.ticker() : Ticker.systemTicker();
        }

        void arm() {
            if (stopped || !channel.isActive()) {
                return;
            }
            dueNanos = ticker.nanoTime() + timeoutNanos;
            if (pending == null) {
                schedule(timeoutNanos);
            }
        }

        void disarm() {
            dueNanos = DISARMED;
        }

        /** The task pending for this connection, if any (tests). */
        ScheduledFuture<?> pending() {
            return pending;
        }

        void stop() {
            stopped = true;
            if (pending != null) {
                pending.cancel(false);
                pending = null;
            }
        }

        private void schedule(long delayNanos) {
            pending = channel.eventLoop().schedule(this::fire, delayNanos, TimeUnit.NANOSECONDS);
        }

        /** The pending task: close if the due time passed, sleep until it if it moved, idle while disarmed. */
        private void fire() {
            pending = null;
            if (stopped || dueNanos == DISARMED) {
                return; // a request is being served: its answer arms (and schedules) again
            }
            long left = dueNanos - ticker.nanoTime();
            if (left <= 0) {
                channel.close();
            } else {
                schedule(left);
            }
        }
    }
}
