package io.nexuscore.tiers.upstream;

import io.vertx.core.Context;
import io.vertx.core.http.HttpClientAgent;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * One upstream HTTP client per event loop, so a request, its pooled connection and every callback
 * of the exchange stay on the thread that accepted the request.
 *
 * <p>Why: a single shared client pools connections created on every loop and hands the most
 * recently used free one to whoever asks (Vert.x's LIFO selector), so a request accepted on loop A
 * often writes through a connection owned by loop B: each step of the exchange then crosses
 * threads twice (a task queued on B, the answer queued back on A). With a client per loop the
 * pool only ever holds connections of the caller's loop.
 *
 * <p>There are at most {@code slots} clients (the tier's connection budget divided between them):
 * with fewer slots than loops, loops share a client in turn, so a one-connection tier keeps one
 * pool and its exact limits. Callers off any event loop (tests, tools) use the first slot. A
 * client opens no connection before its first request.
 */
final class LoopClients implements AutoCloseable {

    private final HttpClientAgent[] bySlot;
    private final ConcurrentHashMap<Thread, HttpClientAgent> byLoop = new ConcurrentHashMap<>();
    private int nextSlot;
    private boolean closed;

    /**
     * Makes every slot's client now, off any event loop: a client made on a verticle's context
     * would be closed with that verticle, not with the tier.
     */
    LoopClients(Supplier<HttpClientAgent> factory, int slots) {
        if (slots < 1) {
            throw new IllegalArgumentException("slots must be at least 1, got " + slots);
        }
        this.bySlot = new HttpClientAgent[slots];
        for (int i = 0; i < slots; i++) {
            bySlot[i] = factory.get();
        }
    }

    /** The calling event loop's client (off any loop: the first slot's). */
    HttpClientAgent current() {
        if (!Context.isOnEventLoopThread()) {
            return slot(0);
        }
        Thread loop = Thread.currentThread();
        HttpClientAgent client = byLoop.get(loop);
        return client != null ? client : byLoop.computeIfAbsent(loop, l -> nextLoopsClient());
    }

    private synchronized HttpClientAgent nextLoopsClient() {
        HttpClientAgent client = slot(nextSlot);
        nextSlot = (nextSlot + 1) % bySlot.length;
        return client;
    }

    private synchronized HttpClientAgent slot(int index) {
        if (closed) {
            throw new IllegalStateException("upstream clients closed");
        }
        return bySlot[index];
    }

    @Override
    public synchronized void close() {
        closed = true;
        byLoop.clear();
        for (HttpClientAgent client : bySlot) {
            client.close();
        }
    }
}
