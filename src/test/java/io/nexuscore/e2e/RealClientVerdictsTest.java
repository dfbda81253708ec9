package io.nexuscore.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.RouterRuntime;
import io.nexuscore.kernel.KernelDataPath;
import io.nexuscore.kernel.KernelTestSupport;
import io.nexuscore.kernel.VethNetns;
import io.nexuscore.config.RouterConfig;
import io.nexuscore.testing.Corpus;
import io.nexuscore.testing.FreePort;
import io.nexuscore.testing.GoClients;
import io.nexuscore.testing.Sdks;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The kernel decides for the clients people use, not only for curl: each client sends real
 * prompts as chat requests to a router in kernel mode, over loopback (from this namespace) and
 * over a veth pair with a 1500-byte MTU (from its namespace, so long bodies span segments), and
 * every answer must say {@code X-NX-Route-Source: kernel}. The clients write requests differently:
 * the OpenAI Python SDK (httpx), {@code requests} (urllib3) and the JDK HttpClient write the head and
 * then the body; urllib, Node's fetch, the openai npm SDK (fetch) and curl write a small request in
 * one segment; Go's net/http writes head and body through a 4 KB buffer, so a small request goes in
 * one write and a long body continues in the next ({@code src/test/go/chatclient}, built by
 * {@link GoClients}).
 */
class RealClientVerdictsTest {

    private static VethNetns veth;
    private static Path pinDir;
    private static Path stateDir;
    private static Path work;
    private static RouterRuntime router;
    private static int port;

    @BeforeAll
    static void start() throws IOException {
        KernelTestSupport.requireKernel();
        Sdks.requireInstalled();
        stateDir = RequestSuite.tempDir();
        work = Files.createTempDirectory("nexus-clients");
        pinDir = KernelTestSupport.uniquePinDir();
        try {
            veth = VethNetns.create();
            port = FreePort.pick();
            JsonObject kernel = new JsonObject().put("mode", "kernel").put("pinDir", pinDir.toString())
                    .put("interfaces", List.of("lo", veth.hostInterface)).put("xdpMode", "generic");
            router = RouterRuntime.start(RouterConfig.fromJson(
                    RequestSuite.config(veth.hostAddress.getHostAddress(), port, kernel, stateDir)));
            Files.writeString(work.resolve("prompts.json"), prompts().encode());
            Files.writeString(work.resolve("JdkClient.java"), JDK_CLIENT);
        } catch (RuntimeException | Error | IOException e) {
            stop();
            throw e;
        }
    }

    @AfterAll
    static void stop() {
        try {
            if (router != null) {
                router.close();
            }
        } finally {
            if (veth != null) {
                veth.close();
            }
            if (pinDir != null) {
                KernelDataPath.removePins(pinDir);
            }
            RequestSuite.deleteRecursively(stateDir);
            RequestSuite.deleteRecursively(work);
        }
    }

    /** MT-Bench prompts of every length, and three that span several 1500-byte segments. */
    private static JsonArray prompts() {
        JsonArray prompts = new JsonArray();
        Corpus.everyNth(Corpus.prompts("mt-bench-questions.jsonl"), 5).forEach(prompts::add);
        for (int bytes : new int[] {1600, 3000, 6000}) {
            prompts.add(Corpus.atLeast(bytes));
        }
        return prompts;
    }

    static List<Arguments> clients() {
        List<Arguments> all = new ArrayList<>();
        for (String path : List.of("loopback", "veth")) {
            for (String client : List.of("openai-python", "urllib", "requests", "jdk", "node-fetch", "openai-node", "curl", "go")) {
                all.add(Arguments.of(client, path));
            }
        }
        return all;
    }

    @ParameterizedTest(name = "{0} over {1}")
    @MethodSource("clients")
    void everyChatRequestGetsTheKernelsVerdict(String client, String path) {
        List<String> wrapper = path.equals("veth") ? List.of("ip", "netns", "exec", veth.namespace) : List.of();
        Map<String, String> env = Map.of("BASE_URL", "http://" + veth.hostAddress.getHostAddress() + ":" + port + "/v1",
                "PROMPTS", work.resolve("prompts.json").toString());
        Sdks.Result result = switch (client) {
            case "openai-python" -> Sdks.python(OPENAI_PYTHON, env, wrapper);
            case "urllib" -> Sdks.python(URLLIB, env, wrapper);
            case "requests" -> Sdks.python(REQUESTS, env, wrapper);
            case "node-fetch" -> Sdks.node(NODE_FETCH, env, wrapper);
            case "openai-node" -> Sdks.node(OPENAI_NODE, env, wrapper);
            case "jdk" -> Sdks.run(concat(wrapper, List.of(javaLauncher(), work.resolve("JdkClient.java").toString())),
                    env, Sdks.SCRIPT_TIMEOUT);
            case "curl" -> Sdks.run(concat(wrapper, List.of("bash", "-c", CURL)), env, Sdks.SCRIPT_TIMEOUT);
            case "go" -> Sdks.run(concat(wrapper, List.of(GoClients.chatClient().toString())), env, Sdks.SCRIPT_TIMEOUT);
            default -> throw new IllegalArgumentException(client);
        };
        assertTrue(result.ok(), result.describe());
        List<String> lines = result.stdout().lines().filter(l -> !l.isBlank()).toList();
        assertEquals(prompts().size(), lines.size(), result.describe());
        long kernel = lines.stream().filter(l -> l.startsWith("kernel ")).count();
        // Every one: a request the kernel cannot score (a body cut by a lost segment) is not among these.
        assertEquals(lines.size(), kernel, client + " over " + path + ": route sources " + lines);
        assertTrue(lines.stream().anyMatch(l -> l.endsWith(" large")) && lines.stream().anyMatch(l -> l.endsWith(" nano")),
                "the prompts must reach more than one tier: " + lines);
    }

