package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VertxExtension.class)
class IdleWatchdogTest {

    @Test
    void chunksKeepItQuietAndSilenceFiresItOnce(Vertx vertx) throws Exception {
        AtomicInteger fired = new AtomicInteger();
        CompletableFuture<Integer> chunksBeforeFiring = new CompletableFuture<>();
        AtomicInteger chunks = new AtomicInteger();
        Context loop = vertx.getOrCreateContext();
        loop.runOnContext(v -> {
            IdleWatchdog dog = new IdleWatchdog(vertx, 100, () -> {
                fired.incrementAndGet();
                chunksBeforeFiring.complete(chunks.get());
            });
            dog.start();
            // A chunk every 20 ms for ten chunks (200 ms, twice the idle period), then silence.
            vertx.setPeriodic(20, id -> {
                if (chunks.incrementAndGet() >= 10) {
                    vertx.cancelTimer(id);
                }
                dog.touch();
            });
        });
        assertEquals(10, chunksBeforeFiring.get(10, TimeUnit.SECONDS), "fired while chunks were still coming");
        Thread.sleep(300); // several more periods: it must not fire again
        assertEquals(1, fired.get());
    }

    @Test
    void stoppedItNeverFiresAndHoldsNoTimer(Vertx vertx) throws Exception {
        AtomicInteger fired = new AtomicInteger();
        IdleWatchdog dog = new IdleWatchdog(vertx, 50, fired::incrementAndGet);
        CompletableFuture<Void> started = new CompletableFuture<>();
        vertx.getOrCreateContext().runOnContext(v -> {
            dog.start();
            dog.stop();
            started.complete(null);
        });
        started.get(5, TimeUnit.SECONDS);
        Thread.sleep(250);
        assertEquals(0, fired.get());
        assertTrue(dog.stoppedAndDisarmed(vertx), "the answer's end must take the timer (and what it holds) away");
    }
}
