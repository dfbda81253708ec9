package io.nexuscore.testing;

import io.nexuscore.misroute.MisrouteMeters;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** docker/grafana-dashboard.json as the tests read it: its panels' PromQL and the series names they use. */
public final class GrafanaDashboard {

    public static final Path FILE = Path.of("docker/grafana-dashboard.json");

    /** Series only a kernel-mode router exports (its BPF programs, maps and tracepoints feed them). */
    public static final Set<String> KERNEL_ONLY = Set.of("nexus_bpf_latency_seconds_bucket", "nexus_tlb_flushes_total",
            "nexus_tc_tail_call_depth", "nexus_token_gain", "nexus_verdict_read_seconds_bucket");

    /** Registered on the first misroute of their kind (MisrouteMeters): absent until then. */
    public static final Set<String> ON_FIRST_MISROUTE = Set.of(MisrouteMeters.STRICT + "_total",
            MisrouteMeters.BANDED + "_total", MisrouteMeters.GROSS + "_total");

    private static final Pattern SERIES = Pattern.compile("(?<![\\w:])nexus_[a-z0-9_]+");

    private GrafanaDashboard() {
    }

    public static JsonObject load() throws IOException {
        return new JsonObject(Files.readString(FILE));
    }

    /** Every target's {@code expr}, panel by panel (rows hold none). */
    public static List<String> expressions(JsonObject dashboard) {
        List<String> out = new ArrayList<>();
        for (Object panel : dashboard.getJsonArray("panels")) {
            JsonArray targets = ((JsonObject) panel).getJsonArray("targets");
            if (targets != null) {
                targets.forEach(t -> out.add(((JsonObject) t).getString("expr")));
            }
        }
        return out;
    }

    /** The series names the expressions read. */
    public static Set<String> seriesNames(JsonObject dashboard) {
        Set<String> names = new TreeSet<>();
        for (String expr : expressions(dashboard)) {
            Matcher m = SERIES.matcher(expr);
            while (m.find()) {
                names.add(m.group());
            }
        }
        return names;
    }

    /** True when a Prometheus text exposition has a sample of this series. */
    public static boolean exposes(String scrape, String series) {
        return scrape.startsWith(series + "{") || scrape.startsWith(series + " ")
                || scrape.contains("\n" + series + "{") || scrape.contains("\n" + series + " ");
    }
}
