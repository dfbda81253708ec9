package io.nexuscore.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * docker/alerts.yaml: valid for Prometheus ({@code promtool check rules}), each alert firing past
 * its seed threshold and silent inside the target ({@code promtool test rules}), one alert per row
 * of the seed's table, and loaded by the Prometheus the compose file runs.
 */
class AlertRulesTest {

    /** The seed table's rows, as the rules' {@code seed_row} label names them. */
    static final Set<String> SEED_ROWS = Set.of("xdp_classifier_latency", "bpf_map_lookup", "wasm_cold_start",
            "tier_misroute_rate", "tlb_shootdown_rate", "bpf_tail_call_depth", "pool_wait_time", "wasm_page_faults");

    private static final String PROMTOOL = "/usr/bin/promtool";

    @Test
    void promtoolAcceptsTheRules() throws Exception {
        requirePromtool();
        OpsRules.Run check = OpsRules.run(List.of(PROMTOOL, "check", "rules", "docker/alerts.yaml"), Map.of(), 60);
        assertEquals(0, check.exitCode(), check.toString());
        assertTrue(check.output().contains("SUCCESS"), check.toString());
    }

    @Test
    void everyAlertFiresPastItsThresholdAndNotInsideTheTarget() throws Exception {
        requirePromtool();
        OpsRules.Run test = OpsRules.run(List.of(PROMTOOL, "test", "rules", "src/test/promtool/alerts-test.yaml"),
                Map.of(), 60);
        assertEquals(0, test.exitCode(), test.toString());
    }

    @Test
    void oneAlertPerSeedRowEachUnitTested() throws Exception {
        Map<String, Object> rules = yaml(OpsRules.projectDir().resolve("docker/alerts.yaml"));
        List<String> rows = new ArrayList<>();
        Set<String> alerts = new TreeSet<>();
        for (Map<String, Object> group : maps(rules.get("groups"))) {
            for (Map<String, Object> rule : maps(group.get("rules"))) {
                if (rule.containsKey("alert")) {
                    alerts.add((String) rule.get("alert"));
                    @SuppressWarnings("unchecked")
                    Map<String, Object> labels = (Map<String, Object>) rule.get("labels");
                    rows.add((String) labels.get("seed_row"));
                    @SuppressWarnings("unchecked")
                    Map<String, Object> annotations = (Map<String, Object>) rule.get("annotations");
                    assertTrue(annotations.containsKey("target"), rule.get("alert") + " names the row's target");
                }
            }
        }
        assertEquals(SEED_ROWS, new TreeSet<>(rows), "seed rows covered");
        assertEquals(SEED_ROWS.size(), rows.size(), "one alert per seed row: " + rows);

        Set<String> tested = new TreeSet<>();
        for (Map<String, Object> test : maps(yaml(OpsRules.projectDir().resolve("src/test/promtool/alerts-test.yaml"))
                .get("tests"))) {
            for (Map<String, Object> alertTest : maps(test.get("alert_rule_test"))) {
                if (!((List<?>) alertTest.get("exp_alerts")).isEmpty()) {
                    tested.add((String) alertTest.get("alertname"));
                }
            }
        }
        assertEquals(alerts, tested, "every alert has a unit test in which it fires");
    }

    @Test
    void composeLoadsTheRules() throws Exception {
        Path docker = OpsRules.projectDir().resolve("docker");
        Map<String, Object> prometheus = yaml(docker.resolve("prometheus.yml"));
        assertEquals(List.of("/etc/prometheus/alerts.yaml"), prometheus.get("rule_files"));
        String compose = Files.readString(docker.resolve("compose.yaml"));
        assertTrue(compose.contains("./alerts.yaml:/etc/prometheus/alerts.yaml:ro"), "compose mounts alerts.yaml");
    }

    private static void requirePromtool() {
        OpsRules.require(Files.isExecutable(Path.of(PROMTOOL)),
                PROMTOOL + " is missing (Debian package prometheus; run scripts/install-deps.sh)");
    }

    private static Map<String, Object> yaml(Path file) throws Exception {
        return new Yaml(new SafeConstructor(new LoaderOptions())).load(Files.readString(file));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> maps(Object list) {
        return (List<Map<String, Object>>) list;
    }
}
