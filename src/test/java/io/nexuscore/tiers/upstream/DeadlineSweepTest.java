package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The upstream deadline sweep on a real Vert.x timer: what passes, what is dropped, what survives a broken handler. */
class DeadlineSweepTest {

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() {
        vertx.close().await();
    }

    /** A deadline that counts its {@code passed} calls and opens a latch on the first. */
    private static class Watched implements DeadlineSweep.Deadline {
        final long due;
        final AtomicInteger passes = new AtomicInteger();
        final CountDownLatch passedLatch = new CountDownLatch(1);
        volatile boolean settled;
        volatile long passedAt;

        Watched(long inMs) {
            this.due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(inMs);
        }

        @Override
        public long dueNanos() {
            return due;
        }

        @Override
        public boolean settled() {
            return settled;
        }

        @Override
        public void passed() {
            passedAt = System.nanoTime();
            passes.incrementAndGet();
            passedLatch.countDown();
        }
    }

    @Test
    void aDeadlineThatPassesIsReportedOnceAndNotBeforeItWasDue() throws Exception {
        DeadlineSweep sweep = new DeadlineSweep(vertx, 2);
        Watched w = new Watched(30);
        sweep.watch(w);
        assertTrue(w.passedLatch.await(10, TimeUnit.SECONDS), "the passed deadline was reported");
        assertTrue(w.passedAt - w.due >= 0, "reported after its due time, never before");
        awaitDrained(sweep);
        assertEquals(1, w.passes.get(), "reported exactly once");
    }

    @Test
    void aSettledDeadlineIsDroppedWithoutBeingReported() throws Exception {
        DeadlineSweep sweep = new DeadlineSweep(vertx, 2);
        Watched settled = new Watched(20);
        Watched open = new Watched(40);
        sweep.watch(settled);
        sweep.watch(open);
        settled.settled = true;
        assertTrue(open.passedLatch.await(10, TimeUnit.SECONDS));
        awaitDrained(sweep);
        assertEquals(0, settled.passes.get(), "an answered exchange's deadline never fires");
    }

    @Test
    void aHandlerThatThrowsDoesNotStopTheSweep() throws Exception {
        DeadlineSweep sweep = new DeadlineSweep(vertx, 2);
        sweep.watch(new Watched(5) {
            @Override
            public void passed() {
                throw new IllegalStateException("broken handler");
            }
        });
        Watched same = new Watched(5);
        sweep.watch(same);
        assertTrue(same.passedLatch.await(10, TimeUnit.SECONDS), "the other deadline of that sweep still fired");
        Watched later = new Watched(20);
        sweep.watch(later);
        assertTrue(later.passedLatch.await(10, TimeUnit.SECONDS), "and the sweep goes on afterwards");
    }

    @Test
    void deadlinesWatchedFromManyThreadsAllFire() throws Exception {
        DeadlineSweep sweep = new DeadlineSweep(vertx, 1);
        int threads = 4;
        int perThread = 250;
        CountDownLatch all = new CountDownLatch(threads * perThread);
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    sweep.watch(new Watched(i % 7) {
                        @Override
                        public void passed() {
                            all.countDown();
                        }
                    });
                }
            });
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        assertTrue(all.await(20, TimeUnit.SECONDS), "deadlines never reported: " + all.getCount());
        awaitDrained(sweep);
    }

    @Test
    void thePeriodIsATenthOfTheShortestTimeoutWithin1To25Ms() {
        assertEquals(25, DeadlineSweep.periodFor(30_000, 10_000));
        assertEquals(10, DeadlineSweep.periodFor(30_000, 100));
        assertEquals(1, DeadlineSweep.periodFor(5, 30_000));
        assertThrows(IllegalArgumentException.class, () -> new DeadlineSweep(vertx, 0));
    }

    private static void awaitDrained(DeadlineSweep sweep) throws InterruptedException {
        for (int i = 0; i < 1000 && sweep.watchedCount() > 0; i++) {
            Thread.sleep(5);
        }
        assertEquals(0, sweep.watchedCount(), "every deadline left the queue");
    }
}
