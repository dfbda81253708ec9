package io.nexuscore.bench;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.tenants.limits.FleetShare;
import io.nexuscore.tenants.limits.LimitClock;
import io.nexuscore.tenants.limits.LimitGate;
import io.nexuscore.tenants.limits.TenantLimitStore;
import io.nexuscore.tenants.limits.TenantLimits;
import io.nexuscore.tenants.limits.Ticket;
import io.nexuscore.tenants.limits.WindowLimiter;
import java.lang.management.ManagementFactory;

/**
 * Tenant limits' own CPU cost per request, apart from everything else a request costs: what the data
 * plane does for one request of a limited tenant (admit: limits looked up, share, charge, the window
 * counting; the headers; finish: settle, usage, token counters, release), in one thread, with all
 * four limits set so high that nothing is refused, and the same for a tenant without limits (usage
 * only). Over 1 tenant and over 1,000 (each its own counters). Prints process CPU ns per request.
 *
 * Usage: LimitsCost [REQUESTS] [ROUNDS]
 */
public final class LimitsCost {

    private LimitsCost() {
    }

    public static void main(String[] args) {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long big = TenantLimits.MAX_VALUE;
        TenantLimitStore store = TenantLimitStore.inMemory();
        String[] many = new String[1000];
        for (int i = 0; i < many.length; i++) {
            many[i] = "tenant-" + i;
            store.put(many[i], new TenantLimits(big, big, big, big));
        }
        LimitGate gate = new LimitGate(store, TenantLimits.NONE, 256, new WindowLimiter(), FleetShare.ALONE,
                LimitClock.SYSTEM, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), 32, name -> false);
        String[] one = {many[0]};
        String[] unlimited = {"no-limits"};
        for (int round = 0; round <= rounds; round++) {
            for (String[][] set : new String[][][] {{unlimited}, {one}, {many}}) {
                String[] tenants = set[0];
                long cpu = os.getProcessCpuTime();
                long sink = 0;
                for (int i = 0; i < requests; i++) {
                    Ticket t = gate.admit(tenants[i % tenants.length], 40, 64, 0);
                    sink += t.headers().size();
                    t.finish("nano", true, 38, 12);
                }
                double ns = (double) (os.getProcessCpuTime() - cpu) / requests;
                if (round > 0) { // round 0 warms the JIT up
                    String name = tenants == unlimited ? "no limits (usage only)" : tenants.length + " limited tenant(s)";
                    System.out.printf("LimitsCost round %d: %-24s %6.0f ns CPU per request (%d headers)%n", round, name, ns,
                            sink / requests);
                }
            }
        }
    }
}
