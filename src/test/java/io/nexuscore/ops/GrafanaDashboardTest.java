package io.nexuscore.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.testing.GrafanaDashboard;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * docker/grafana-dashboard.json: well-formed for Grafana (ids, layout, one data-source variable),
 * every query valid PromQL ({@code promtool check rules} on them as recording rules), and covering the
 * operator's figures. That it reads only series the router exports is checked against real routers'
 * /metrics by the end-to-end suites (e2e/RequestSuite, user-space and kernel mode).
 */
class GrafanaDashboardTest {

    private static final String PROMTOOL = "/usr/bin/promtool";

    @Test
    void panelsAreWellFormedAndUseTheDataSourceVariable() throws Exception {
        JsonObject dashboard = GrafanaDashboard.load();
        assertEquals("nexuscore-router", dashboard.getString("uid"));
        assertEquals("datasource", dashboard.getJsonObject("templating").getJsonArray("list").getJsonObject(0).getString("type"));
        Set<Integer> ids = new HashSet<>();
        for (Object o : dashboard.getJsonArray("panels")) {
            JsonObject panel = (JsonObject) o;
            assertTrue(ids.add(panel.getInteger("id")), "duplicate panel id " + panel.getInteger("id"));
            JsonObject grid = panel.getJsonObject("gridPos");
            assertTrue(grid.getInteger("x") + grid.getInteger("w") <= 24, panel.getString("title") + " fits the grid");
            if (!panel.getString("type").equals("row")) {
                assertEquals("${datasource}", panel.getJsonObject("datasource").getString("uid"), panel.getString("title"));
                assertFalse(panel.getJsonArray("targets").isEmpty(), panel.getString("title") + " has a query");
                assertNotNull(panel.getString("description"), panel.getString("title") + " says what it shows");
            }
        }
    }

    @Test
    void coversTheOperatorsFigures() throws Exception {
        Set<String> names = GrafanaDashboard.seriesNames(GrafanaDashboard.load());
        for (String needed : List.of("nexus_requests_total", "nexus_request_latency_seconds", "nexus_tier_queue_depth",
                "nexus_misroutes_total", "nexus_misroutes_banded_total", "nexus_misroutes_gross_total",
                "nexus_assessed_requests_total", "nexus_threshold", "nexus_token_gain", "nexus_bpf_latency_seconds_bucket",
                "nexus_tlb_flushes_total", "nexus_tier_page_faults_total")) {
            assertTrue(names.contains(needed), needed + " is on the dashboard: " + names);
        }
        String text = Files.readString(GrafanaDashboard.FILE);
        assertTrue(text.contains("nexus_bpf_latency_seconds_bucket{program=\\\"xdp\\\"}"), "XDP histogram panel");
        assertTrue(text.contains("nexus_bpf_latency_seconds_bucket{program=\\\"tc\\\"}"), "TC histogram panel");
    }

    @Test
    void everyQueryIsValidPromQl() throws Exception {
        OpsRules.require(Files.isExecutable(Path.of(PROMTOOL)),
                PROMTOOL + " is missing (Debian package prometheus; run scripts/install-deps.sh)");
        List<String> exprs = GrafanaDashboard.expressions(GrafanaDashboard.load());
        StringBuilder rules = new StringBuilder("groups:\n  - name: grafana-dashboard\n    rules:\n");
        for (int i = 0; i < exprs.size(); i++) {
            // Grafana's interval variable is not PromQL; any duration stands in for it.
            String expr = exprs.get(i).replace("$__rate_interval", "1m");
            rules.append("      - record: grafana_query_").append(i).append("\n        expr: '")
                    .append(expr.replace("'", "''")).append("'\n");
        }
        Path file = Files.createTempFile("grafana-queries-", ".yaml");
        try {
            Files.writeString(file, rules);
            OpsRules.Run check = OpsRules.run(List.of(PROMTOOL, "check", "rules", file.toString()), Map.of(), 60);
            assertEquals(0, check.exitCode(), check.toString());
            assertTrue(check.output().contains("SUCCESS: " + exprs.size() + " rules found"), check.toString());
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