    private static String javaLauncher() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    // Each client prints "<X-NX-Route-Source> <X-NX-Tier>" per prompt, in order.

    private static final String OPENAI_PYTHON = """
            import json, os
            from openai import OpenAI
            client = OpenAI(base_url=os.environ["BASE_URL"], api_key="sk-test", max_retries=0)
            for prompt in json.load(open(os.environ["PROMPTS"])):
                raw = client.chat.completions.with_raw_response.create(
                    model="nexus", max_tokens=16, messages=[{"role": "user", "content": prompt}])
                raw.parse()
                print(raw.headers.get("x-nx-route-source"), raw.headers.get("x-nx-tier"), flush=True)
            """;

    private static final String URLLIB = """
            import json, os, urllib.request
            for prompt in json.load(open(os.environ["PROMPTS"])):
                body = json.dumps({"model": "nexus", "max_tokens": 16,
                                   "messages": [{"role": "user", "content": prompt}]}).encode()
                request = urllib.request.Request(os.environ["BASE_URL"] + "/chat/completions", data=body,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=30) as answer:
                    answer.read()
                    print(answer.headers["x-nx-route-source"], answer.headers["x-nx-tier"], flush=True)
            """;

    /** requests as people use it: a Session (keep-alive) and json=, which urllib3 sends after the head. */
    private static final String REQUESTS = """
            import json, os, requests
            session = requests.Session()
            for prompt in json.load(open(os.environ["PROMPTS"])):
                answer = session.post(os.environ["BASE_URL"] + "/chat/completions", timeout=30,
                                      json={"model": "nexus", "max_tokens": 16,
                                            "messages": [{"role": "user", "content": prompt}]})
                answer.raise_for_status()
                print(answer.headers.get("x-nx-route-source"), answer.headers.get("x-nx-tier"), flush=True)
            """;

    private static final String NODE_FETCH = """
            import { readFileSync } from 'node:fs';
            for (const prompt of JSON.parse(readFileSync(process.env.PROMPTS, 'utf8'))) {
              const answer = await fetch(process.env.BASE_URL + '/chat/completions', {
                method: 'POST', headers: { 'Content-Type': 'application/json' },
                body: JSON.stringify({ model: 'nexus', max_tokens: 16, messages: [{ role: 'user', content: prompt }] }),
              });
              await answer.text();
              console.log(answer.headers.get('x-nx-route-source') + ' ' + answer.headers.get('x-nx-tier'));
            }
            """;

    private static final String OPENAI_NODE = """
            import OpenAI from 'openai';
            import { readFileSync } from 'node:fs';
            const client = new OpenAI({ baseURL: process.env.BASE_URL, apiKey: 'sk-test', maxRetries: 0 });
            for (const prompt of JSON.parse(readFileSync(process.env.PROMPTS, 'utf8'))) {
              const { response } = await client.chat.completions
                .create({ model: 'nexus', max_tokens: 16, messages: [{ role: 'user', content: prompt }] })
                .withResponse();
              console.log(response.headers.get('x-nx-route-source') + ' ' + response.headers.get('x-nx-tier'));
            }
            """;

    private static final String CURL = """
            python3 -c 'import json,os; [print(json.dumps({"model":"nexus","max_tokens":16,"messages":[{"role":"user","content":p}]})) for p in json.load(open(os.environ["PROMPTS"]))]' |
            while IFS= read -r body; do
              printf '%s' "$body" | curl -s -o /dev/null -D - -H 'Content-Type: application/json' --data-binary @- \\
                "$BASE_URL/chat/completions" | tr -d '\\r' | awk -F': ' 'tolower($1)=="x-nx-route-source"{s=$2} tolower($1)=="x-nx-tier"{t=$2} END{print s " " t}'
            done
            """;

    /** The JDK's HttpClient, HTTP/1.1 as OpenAI clients speak it; run as a single-file program. */
    private static final String JDK_CLIENT = """
            import java.net.URI;
            import java.net.http.HttpClient;
            import java.net.http.HttpRequest;
            import java.net.http.HttpResponse;
            import java.nio.file.Files;
            import java.nio.file.Path;

            public class JdkClient {
                public static void main(String[] args) throws Exception {
                    String json = Files.readString(Path.of(System.getenv("PROMPTS")));
                    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                    // The prompts file is a JSON array of strings: each element re-encoded as it stands.
                    for (String prompt : strings(json)) {
                        String body = "{\\"model\\":\\"nexus\\",\\"max_tokens\\":16,\\"messages\\":[{\\"role\\":\\"user\\",\\"content\\":"
                                + prompt + "}]}";
                        HttpRequest request = HttpRequest.newBuilder(URI.create(System.getenv("BASE_URL") + "/chat/completions"))
                                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
                        HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
                        System.out.println(answer.headers().firstValue("x-nx-route-source").orElse("none") + " "
                                + answer.headers().firstValue("x-nx-tier").orElse("none"));
                    }
                }

                /** The JSON string literals of a flat array, quotes and escapes kept. */
                static java.util.List<String> strings(String array) {
                    java.util.List<String> out = new java.util.ArrayList<>();
                    for (int i = 0; i < array.length(); i++) {
                        if (array.charAt(i) != '"') {
                            continue;
                        }
                        int end = i + 1;
                        while (array.charAt(end) != '"') {
                            end += array.charAt(end) == '\\\\' ? 2 : 1;
                        }
                        out.add(array.substring(i, end + 1));
                        i = end;
                    }
                    return out;
                }
            }
            """;
}
