package io.nexuscore.control;
import io.nexuscore.http.ControlProblems;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.dataplane.Endpoint;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * openapi.yaml is the contract: every operation it lists is routed, and every route is listed, for
 * each listener separately (operations are tagged {@code control-plane} or {@code data-plane}).
 */
@ExtendWith(VertxExtension.class)
class OpenApiContractTest {

    static final Path SPEC = Path.of("openapi.yaml");
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options", "trace");

    private static Map<String, Object> spec;
    private ControlFixture fx;

    @BeforeAll
    static void parse() throws Exception {
        try (Reader in = Files.newBufferedReader(SPEC)) {
            spec = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
        }
    }

    @AfterEach
    void cleanUp() {
        if (fx != null) {
            fx.deleteStateDir();
        }
    }

    /** "METHOD /path/{param}" for every operation the spec tags with {@code plane}. */
    @SuppressWarnings("unchecked")
    static Set<String> specOperations(String plane) {
        Set<String> ops = new TreeSet<>();
        Map<String, Object> paths = (Map<String, Object>) spec.get("paths");
        paths.forEach((path, item) -> ((Map<String, Object>) item).forEach((key, op) -> {
            if (METHODS.contains(key)) {
                List<String> tags = (List<String>) ((Map<String, Object>) op).get("tags");
                if (tags != null && tags.contains(plane)) {
                    ops.add(key.toUpperCase(java.util.Locale.ROOT) + " " + path);
                }
            }
        }));
        return ops;
    }

    /** The same notation for a vertx-web router: ":param" becomes "{param}". */
    static Set<String> routerOperations(Router router) {
        Set<String> ops = new TreeSet<>();
        for (Route route : router.getRoutes()) {
            if (route.getPath() == null || route.methods() == null) {
                continue; // catch-all handlers (failure rendering) are not operations
            }
            String path = route.getPath().replaceAll(":([A-Za-z0-9_]+)", "{$1}");
            route.methods().forEach(m -> ops.add(m.name() + " " + path));
        }
        return ops;
    }

    static void assertSameOperations(String plane, Set<String> inSpec, Set<String> served) {
        Set<String> unlisted = new TreeSet<>(served);
        unlisted.removeAll(inSpec);
        Set<String> unserved = new TreeSet<>(inSpec);
        unserved.removeAll(served);
        assertTrue(unlisted.isEmpty() && unserved.isEmpty(), plane + ": routes missing from openapi.yaml " + unlisted
                + "; operations in openapi.yaml with no route " + unserved);
    }

    @Test
    void controlPlaneRoutesAndSpecAreEqual(Vertx vertx, VertxTestContext ctx) {
        fx = new ControlFixture(new UserSpaceKernelControl(Thresholds.DEFAULT, "test"), 4, 4);
        fx.deploy(vertx).onComplete(ctx.succeeding(f -> ctx.verify(() -> {
            Set<String> served = routerOperations(fx.verticle.router());
            assertTrue(served.contains("PATCH /thresholds"), "sanity: " + served);
            assertSameOperations("control plane", specOperations("control-plane"), served);
            ctx.completeNow();
        })));
    }

    /** The data plane's half: its routes are {@link Endpoint#OPERATIONS} (EndpointTest keeps that list honest). */
    @Test
    void dataPlaneRoutesAndSpecAreEqual() {
        assertSameOperations("data plane", specOperations("data-plane"), new TreeSet<>(Endpoint.OPERATIONS));
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyOperationBelongsToExactlyOneListener() {
        Map<String, Object> paths = (Map<String, Object>) spec.get("paths");
        List<String> untagged = new ArrayList<>();
        paths.forEach((path, item) -> ((Map<String, Object>) item).forEach((key, op) -> {
            if (METHODS.contains(key)) {
                List<String> tags = (List<String>) ((Map<String, Object>) op).get("tags");
                long planes = tags == null ? 0 : tags.stream().filter(t -> t.equals("data-plane") || t.equals("control-plane")).count();
                if (planes != 1) {
                    untagged.add(key + " " + path);
                }
            }
        }));
        assertEquals(List.of(), untagged);
        assertTrue(String.valueOf(spec.get("openapi")).startsWith("3.1"), "OpenAPI 3.1");
    }

    @Test
    void everyRefResolves() {
        List<String> broken = new ArrayList<>();
        walk(spec, ref -> {
            if (!ref.startsWith("#/") || resolve(ref) == null) {
                broken.add(ref);
            }
        });
        assertEquals(List.of(), broken);
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyProblemTypeTheControlPlaneSendsIsDocumented() {
        Map<String, Object> problem = (Map<String, Object>) resolve("#/components/schemas/Problem");
        List<String> documented = (List<String>) ((Map<String, Object>) ((Map<String, Object>) problem.get("properties"))
                .get("type")).get("enum");
        for (ControlProblems.Kind kind : ControlProblems.Kind.values()) {
            assertTrue(documented.contains(kind.type()), kind.type() + " is not in the Problem schema's type enum");
        }
    }

    @SuppressWarnings("unchecked")
    private static void walk(Object node, java.util.function.Consumer<String> refs) {
        if (node instanceof Map<?, ?> map) {
            map.forEach((k, v) -> {
                if ("$ref".equals(k) && v instanceof String s) {
                    refs.accept(s);
                } else {
                    walk(v, refs);
                }
            });
        } else if (node instanceof List<?> list) {
            list.forEach(v -> walk(v, refs));
        }
    }

    @SuppressWarnings("unchecked")
    private static Object resolve(String ref) {
        Object node = spec;
        for (String part : ref.substring(2).split("/")) {
            if (!(node instanceof Map<?, ?> map)) {
                return null;
            }
            node = ((Map<String, Object>) map).get(part.replace("~1", "/").replace("~0", "~"));
        }
        return node;
    }
}
