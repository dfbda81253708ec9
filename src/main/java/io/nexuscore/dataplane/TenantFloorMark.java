package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import java.util.Optional;

/**
 * Decodes the tenant tier floor the TC program writes into the SYN's skb->mark, which the kernel
 * copies to the accepted socket's SO_MARK (net.ipv4.tcp_fwmark_accept=1).
 *
 * Encoding (must match nexus_shared.h): the high 16 bits are the magic 0x4e58 ("NX") so marks set
 * by other software (iptables, VPNs) are never mistaken for a floor; the low 16 bits hold
 * tier wire value + 1, so 0 means "no floor".
 */
public final class TenantFloorMark {

    static final int MAGIC = 0x4e58_0000;
    static final int MAGIC_MASK = 0xffff_0000;

    private TenantFloorMark() {
    }

    public static Optional<Tier> decode(int mark) {
        if ((mark & MAGIC_MASK) != MAGIC) {
            return Optional.empty();
        }
        int value = mark & 0xffff;
        if (value == 0 || value > Tier.values().length) {
            return Optional.empty();
        }
        return Optional.of(Tier.fromWire(value - 1));
    }

    public static int encode(Tier floor) {
        return MAGIC | (floor.wire() + 1);
    }
}
