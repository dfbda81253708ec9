/**
 * The seed's production metrics that no other feature owns (issue 18): in-kernel latency
 * histograms of the XDP program and the TC chain and the chain's observed tail-call depth, the TLB
 * flush rate of the router's process (nexus_tlb.bpf.o on tlb:tlb_flush), page faults per tier
 * pool, the data plane's verdict-read time, and per-tenant series with bounded cardinality.
 * Kernel figures are read off the event loop by {@link io.nexuscore.metrics.MetricsRefresher} and
 * rendered from the last reading, so a scrape never makes a syscall. Alerting rules for all of
 * them: docker/alerts.yaml. The registry's clock ({@link io.nexuscore.metrics.CoarseWallClock})
 * lives here too.
 */
package io.nexuscore.metrics;
