package io.nexuscore.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.TempDirs;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's sample session is what the code prints: the test reads the session's block, starts
 * a router on the README's own configuration (the JSON its {@code echo} writes, overlaid on the
 * embedded defaults as {@code ./run.sh --config} does; only the ports are free ones and the state
 * directory a temporary one), replays every {@code curl} in order, and compares each answer with the
 * lines the README shows under it: the status, every {@code X-NX-} routing header both ways (none
 * missing, none extra, same values), and the JSON body (all but {@code id} and {@code created}, which
 * count and tell time). The README shows user-space mode so that it is what every machine prints.
 */
class ReadmeSessionTest {

    private static final Pattern ECHO_CONFIG = Pattern.compile("^\\$ echo '(\\{.*\\})' > (\\S+)$");

    /** One command of the session and the lines the README shows it printing. */
    record Step(String command, List<String> output) {
    }

    static List<Step> session() {
        String readme = Docs.read(Docs.root().resolve("README.md"));
        int heading = readme.indexOf("\n## A sample session\n");
        assertTrue(heading >= 0, "README.md has a '## A sample session' section");
        int open = readme.indexOf("\n```\n", heading);
        int close = readme.indexOf("\n```\n", open + 5);
        assertTrue(open > 0 && close > open, "the session is a fenced block");
        List<Step> steps = new ArrayList<>();
        for (String line : readme.substring(open + 5, close).split("\n")) {
            if (line.startsWith("$ ")) {
                steps.add(new Step(line, new ArrayList<>()));
            } else if (!steps.isEmpty()) {
                steps.get(steps.size() - 1).output().add(line);
            }
        }
        return steps;
    }

    @Test
    void theSampleSessionIsWhatTheRouterAnswers() throws Exception {
        List<Step> steps = session();
        Matcher echo = ECHO_CONFIG.matcher(steps.get(0).command());
        assertTrue(echo.matches(), "the session starts by writing its config: " + steps.get(0).command());
        String configName = echo.group(2);
        assertEquals("$ ./run.sh --config " + configName, steps.get(1).command(), "then runs it with ./run.sh");
        assertTrue(Files.isExecutable(Docs.root().resolve("run.sh")), "./run.sh exists");
        JsonObject readmeConfig = new JsonObject(echo.group(1));
        assertEquals("user", readmeConfig.getJsonObject("kernel").getString("mode"), "the session is the user-space one");

        Path dir = Files.createTempDirectory("nexus-readme-session");
        RouterRuntime router = null;
        try {
            int dataPort = FreePort.pick();
            int controlPort = FreePort.pick();
            JsonObject overrides = readmeConfig.copy();
            overrides.put("dataPlane", new JsonObject().put("port", dataPort));
            JsonObject control = overrides.getJsonObject("control", new JsonObject());
            control.put("port", controlPort);
            // The README's relative state file, under the temporary directory that stands for the checkout.
            control.put("stateFile", dir.resolve(control.getString("stateFile", "run/state.json")).toString());
            overrides.put("control", control);
            Path configFile = dir.resolve(configName);
            Files.writeString(configFile, overrides.encodePrettily());
            router = RouterRuntime.start(RouterConfig.load(Optional.of(configFile)));

            Map<String, Integer> ports = Map.of("8080", dataPort, "8081", controlPort);
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            int replayed = 0;
            for (Step step : steps.subList(2, steps.size())) {
                assertTrue(step.command().startsWith("$ curl "), "every later command is a curl: " + step.command());
                Curl curl = Curl.parse(step.command().substring(2), dir, ports);
                HttpResponse<String> answer = client.send(curl.request(), HttpResponse.BodyHandlers.ofString());
                compare(step, curl, answer);
                replayed++;
            }
            assertTrue(replayed >= 2, "the session sends requests: " + replayed);
        } finally {
            if (router != null) {
                router.close();
            }
            TempDirs.deleteRecursively(dir);
        }
    }

