package io.nexuscore;

import io.nexuscore.adapt.AdaptiveSettings;
import io.nexuscore.adapt.AdaptiveStatus;
import io.nexuscore.adapt.Recalibration;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nexuscore.bpf.KernelDataPath;
import io.nexuscore.adapt.LatencyRing;
import io.nexuscore.adapt.AdaptiveJson;
import io.nexuscore.adapt.LatencyRecorder;
import io.nexuscore.events.EventSink;
import io.nexuscore.tenants.TenantPolicyMap;
import io.nexuscore.classify.ThresholdStore;
import io.nexuscore.classify.Tier;
import io.nexuscore.tenants.Ipv4Prefix;
import io.nexuscore.control.KernelControl;
import io.nexuscore.tenants.PrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.nexuscore.tenants.TenantPolicies;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The control plane's view of the loaded kernel data path: the control plane speaks
 * {@link KernelControl}, the bpf feature speaks pinned maps; this adapter is the only place that
 * knows both. Every call is a syscall; the control plane makes them on worker threads.
 */
final class KernelClassifierControl implements KernelControl {

    private final KernelDataPath kernel;
    private final TenantPolicies tenants;

    KernelClassifierControl(KernelDataPath kernel) {
        this.kernel = kernel;
        this.tenants = new PrefixTenantPolicies(new TenantPolicyFloors(kernel.tenantPolicy()));
    }

    @Override
    public ThresholdStore thresholds() {
        return kernel.thresholds();
    }

    @Override
    public boolean thresholdsFresh() {
        return kernel.thresholdsFromConfig();
    }

    @Override
    public Map<Tier, Long> tierCounters() {
        return kernel.tierCounters().counts();
    }

    @Override
    public TenantPolicies tenants() {
        return tenants;
    }

    @Override
    public ReloadResult reload(Optional<Path> object) {
        io.nexuscore.bpf.ReloadResult r = kernel.reload(object);
        return new ReloadResult(
                Map.of(KernelDataPath.XDP_PROGRAM, (long) r.oldXdpProgramId(),
                        KernelDataPath.TC_CLASSIFY_PROGRAM, (long) r.oldTcProgramId()),
                Map.of(KernelDataPath.XDP_PROGRAM, (long) r.newXdpProgramId(),
                        KernelDataPath.TC_CLASSIFY_PROGRAM, (long) r.newTcProgramId()));
    }

    @Override
    public List<ProgramStats> programStats() {
        return kernel.programStats().stream()
                .map(s -> new ProgramStats(s.program(), s.runTimeNs(), s.runCount()))
                .toList();
    }

    /**
     * Reports the kernel loop: a consumer thread publishes each recalibration as a {@code recalibration}
     * event and counts it; the latency ring's written and dropped samples become counters.
     *
     * @return stops the consumer
     */
    AutoCloseable reportAdaptive(EventSink events, MeterRegistry registry) {
        LatencyRing ring = kernel.latencyRing();
        FunctionCounter.builder("nexus.latency.events", ring, LatencyRing::written)
                .description("Latency samples handed to the kernel loop (latency_ringbuf)").register(registry);
        FunctionCounter.builder("nexus.latency.events.dropped", ring, LatencyRing::dropped)
                .description("Latency samples dropped because latency_ringbuf was full").register(registry);
        Counter recalibrations = Counter.builder("nexus.recalibrations")
                .description("nano_max changes made by the kernel loop, as reported to this router").register(registry);
        return kernel.recalibrationEvents(r -> {
            recalibrations.increment();
            events.publish("recalibration", AdaptiveJson.recalibration(r));
        });
    }

    /** The data plane's latency hook: one sample per completed request into latency_ringbuf. */
    LatencyRecorder latencyRecorder() {
        LatencyRing ring = kernel.latencyRing();
        // The hook carries no tenant: samples go in with tenant_id 0 ("unknown").
        return (tier, latencyNanos) -> ring.write(tier, latencyNanos, 0);
    }

    @Override
    public AdaptiveStatus adaptive() {
        return kernel.adaptive().status();
    }

    @Override
    public AdaptiveStatus configureAdaptive(AdaptiveSettings settings) {
        kernel.adaptive().configure(settings);
        return kernel.adaptive().status();
    }

    @Override
    public Optional<Recalibration> lastRecalibration() {
        return kernel.adaptive().status().last();
    }

    @Override
    public String mode() {
        return "kernel";
    }

    @Override
    public Map<String, Object> attachment() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("attached", true);
        out.put("pin_dir", kernel.pinDir().toString());
        out.put("interfaces", kernel.attachments().stream()
                .map(a -> Map.of("interface", a.interfaceName(), "xdp_prog_id", a.xdpProgramId(),
                        "tc_prog_id", a.tcProgramId()))
                .toList());
        return out;
    }

    /** tenant_policy as the control plane's prefix store. */
    private record TenantPolicyFloors(TenantPolicyMap map) implements PrefixFloors {

        @Override
        public void put(Ipv4Prefix prefix, Tier floor) {
            map.put(toKernel(prefix), floor);
        }

        @Override
        public boolean remove(Ipv4Prefix prefix) {
            return map.remove(toKernel(prefix));
        }

        @Override
        public Map<Ipv4Prefix, Tier> entries() {
            Map<Ipv4Prefix, Tier> out = new LinkedHashMap<>();
            map.entries().forEach((prefix, floor) -> out.put(fromKernel(prefix), floor));
            return out;
        }

        private static TenantPolicyMap.Prefix toKernel(Ipv4Prefix prefix) {
            try {
                byte[] address = ByteBuffer.allocate(4).putInt(prefix.address()).array();
                return new TenantPolicyMap.Prefix((Inet4Address) InetAddress.getByAddress(address), prefix.length());
            } catch (UnknownHostException e) {
                throw new IllegalStateException("four bytes are always an IPv4 address", e);
            }
        }

        private static Ipv4Prefix fromKernel(TenantPolicyMap.Prefix prefix) {
            int address = ByteBuffer.wrap(prefix.address().getAddress()).getInt();
            return new Ipv4Prefix(address, prefix.length());
        }
    }
}
