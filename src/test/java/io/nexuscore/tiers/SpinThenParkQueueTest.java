package io.nexuscore.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SpinThenParkQueueTest {

    /** Workers that only an offer (or a fellow worker) can wake: they wait an hour otherwise. */
    private static List<Thread> workers(int n, SpinThenParkQueue<Runnable> queue) {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    Runnable job = queue.take(1, TimeUnit.HOURS);
                    if (job != null) {
                        job.run();
                    }
                }
            }, "worker-" + i);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        return threads;
    }

    /** Every job is taken exactly once, across racing producers and consumers. */
    @Test
    void everyJobRunsExactlyOnce() throws Exception {
        SpinThenParkQueue<Runnable> queue = new SpinThenParkQueue<>(64, 20_000);
        int jobs = 20_000;
        Set<Integer> ran = ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(jobs);
        List<Thread> threads = workers(4, queue);
        Thread[] producers = new Thread[2];
        for (int p = 0; p < producers.length; p++) {
            int base = p * jobs / 2;
            producers[p] = new Thread(() -> {
                for (int i = base; i < base + jobs / 2; i++) {
                    int id = i;
                    while (!queue.offer(() -> {
                        assertTrue(ran.add(id), "job " + id + " ran twice");
                        done.countDown();
                    })) {
                        Thread.onSpinWait();
                    }
                }
            });
            producers[p].start();
        }
        assertTrue(done.await(60, TimeUnit.SECONDS), done.getCount() + " jobs never ran");
        assertEquals(jobs, ran.size());
        threads.forEach(Thread::interrupt);
    }

    /**
     * A burst fans out: three jobs that each wait for the other two can only finish when three
     * workers hold them at once, i.e. when the offers and the wake chain woke every parked worker.
     */
    @Test
    void aBurstWakesEnoughWorkers() throws Exception {
        SpinThenParkQueue<Runnable> queue = new SpinThenParkQueue<>(8, 0);
        List<Thread> threads = workers(3, queue);
        for (Thread t : threads) { // all three parked
            while (t.getState() != Thread.State.TIMED_WAITING) {
                Thread.sleep(1);
            }
        }
        CountDownLatch together = new CountDownLatch(3);
        CountDownLatch finished = new CountDownLatch(3);
        for (int i = 0; i < 3; i++) {
            assertTrue(queue.offer(() -> {
                together.countDown();
                try {
                    if (together.await(30, TimeUnit.SECONDS)) {
                        finished.countDown();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        assertTrue(finished.await(30, TimeUnit.SECONDS), "the three jobs never ran at the same time");
        threads.forEach(Thread::interrupt);
    }

    @Test
    void offerRefusesPastCapacity() {
        SpinThenParkQueue<Runnable> queue = new SpinThenParkQueue<>(1, 0);
        assertTrue(queue.offer(() -> { }));
        assertFalse(queue.offer(() -> { }));
        assertEquals(1, queue.size());
    }

    /** A take that may not spin parks at once; one after a job spins, and then finds the job offered meanwhile. */
    @Test
    void onlyATakeAfterAJobSpins() {
        SpinThenParkQueue<String> queue = new SpinThenParkQueue<>(4, TimeUnit.MILLISECONDS.toNanos(1));
        for (int i = 0; i < 3; i++) {
            assertNull(queue.take(1, TimeUnit.MILLISECONDS, false));
        }
        assertEquals(0, queue.spins());
        assertNull(queue.take(1, TimeUnit.MILLISECONDS, true));
        assertEquals(1, queue.spins());
        assertTrue(queue.offer("job"));
        assertEquals("job", queue.take(1, TimeUnit.MILLISECONDS, false));
        assertEquals(1, queue.spins(), "a job already waiting is taken without a spin");
    }
}
