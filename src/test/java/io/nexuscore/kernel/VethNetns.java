package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A veth pair whose peer lives in a network namespace created for one test, with link-local
 * addresses (169.254.X.Y/30) and unique-local IPv6 addresses (fd00:6e78:X:Y::1 and ::2 /64, no
 * duplicate-address detection, so they are usable at once) that exist only on this pair. Closing deletes the namespace and the
 * pair, whatever state they are in.
 */
public final class VethNetns implements AutoCloseable {

    public final String namespace;
    public final String hostInterface;
    public final String peerInterface;
    public final Inet4Address hostAddress;
    public final Inet4Address peerAddress;
    public final Inet6Address hostAddress6;
    public final Inet6Address peerAddress6;

    private VethNetns(String tag, int subnet, int base) {
        namespace = "nxtest-" + tag;
        hostInterface = "nxh" + tag;
        peerInterface = "nxp" + tag;
        hostAddress = SharedStructs.inet4(new byte[] {(byte) 169, (byte) 254, (byte) subnet, (byte) (base + 1)});
        peerAddress = SharedStructs.inet4(new byte[] {(byte) 169, (byte) 254, (byte) subnet, (byte) (base + 2)});
        byte[] v6 = {(byte) 0xfd, 0, 0x6e, 0x78, 0, (byte) subnet, 0, (byte) base, 0, 0, 0, 0, 0, 0, 0, 1};
        hostAddress6 = (Inet6Address) SharedStructs.inet(v6.clone());
        v6[15] = 2;
        peerAddress6 = (Inet6Address) SharedStructs.inet(v6);
    }

    public static VethNetns create() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String tag = Integer.toHexString(0x100000 + random.nextInt(0xeffff));
        int subnet = 1 + random.nextInt(168); // below 169: stays clear of 169.254.169.254
        VethNetns v = new VethNetns(tag, subnet, 4 * random.nextInt(63));
        try {
            Shell.ok("ip", "netns", "add", v.namespace);
            Shell.ok("ip", "link", "add", v.hostInterface, "type", "veth", "peer", "name", v.peerInterface);
            Shell.ok("ip", "link", "set", v.peerInterface, "netns", v.namespace);
            Shell.ok("ip", "addr", "add", v.hostAddress.getHostAddress() + "/30", "dev", v.hostInterface);
            Shell.ok("ip", "-6", "addr", "add", v.hostAddress6.getHostAddress() + "/64", "dev", v.hostInterface, "nodad");
            Shell.ok("ip", "link", "set", v.hostInterface, "up");
            v.inNamespace("ip", "addr", "add", v.peerAddress.getHostAddress() + "/30", "dev", v.peerInterface);
            v.inNamespace("ip", "-6", "addr", "add", v.peerAddress6.getHostAddress() + "/64", "dev", v.peerInterface, "nodad");
            v.inNamespace("ip", "link", "set", v.peerInterface, "up");
            v.inNamespace("ip", "link", "set", "lo", "up");
            return v;
        } catch (RuntimeException e) {
            v.close();
            throw e;
        }
    }

    public String inNamespace(String... command) {
        String[] full = new String[command.length + 4];
        full[0] = "ip";
        full[1] = "netns";
        full[2] = "exec";
        full[3] = namespace;
        System.arraycopy(command, 0, full, 4, command.length);
        return Shell.ok(full);
    }

    @Override
    public void close() {
        Shell.run("ip", "netns", "del", namespace);   // takes the peer, and with it the pair, along
        Shell.run("ip", "link", "del", hostInterface); // in case the pair outlived the namespace
    }
}
