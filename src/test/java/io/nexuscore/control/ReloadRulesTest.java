package io.nexuscore.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelDataPathControl;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.ReloadObjects;
import io.nexuscore.config.ControlConfig;
import io.nexuscore.events.EventHub;
import io.nexuscore.http.ProblemType;
import io.nexuscore.tenants.KernelPrefixFloors;
import io.nexuscore.tenants.PrefixTenantPolicies;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * POST /classifier/reload against the real kernel (objects loaded, not attached), over a loopback
 * socket: only a regular, root-owned file directly in kernel.reloadDir with the running object's
 * program set reloads; everything else is 403 naming the rule, and a FIFO answers at once.
 */
class ReloadRulesTest {

    private KernelDataPath kernel;
    private Vertx vertx;
    private WebClient client;
    private int port;
    private Path dir;
    private Path outside;
    private Path stateDir;
    private PrometheusMeterRegistry registry;

    @BeforeEach
    void start() throws Exception {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(KernelTestSupport.DEFAULT_SCORING, Set.of(8080));
        dir = Files.createTempDirectory("nexus-reload-dir"); // root's, 0700
        outside = Files.createTempDirectory("nexus-reload-outside");
        stateDir = Files.createTempDirectory("nexus-reload-state");
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        ControlPorts ports = new ControlPorts(kernel.thresholds(), false,
                new PrefixTenantPolicies(new KernelPrefixFloors(kernel.tenantPolicy())), kernel.adaptive(),
                new KernelDataPathControl(kernel, new ReloadObjects(Optional.of(dir))));
        vertx = Vertx.vertx();
        ControlVerticle verticle = new ControlVerticle(ControlConfig.withToken("127.0.0.1", 0, Optional.of(ControlFixture.TOKEN),
                stateDir.resolve("state.json"), 16, 16), ports, TierStateView.NONE, new EventHub(16, 16, registry), registry,
                new ControlVerticle.Timings(Duration.ofMillis(50), Duration.ofSeconds(30)));
        vertx.deployVerticle(verticle).await(30, TimeUnit.SECONDS);
        port = verticle.actualPort();
        client = WebClient.create(vertx);
    }

    @AfterEach
    void stop() throws Exception {
        if (vertx != null) {
            vertx.close().await(10, TimeUnit.SECONDS);
        }
        KernelTestSupport.dispose(kernel);
        for (Path p : new Path[] {dir, outside, stateDir}) {
            if (p != null) {
                try (Stream<Path> files = Files.walk(p)) {
                    files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                }
            }
        }
        if (registry != null) {
            registry.close();
        }
    }

    @Test
    void theRunningObjectCopiedIntoTheDirectoryReloads() throws Exception {
        Path object = jarObject(dir.resolve("classify.bpf.o"));
        HttpResponse<Buffer> r = reload(object.toString());
        assertEquals(200, r.statusCode(), r.bodyAsString());
        JsonObject body = r.bodyAsJsonObject();
        assertNotEquals(body.getJsonObject("old_program_ids").getLong(KernelDataPath.XDP_PROGRAM),
                body.getJsonObject("new_program_ids").getLong(KernelDataPath.XDP_PROGRAM));
    }

    @Test
    void everyBrokenRuleIs403NamingIt() throws Exception {
        jarObject(outside.resolve("classify.bpf.o"));
        assertRule("inside-dir", reload(outside.resolve("classify.bpf.o").toString()));
        assertRule("inside-dir", reload(dir.resolve("../" + outside.getFileName() + "/classify.bpf.o").toString()));

        Path link = dir.resolve("link.bpf.o");
        Files.createSymbolicLink(link, jarObject(outside.resolve("target.bpf.o")));
        assertRule("no-symlink", reload(link.toString()));

        // A FIFO would block open() and read() forever: refused at once, and the API stays responsive.
        Path fifo = dir.resolve("fifo.bpf.o");
        assertEquals(0, io.nexuscore.testing.ExternalProcess.run(java.time.Duration.ofSeconds(10), "mkfifo", fifo.toString()).exitCode());
        assertRule("regular-file", reload(fifo.toString()));
        assertEquals(200, client.get(port, "127.0.0.1", "/healthz").send().await(10, TimeUnit.SECONDS).statusCode());

        Path huge = dir.resolve("huge.bpf.o");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(ReloadObjects.MAX_BYTES + 1); // sparse
        }
        assertRule("size-cap", reload(huge.toString()));

        Path writable = dir.resolve("writable.bpf.o");
        jarObject(writable);
        Files.setPosixFilePermissions(writable, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        assertRule("root-owned", reload(writable.toString()));

        assertRule("regular-file", reload(dir.resolve("absent.bpf.o").toString()));
    }

    @Test
    void anObjectWithOtherProgramsIsRefused() throws Exception {
        ExternalTool.require("/usr/bin/clang", "clang");
        Path source = outside.resolve("other.c");
        Files.writeString(source, """
                __attribute__((section("xdp"), used)) int other(void *ctx) { return 2; }
                char LICENSE[] __attribute__((section("license"), used)) = "GPL";
                """);
        Path object = dir.resolve("other.bpf.o");
        ExternalTool.Result cc = ExternalTool.run("", "/usr/bin/clang", "-O2", "-target", "bpf", "-c", source.toString(),
                "-o", object.toString());
        assertEquals(0, cc.exitCode(), cc.output());
        assertRule("program-set", reload(object.toString()));
    }

    @Test
    void withoutAReloadDirOnlyTheJarObjectReloads() throws Exception {
        Path object = jarObject(dir.resolve("classify.bpf.o"));
        KernelDataPathControl jarOnly = new KernelDataPathControl(kernel);
        io.nexuscore.kernel.ForbiddenObject e = org.junit.jupiter.api.Assertions.assertThrows(
                io.nexuscore.kernel.ForbiddenObject.class, () -> jarOnly.reload(Optional.of(object)));
        assertEquals("reload-dir", e.rule());
        assertEquals(200, reload(null).statusCode(), "no body: the jar's object");
    }

    private void assertRule(String rule, HttpResponse<Buffer> r) {
        assertEquals(403, r.statusCode(), r.bodyAsString());
        JsonObject problem = r.bodyAsJsonObject();
        assertEquals(ProblemType.TYPE_BASE + "forbidden-object", problem.getString("type"));
        assertEquals("object", problem.getString("field"));
        assertTrue(problem.getString("detail").startsWith("rule " + rule + ":"), problem.encode());
    }

    private HttpResponse<Buffer> reload(String object) throws Exception {
        var request = client.post(port, "127.0.0.1", "/classifier/reload").putHeader("Authorization", "Bearer " + ControlFixture.TOKEN);
        return (object == null ? request.send() : request.sendJsonObject(new JsonObject().put("object", object)))
                .await(30, TimeUnit.SECONDS);
    }

    private static Path jarObject(Path target) throws Exception {
        try (InputStream in = KernelDataPath.class.getClassLoader().getResourceAsStream("bpf/nexus_classify.bpf.o")) {
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        return target;
    }
}
