package io.nexuscore.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.VerdictSource;
import java.time.Duration;
import java.util.Optional;

/**
 * The data plane's verdict read as it pays it (the mmap'ed slot, or the bpf(2) lookup of the
 * routing_decisions hash map on a slot miss): {@code nexus_verdict_read_seconds{result}}, a
 * histogram with buckets around the seed's 150 ns target and 500 ns alert. Two System.nanoTime()
 * calls and a timer update per request (~50 ns here).
 */
public final class TimedVerdicts implements VerdictSource {

    private static final Duration[] BUCKETS = {
        Duration.ofNanos(50), Duration.ofNanos(100), Duration.ofNanos(150), Duration.ofNanos(200), Duration.ofNanos(300),
        Duration.ofNanos(500), Duration.ofNanos(1_000), Duration.ofNanos(2_000), Duration.ofNanos(5_000),
        Duration.ofNanos(10_000), Duration.ofNanos(100_000), Duration.ofMillis(1)};

    private final VerdictSource source;
    private final Timer hit;
    private final Timer miss;

    public TimedVerdicts(VerdictSource source, MeterRegistry registry) {
        this.source = source;
        this.hit = timer(registry, "hit");
        this.miss = timer(registry, "miss");
    }

    private static Timer timer(MeterRegistry registry, String result) {
        return Timer.builder("nexus.verdict.read")
                .description("Time the data plane takes to read a connection's kernel verdict (hit: a verdict found)")
                .tag("result", result).serviceLevelObjectives(BUCKETS).register(registry);
    }

    @Override
    public Optional<KernelVerdict> lookup(FourTuple connection) {
        long start = System.nanoTime();
        Optional<KernelVerdict> verdict = source.lookup(connection);
        (verdict.isPresent() ? hit : miss).record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        return verdict;
    }

    /**
     * The syscall-free slot read the data plane tries first, on its event loop. (Without this
     * override the interface's default answers "not known this way" and every request would take the
     * blocking path.) Only found verdicts are timed: an empty answer sends the caller to
     * {@link #lookup}, which times the read it then pays.
     */
    @Override
    public Optional<KernelVerdict> lookupInMemory(FourTuple connection) {
        long start = System.nanoTime();
        Optional<KernelVerdict> verdict = source.lookupInMemory(connection);
        if (verdict.isPresent()) {
            hit.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        }
        return verdict;
    }
}
