package io.nexuscore.tenants;

import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.kernel.maps.TenantPolicyMap;
import static io.nexuscore.kernel.maps.SharedStructs.TENANT_FLOOR;
import static io.nexuscore.kernel.maps.SharedStructs.TENANT_KEY;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.classify.Tier;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The tenant_policy key and value as {@link TenantPolicyMap} encodes them, against the layouts
 * BtfLayoutTest checks ({@code SharedStructs.TENANT_KEY}, {@code TENANT_FLOOR}) and the byte order
 * nexus_shared.h documents: prefixlen host order, addr network order, pad zero.
 */
class TenantPolicyCodecTest {

    private static final byte[] ADDRESS = {(byte) 192, 0, 2, 0};

    @Test
    void keyPutsPrefixLengthInHostOrderAndAddressInNetworkOrderAtTheLayoutsOffsets() {
        byte[] key = TenantPolicyMap.key(Ipv4Prefix.covering(java.nio.ByteBuffer.wrap(ADDRESS).getInt(), 24));

        assertEquals(TENANT_KEY.size(), key.length);
        ByteBuffer b = ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(24, b.getInt(TENANT_KEY.offset("prefixlen")));
        byte[] address = new byte[4];
        b.get(TENANT_KEY.offset("addr"), address);
        assertArrayEquals(ADDRESS, address);
    }

    @Test
    void keyDecodesBackToThePrefix() {
        Ipv4Prefix prefix = Ipv4Prefix.covering(java.nio.ByteBuffer.wrap(ADDRESS).getInt(), 24);
        assertEquals(prefix, TenantPolicyMap.decodeKey(TenantPolicyMap.key(prefix)));
    }

    @Test
    void valueHoldsTheFloorsWireValueAndZeroPad() {
        for (Tier floor : Tier.values()) {
            byte[] value = TenantPolicyMap.value(floor);
            assertEquals(TENANT_FLOOR.size(), value.length);
            byte[] expected = new byte[TENANT_FLOOR.size()];
            expected[TENANT_FLOOR.offset("tier_floor")] = (byte) floor.wire();
            assertArrayEquals(expected, value, floor.label());
            assertEquals(Optional.of(floor), TenantPolicyMap.decodeValue(value));
        }
    }

    /** tenant_policy is pinned: a floor byte another tool wrote past large is no floor, as in the TC program. */
    @Test
    void aFloorByteThatNamesNoTierIsNoFloor() {
        for (int wire : new int[] {3, 9, 0xff}) {
            byte[] value = new byte[TENANT_FLOOR.size()];
            value[TENANT_FLOOR.offset("tier_floor")] = (byte) wire;
            assertEquals(Optional.empty(), TenantPolicyMap.decodeValue(value), Integer.toString(wire));
        }
    }

    @Test
    void prefixLengthOutsideZeroToThirtyTwoIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Ipv4Prefix.covering(0, 33));
    }

    /** Another tool may write a key with host bits set: it reads as the prefix the LPM trie matches. */
    @Test
    void aKeyWithHostBitsSetDecodesToItsPrefix() {
        byte[] key = TenantPolicyMap.key(Ipv4Prefix.host(SharedStructs.inet4(new byte[] {(byte) 192, 0, 2, 77})));
        ByteBuffer.wrap(key).order(ByteOrder.LITTLE_ENDIAN).putInt(TENANT_KEY.offset("prefixlen"), 24);
        assertEquals(Ipv4Prefix.parse("192.0.2.0/24"), TenantPolicyMap.decodeKey(key));
    }
}