    private static void compare(Step step, Curl curl, HttpResponse<String> answer) {
        List<String> shown = step.output().stream().filter(l -> !l.isBlank()).toList();
        assertFalse(shown.isEmpty(), step.command() + ": the README shows its output");
        if (curl.includeHeaders()) {
            Matcher status = Pattern.compile("^HTTP/1\\.1 (\\d{3}) .*").matcher(shown.get(0));
            assertTrue(status.matches(), step.command() + ": the output starts with the status line");
            assertEquals(Integer.parseInt(status.group(1)), answer.statusCode(), step.command() + ": status");
            Map<String, String> readmeHeaders = new TreeMap<>();
            for (String line : shown) {
                if (line.toLowerCase(Locale.ROOT).startsWith("x-nx-")) {
                    readmeHeaders.put(line.substring(0, line.indexOf(':')).toLowerCase(Locale.ROOT), line.substring(line.indexOf(':') + 1).strip());
                }
            }
            Map<String, String> routerHeaders = new TreeMap<>();
            answer.headers().map().forEach((name, values) -> {
                if (name.toLowerCase(Locale.ROOT).startsWith("x-nx-")) {
                    routerHeaders.put(name.toLowerCase(Locale.ROOT), String.join(",", values));
                }
            });
            assertFalse(readmeHeaders.isEmpty(), step.command() + ": the README shows the routing headers");
            assertEquals(readmeHeaders, routerHeaders, step.command() + ": the X-NX- headers");
        } else {
            assertEquals(2, answer.statusCode() / 100, step.command() + ": " + answer.body());
        }
        JsonObject readmeBody = new JsonObject(shown.get(shown.size() - 1));
        JsonObject routerBody = new JsonObject(answer.body());
        for (JsonObject body : List.of(readmeBody, routerBody)) {
            body.remove("id");
            body.remove("created");
        }
        assertEquals(readmeBody, routerBody, step.command() + ": the body");
    }

    /** The part of curl the session uses: -s, -i, -X METHOD, -H 'name: value', -d 'body', and a URL without scheme. */
    record Curl(String method, URI uri, List<String[]> headers, String body, boolean includeHeaders) {

        static Curl parse(String commandLine, Path workingDir, Map<String, Integer> ports) throws Exception {
            List<String> words = Shell.words(commandLine, workingDir);
            assertEquals("curl", words.get(0));
            String method = null;
            String url = null;
            String body = null;
            boolean include = false;
            List<String[]> headers = new ArrayList<>();
            for (int i = 1; i < words.size(); i++) {
                String w = words.get(i);
                if (w.startsWith("-X")) {
                    method = w.length() > 2 ? w.substring(2) : words.get(++i);
                } else if (w.equals("-H")) {
                    String h = words.get(++i);
                    headers.add(new String[] {h.substring(0, h.indexOf(':')).strip(), h.substring(h.indexOf(':') + 1).strip()});
                } else if (w.equals("-d") || w.equals("--data")) {
                    body = words.get(++i);
                } else if (w.matches("-[si]+")) {
                    include |= w.contains("i");
                } else if (w.startsWith("-")) {
                    throw new AssertionError("the test does not know curl's " + w + ": " + commandLine);
                } else {
                    url = w;
                }
            }
            Matcher hostPort = Pattern.compile("^(localhost|127\\.0\\.0\\.1):(\\d+)(/.*)$").matcher(url);
            assertTrue(hostPort.matches(), "a local URL: " + url);
            Integer port = ports.get(hostPort.group(2));
            assertTrue(port != null, "the URL names one of the router's default ports: " + url);
            if (body != null && headers.stream().noneMatch(h -> h[0].equalsIgnoreCase("content-type"))) {
                headers.add(new String[] {"content-type", "application/x-www-form-urlencoded"}); // what curl -d sends
            }
            method = method != null ? method : body != null ? "POST" : "GET";
            return new Curl(method, URI.create("http://127.0.0.1:" + port + hostPort.group(3)), headers, body, include);
        }

        HttpRequest request() {
            HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                    .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
            headers.forEach(h -> b.header(h[0], h[1]));
            return b.build();
        }
    }

    /** Enough of the shell for the session's lines: words, '...' and "..." quoting, and $(cat FILE) inside double quotes. */
    static final class Shell {

        private Shell() {
        }

        static List<String> words(String line, Path workingDir) throws Exception {
            List<String> words = new ArrayList<>();
            StringBuilder word = null;
            for (int i = 0; i < line.length(); i++) {
                char c = line.charAt(i);
                if (c == ' ') {
                    if (word != null) {
                        words.add(word.toString());
                        word = null;
                    }
                    continue;
                }
                word = word == null ? new StringBuilder() : word;
                if (c == '\'') {
                    int end = line.indexOf('\'', i + 1);
                    word.append(line, i + 1, end);
                    i = end;
                } else if (c == '"') {
                    int end = line.indexOf('"', i + 1);
                    word.append(substitute(line.substring(i + 1, end), workingDir));
                    i = end;
                } else {
                    word.append(c);
                }
            }
            if (word != null) {
                words.add(word.toString());
            }
            return words;
        }

        private static String substitute(String text, Path workingDir) throws Exception {
            Matcher cat = Pattern.compile("\\$\\(cat ([^)]+)\\)").matcher(text);
            StringBuilder out = new StringBuilder();
            while (cat.find()) {
                cat.appendReplacement(out, Matcher.quoteReplacement(Files.readString(workingDir.resolve(cat.group(1))).strip()));
            }
            cat.appendTail(out);
            return out.toString();
        }
    }
}
