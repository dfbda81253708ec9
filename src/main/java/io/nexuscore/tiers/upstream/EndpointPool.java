package io.nexuscore.tiers.upstream;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Picks the endpoint for the next attempt: an ejected endpoint whose rest is over gets the request
 * as its half-open probe (so re-admission does not wait for idle time), else the admitted endpoint
 * with the fewest outstanding requests; ties rotate, so equal endpoints share the load.
 */
final class EndpointPool {

    private final List<UpstreamEndpoint> endpoints;
    private final AtomicInteger rotation = new AtomicInteger();

    EndpointPool(List<URI> baseUrls) {
        List<UpstreamEndpoint> list = new ArrayList<>();
        for (int i = 0; i < baseUrls.size(); i++) {
            list.add(new UpstreamEndpoint(i, baseUrls.get(i)));
        }
        this.endpoints = List.copyOf(list);
    }

    List<UpstreamEndpoint> endpoints() {
        return endpoints;
    }

    /** An acquired endpoint not in {@code tried}; empty when every other endpoint is ejected. */
    Optional<UpstreamEndpoint> acquire(Set<UpstreamEndpoint> tried, long nowNanos) {
        for (UpstreamEndpoint e : endpoints) {
            if (!tried.contains(e) && e.acquireProbe(nowNanos)) {
                return Optional.of(e);
            }
        }
        int n = endpoints.size();
        int start = Math.floorMod(rotation.getAndIncrement(), n);
        for (int attempt = 0; attempt < n; attempt++) {
            UpstreamEndpoint best = null;
            int fewest = Integer.MAX_VALUE;
            for (int i = 0; i < n; i++) {
                UpstreamEndpoint e = endpoints.get((start + i) % n);
                if (tried.contains(e) || e.health() != UpstreamEndpoint.Health.UP) {
                    continue;
                }
                int outstanding = e.outstanding();
                if (outstanding < fewest) {
                    best = e;
                    fewest = outstanding;
                }
            }
            if (best == null) {
                return Optional.empty();
            }
            if (best.acquireIfUp()) {
                return Optional.of(best);
            }
            // Ejected between the scan and the acquire: scan again.
        }
        return Optional.empty();
    }
}
