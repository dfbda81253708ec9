package io.nexuscore.fleet;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One network namespace joined to the host by several veth pairs, each its own /30 of
 * 169.254.S.0/24 (host end .4i+1, namespace end .4i+2). Routers inside bind one pair's address each
 * (their XDP/TC on that pair's namespace end) and reach each other locally; the host reaches every
 * one over its own pair. Nothing is forwarded and no host sysctl changes. Closing deletes the
 * namespace, which takes the pairs along.
 */
final class LinkedNamespace implements AutoCloseable {

    /** One veth pair: the host's address, the namespace's interface and address. */
    record Link(String hostAddress, String peerInterface, String peerAddress) {
    }

    final String name;
    final List<Link> links = new ArrayList<>();
    private final List<String> hostInterfaces = new ArrayList<>();

    private LinkedNamespace(String name) {
        this.name = name;
    }

    static LinkedNamespace create(int count) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String tag = Integer.toHexString(0x100000 + random.nextInt(0xeffff));
        String prefix = "169.254." + (1 + random.nextInt(168)) + "."; // clear of 169.254.169.254
        LinkedNamespace ns = new LinkedNamespace("nxtest-" + tag);
        try {
            run("ip", "netns", "add", ns.name);
            ns.exec("ip", "link", "set", "lo", "up");
            for (int i = 0; i < count; i++) {
                String host = "nxh" + tag + i;
                Link link = new Link(prefix + (4 * i + 1), "nxp" + tag + i, prefix + (4 * i + 2));
                run("ip", "link", "add", host, "type", "veth", "peer", "name", link.peerInterface());
                ns.hostInterfaces.add(host);
                run("ip", "link", "set", link.peerInterface(), "netns", ns.name);
                run("ip", "addr", "add", link.hostAddress() + "/30", "dev", host);
                run("ip", "link", "set", host, "up");
                ns.exec("ip", "addr", "add", link.peerAddress() + "/30", "dev", link.peerInterface());
                ns.exec("ip", "link", "set", link.peerInterface(), "up");
                ns.links.add(link);
            }
            return ns;
        } catch (RuntimeException e) {
            ns.close();
            throw e;
        }
    }

    /** What runs a command inside. */
    List<String> prefix() {
        return List.of("ip", "netns", "exec", name);
    }

    private void exec(String... command) {
        List<String> full = new ArrayList<>(prefix());
        full.addAll(List.of(command));
        run(full.toArray(String[]::new));
    }

    @Override
    public void close() {
        quietly("ip", "netns", "del", name);
        for (String host : hostInterfaces) {
            quietly("ip", "link", "del", host); // in case a pair outlived the namespace
        }
    }

    private static void run(String... command) {
        int exit = quietly(command);
        if (exit != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + exit);
        }
    }

    private static int quietly(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
