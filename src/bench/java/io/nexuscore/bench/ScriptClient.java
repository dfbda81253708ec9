package io.nexuscore.bench;

import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * RoutingEval's clients that are not Java: each a long-lived process (one per evaluating thread,
 * keep-alive connections as the real client keeps them) that reads a request per line
 * ({"path", "body"}) and writes the answer's status and headers per line. {@code openai-python}
 * sends it with the official OpenAI SDK (httpx: the head, then the body), {@code urllib} with
 * Python's standard library (head and body in one send, a connection per request), {@code requests}
 * with a requests Session (urllib3: the head, then the body). Their Python is the venv
 * scripts/install-sdks.sh makes (NEXUSCORE_SDKS, default target/sdks). {@code go} is Go's net/http
 * ({@code src/test/go/chatclient -requests BASE}: head and body through one 4 KB buffer), built by
 * src/test/go/build.sh into target/go/bin (NEXUSCORE_GO_CLIENT names another binary).
 */
final class ScriptClient implements RoutingEval.Poster, AutoCloseable {

    static final List<String> NAMES = List.of("openai-python", "urllib", "requests", "go");

    private static final String OPENAI_PYTHON = """
            import json, sys
            from openai import OpenAI
            client = OpenAI(base_url=sys.argv[1] + "/v1", api_key="sk-eval", max_retries=0, timeout=60)
            for line in sys.stdin:
                request = json.loads(line)
                body = json.loads(request["body"])
                api = client.chat.completions if request["path"].endswith("/chat/completions") else client.completions
                raw = api.with_raw_response.create(**body)
                raw.http_response.read()
                print(json.dumps({"status": raw.http_response.status_code, "headers": dict(raw.headers)}), flush=True)
            """;

    private static final String URLLIB = """
            import json, sys, urllib.request, urllib.error
            for line in sys.stdin:
                request = json.loads(line)
                http = urllib.request.Request(sys.argv[1] + request["path"], data=request["body"].encode(),
                                              headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(http, timeout=60) as answer:
                        answer.read()
                        status, headers = answer.status, dict(answer.headers)
                except urllib.error.HTTPError as e:
                    status, headers = e.code, dict(e.headers)
                print(json.dumps({"status": status, "headers": headers}), flush=True)
            """;

    /** requests as a service uses it: one Session, so the connection is kept alive between requests. */
    private static final String REQUESTS = """
            import json, sys, requests
            session = requests.Session()
            for line in sys.stdin:
                request = json.loads(line)
                answer = session.post(sys.argv[1] + request["path"], data=request["body"].encode(),
                                      headers={"Content-Type": "application/json"}, timeout=60)
                print(json.dumps({"status": answer.status_code, "headers": dict(answer.headers)}), flush=True)
            """;

    /** The Python script the client runs, or null for the Go binary. */
    private final Path script;
    private final List<String> command;
    private final ThreadLocal<Worker> workers;
    private final ConcurrentLinkedQueue<Worker> all = new ConcurrentLinkedQueue<>();

    private record Worker(Process process, Writer in, BufferedReader out) {
    }

    ScriptClient(String name, URI url) throws IOException {
        if (!NAMES.contains(name)) {
            throw new IllegalArgumentException("--client: one of one-write, jdk, " + String.join(", ", NAMES));
        }
        String base = url.getScheme() + "://" + url.getHost() + ":" + url.getPort();
        if (name.equals("go")) {
            Path go = Path.of(System.getenv().getOrDefault("NEXUSCORE_GO_CLIENT", "target/go/bin/chatclient"));
            if (!Files.isExecutable(go)) {
                throw new IllegalStateException(go + " is missing: run src/test/go/build.sh target");
            }
            this.script = null;
            this.command = List.of(go.toString(), "-requests", base);
        } else {
            Path python = Path.of(System.getenv().getOrDefault("NEXUSCORE_SDKS", "target/sdks"), "py", "bin", "python");
            if (!Files.isExecutable(python)) {
                throw new IllegalStateException(python + " is missing: run scripts/install-sdks.sh target/sdks");
            }
            this.script = Files.createTempFile("routing-eval-client", ".py");
            Files.writeString(script, switch (name) {
                case "urllib" -> URLLIB;
                case "requests" -> REQUESTS;
                default -> OPENAI_PYTHON;
            });
            this.command = List.of(python.toString(), script.toString(), base);
        }
        this.workers = ThreadLocal.withInitial(this::start);
    }

    /** How the client writes a request, for the evaluation's header line. */
    static String describe(String name) {
        return switch (name) {
            case "openai-python" -> "openai-python (the official OpenAI SDK, httpx: the head, then the body)";
            case "urllib" -> "urllib (Python's standard library: head and body in one send)";
            case "requests" -> "requests (a Session, urllib3: the head, then the body)";
            case "go" -> "go (net/http: head and body through a 4 KB buffer)";
            default -> name;
        };
    }

    private Worker start() {
        try {
            Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Worker w = new Worker(p, new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8),
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
            all.add(w);
            return w;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public OneWriteClient.Answer post(URI url, String path, String json) throws IOException {
        Worker w = workers.get();
        w.in().write(new JsonObject().put("path", path).put("body", json).encode() + "\n");
        w.in().flush();
        String line = w.out().readLine();
        if (line == null) {
            throw new IOException("the client process ended (see its stderr above)");
        }
        JsonObject answer = new JsonObject(line);
        Map<String, String> headers = new HashMap<>();
        answer.getJsonObject("headers").forEach(e -> headers.put(e.getKey().toLowerCase(Locale.ROOT), String.valueOf(e.getValue())));
        return new OneWriteClient.Answer(answer.getInteger("status"), headers);
    }

    @Override
    public void close() throws IOException {
        for (Worker w : all) {
            w.in().close();
            w.process().destroy();
        }
        if (script != null) {
            Files.deleteIfExists(script);
        }
    }
}
