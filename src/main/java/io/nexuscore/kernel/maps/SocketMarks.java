package io.nexuscore.kernel.maps;

import io.nexuscore.kernel.libbpf.LibC;
import io.nexuscore.kernel.libbpf.Native;
import io.nexuscore.classify.Tier;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import jnr.ffi.byref.IntByReference;

/**
 * Decodes the marks the TC chain writes (NEXUS_MARK in nexus_shared.h):
 * {@code 0x4e58_KKTT}: magic "NX", kind KK (1 = tenant floor on the SYN, 2 = request tier),
 * TT = tier + 1. With net.ipv4.tcp_fwmark_accept=1 the SYN's mark becomes the accepted socket's
 * SO_MARK, so the data plane reads a tenant floor with {@code tenantFloor(SocketMarks.read(fd))}.
 */
public final class SocketMarks {

    public static final int MAGIC = 0x4e580000;
    public static final int MAGIC_MASK = 0xffff0000;
    public static final int KIND_FLOOR = 1;
    public static final int KIND_REQUEST = 2;

    private SocketMarks() {
    }

    public static int encode(int kind, Tier tier) {
        return MAGIC | (kind << 8) | (tier.wire() + 1);
    }

    /** The tenant floor a SYN mark carries; empty for 0, foreign marks and request marks. */
    public static Optional<Tier> tenantFloor(int mark) {
        return decode(mark, KIND_FLOOR);
    }

    /** The tier a request-packet mark carries. */
    public static Optional<Tier> requestTier(int mark) {
        return decode(mark, KIND_REQUEST);
    }

    private static Optional<Tier> decode(int mark, int kind) {
        if ((mark & MAGIC_MASK) != MAGIC || ((mark >>> 8) & 0xff) != kind) {
            return Optional.empty();
        }
        int tier = (mark & 0xff) - 1;
        return tier >= 0 && tier <= Tier.LARGE.wire() ? Optional.of(Tier.fromWire(tier)) : Optional.empty();
    }

    /** getsockopt(fd, SOL_SOCKET, SO_MARK). */
    public static int read(int socketFd) {
        byte[] value = new byte[4];
        IntByReference length = new IntByReference(4);
        Native.check(LibC.get().getsockopt(socketFd, LibC.SOL_SOCKET, LibC.SO_MARK, value, length),
                "getsockopt(SO_MARK)", "fd " + socketFd);
        return ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }
}
