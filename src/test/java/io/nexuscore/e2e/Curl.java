package io.nexuscore.e2e;

import java.util.ArrayList;
import java.util.List;

/**
 * The data-plane client: curl, run where the suite says (inside the test network namespace in
 * kernel mode, so the packets cross the veth and meet XDP and TC; on the host in user-space mode).
 * Several requests in one invocation, separated by {@code --next}, share curl's connection cache:
 * they go over one keep-alive connection, which {@code %{num_connects}} and {@code %{local_port}} prove.
 */
final class Curl {

    /** What curl reports about one transfer. */
    record Reply(int status, String assignedTier, String tier, String score, String routeSource,
                 int localPort, int newConnections, String retryAfter, String tokens) {
    }

    private static final String FIELD = "\u001f";
    private static final String WRITE_OUT = String.join(FIELD, "%{http_code}", "%header{x-nx-assigned-tier}",
            "%header{x-nx-tier}", "%header{x-nx-score}", "%header{x-nx-route-source}", "%{local_port}",
            "%{num_connects}", "%header{retry-after}", "%header{x-nx-tokens}") + "\\n";

    private final List<String> prefix;
    private final String baseUrl;

    /** @param prefix the command that runs curl (e.g. {@code ip netns exec NS}); empty on the host */
    Curl(List<String> prefix, String host, int port) {
        this.prefix = List.copyOf(prefix);
        this.baseUrl = "http://" + host + ":" + port;
    }

    Reply post(String path, String body) {
        return postAll(List.of(new Request(path, body))).get(0);
    }

    record Request(String path, String body) {
    }

    /** All requests in one curl invocation: one connection, reused, in order. */
    List<Reply> postAll(List<Request> requests) {
        List<String> command = new ArrayList<>(prefix);
        command.add("curl");
        for (int i = 0; i < requests.size(); i++) {
            if (i > 0) {
                command.add("--next");
            }
            command.addAll(List.of("-sS", "-m", "30", "-o", "/dev/null", "-w", WRITE_OUT,
                    "-H", "Content-Type: application/json", "-H", "Expect:",
                    "--data-binary", requests.get(i).body(), baseUrl + requests.get(i).path()));
        }
        String output = Processes.ok(command);
        List<Reply> replies = new ArrayList<>();
        for (String line : output.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split(FIELD, -1);
            if (f.length != 9) {
                throw new IllegalStateException("unexpected curl output: " + output);
            }
            replies.add(new Reply(Integer.parseInt(f[0]), f[1], f[2], f[3], f[4], Integer.parseInt(f[5]),
                    Integer.parseInt(f[6]), f[7], f[8]));
        }
        if (replies.size() != requests.size()) {
            throw new IllegalStateException(requests.size() + " requests, curl reported " + replies.size() + ": " + output);
        }
        return replies;
    }
}
