package io.nexuscore.kernel;

import io.nexuscore.kernel.maps.SharedStructs;
import io.nexuscore.classify.FourTuple;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Crafts Ethernet frames for BPF_PROG_TEST_RUN: IPv4/TCP (options, flags), IPv4/UDP, IPv6/TCP. */
public final class Packets {

    public static final byte[] CLIENT = {(byte) 192, 0, 2, 10};
    public static final byte[] ROUTER = {(byte) 192, 0, 2, 1};
    public static final int CLIENT_PORT = 40000;
    public static final int TCP_ACK_PSH = 0x18;
    public static final int TCP_SYN = 0x02;
    public static final int TCP_SYN_ACK = 0x12;

    private Packets() {
    }

    public static byte[] tcp(int dstPort, String payload) {
        return tcp(CLIENT, CLIENT_PORT, dstPort, TCP_ACK_PSH, payload.getBytes(StandardCharsets.ISO_8859_1));
    }

    public static byte[] tcp(byte[] src, int srcPort, int dstPort, int flags, byte[] payload) {
        return ipv4(src, 6, 0, tcpHeader(srcPort, dstPort, flags, 0), payload);
    }

    /** A segment whose payload starts at sequence number {@code seq} (a request written in several segments). */
    public static byte[] tcpAt(byte[] src, int srcPort, int dstPort, int seq, byte[] payload) {
        return ipv4(src, 6, 0, tcpHeader(srcPort, dstPort, TCP_ACK_PSH, 0, seq), payload);
    }

    /** The IPv6 twin of {@link #tcpAt}. */
    public static byte[] ipv6TcpAt(byte[] src, int srcPort, int dstPort, int seq, byte[] payload) {
        return ipv6(src, tcpHeader(srcPort, dstPort, TCP_ACK_PSH, 0, seq), payload);
    }

    /** TCP with {@code optionWords} 4-byte NOP option words (doff > 5). */
    public static byte[] tcpWithOptions(int dstPort, int optionWords, String payload) {
        return ipv4(CLIENT, 6, 0, tcpHeader(CLIENT_PORT, dstPort, TCP_ACK_PSH, optionWords),
                payload.getBytes(StandardCharsets.ISO_8859_1));
    }

    public static byte[] fragment(int dstPort, String payload) {
        return ipv4(CLIENT, 6, 0x2000 /* MF */, tcpHeader(CLIENT_PORT, dstPort, TCP_ACK_PSH, 0),
                payload.getBytes(StandardCharsets.ISO_8859_1));
    }

    public static byte[] udp(int dstPort, String payload) {
        byte[] body = payload.getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer udp = ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN)
                .putShort((short) CLIENT_PORT).putShort((short) dstPort).putShort((short) (8 + body.length)).putShort((short) 0);
        return ipv4(CLIENT, 17, 0, udp.array(), body);
    }

    public static final byte[] CLIENT6 = {0x20, 0x01, 0x0d, (byte) 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a};
    public static final byte[] ROUTER6 = {0x20, 0x01, 0x0d, (byte) 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};

    public static byte[] ipv6Tcp(int dstPort, String payload) {
        return ipv6Tcp(CLIENT6, CLIENT_PORT, dstPort, TCP_ACK_PSH, payload.getBytes(StandardCharsets.ISO_8859_1));
    }

    public static byte[] ipv6Tcp(byte[] src, int srcPort, int dstPort, int flags, byte[] body) {
        return ipv6(src, tcpHeader(srcPort, dstPort, flags, 0), body);
    }

    private static byte[] ipv6(byte[] src, byte[] tcp, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(14 + 40 + tcp.length + body.length).order(ByteOrder.BIG_ENDIAN);
        ethernet(b, 0x86dd);
        b.putInt(0x60000000).putShort((short) (tcp.length + body.length)).put((byte) 6).put((byte) 64);
        b.put(src).put(ROUTER6);
        return b.put(tcp).put(body).array();
    }

    /** IPv6 with a hop-by-hop options header (8 bytes of padding) between the fixed header and TCP. */
    public static byte[] ipv6WithHopByHop(int dstPort, String payload) {
        byte[] body = payload.getBytes(StandardCharsets.ISO_8859_1);
        byte[] tcp = tcpHeader(CLIENT_PORT, dstPort, TCP_ACK_PSH, 0);
        ByteBuffer b = ByteBuffer.allocate(14 + 40 + 8 + tcp.length + body.length).order(ByteOrder.BIG_ENDIAN);
        ethernet(b, 0x86dd);
        b.putInt(0x60000000).putShort((short) (8 + tcp.length + body.length)).put((byte) 0).put((byte) 64);
        b.put(CLIENT6).put(ROUTER6);
        b.put((byte) 6).put((byte) 0).put((byte) 1).put((byte) 4).putInt(0); // next header TCP, PadN
        return b.put(tcp).put(body).array();
    }

    /** The client 4-tuple of an IPv4 or IPv6 TCP frame made here. */
    public static FourTuple tuple(byte[] frame) {
        ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.BIG_ENDIAN);
        boolean v6 = (b.getShort(12) & 0xffff) == 0x86dd;
        int addressLength = v6 ? 16 : 4;
        int addresses = v6 ? 14 + 8 : 14 + 12;
        int tcp = v6 ? 14 + 40 : 14 + 4 * (frame[14] & 0x0f);
        byte[] src = java.util.Arrays.copyOfRange(frame, addresses, addresses + addressLength);
        byte[] dst = java.util.Arrays.copyOfRange(frame, addresses + addressLength, addresses + 2 * addressLength);
        return new FourTuple(SharedStructs.inet(src), b.getShort(tcp) & 0xffff, SharedStructs.inet(dst), b.getShort(tcp + 2) & 0xffff);
    }

    /** A frame whose IPv4 total length claims more bytes than the frame holds. */
    public static byte[] lyingTotalLength(int dstPort, String payload) {
        byte[] frame = tcp(dstPort, payload);
        ByteBuffer.wrap(frame).order(ByteOrder.BIG_ENDIAN).putShort(14 + 2, (short) (frame.length + 100));
        return frame;
    }

    private static byte[] ipv4(byte[] src, int protocol, int fragmentField, byte[] l4, byte[] payload) {
        int totalLength = 20 + l4.length + payload.length;
        ByteBuffer b = ByteBuffer.allocate(14 + totalLength).order(ByteOrder.BIG_ENDIAN);
        ethernet(b, 0x0800);
        int ipStart = b.position();
        b.put((byte) 0x45).put((byte) 0).putShort((short) totalLength).putShort((short) 1)
                .putShort((short) fragmentField).put((byte) 64).put((byte) protocol).putShort((short) 0)
                .put(src).put(ROUTER);
        b.putShort(ipStart + 10, checksum(b.array(), ipStart, 20));
        return b.put(l4).put(payload).array();
    }

    private static byte[] tcpHeader(int srcPort, int dstPort, int flags, int optionWords) {
        return tcpHeader(srcPort, dstPort, flags, optionWords, 1);
    }

    private static byte[] tcpHeader(int srcPort, int dstPort, int flags, int optionWords, int seq) {
        ByteBuffer b = ByteBuffer.allocate(20 + 4 * optionWords).order(ByteOrder.BIG_ENDIAN)
                .putShort((short) srcPort).putShort((short) dstPort).putInt(seq).putInt(flags == TCP_SYN ? 0 : 1)
                .put((byte) ((5 + optionWords) << 4)).put((byte) flags).putShort((short) 65535)
                .putShort((short) 0).putShort((short) 0);
        for (int i = 0; i < optionWords; i++) {
            b.putInt(0x01010101);
        }
        return b.array();
    }

    private static void ethernet(ByteBuffer b, int etherType) {
        b.put(new byte[] {2, 0, 0, 0, 0, 1}).put(new byte[] {2, 0, 0, 0, 0, 2}).putShort((short) etherType);
    }

    private static short checksum(byte[] data, int offset, int length) {
        int sum = 0;
        for (int i = 0; i < length; i += 2) {
            sum += ((data[offset + i] & 0xff) << 8) | (data[offset + i + 1] & 0xff);
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (short) ~sum;
    }

    /** A short head (curl) or the OpenAI Python SDK's (about 470 bytes of headers). */
    public static byte[] chatHead(int contentLength, boolean sdk) {
        String headers = sdk
                ? "Host: 127.0.0.1:8080\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n"
                        + "authorization: Bearer sk-test\r\naccept: application/json\r\ncontent-type: application/json\r\n"
                        + "user-agent: OpenAI/Python 3.22.1\r\nx-stainless-lang: python\r\nx-stainless-package-version: 3.22.1\r\n"
                        + "x-stainless-os: Linux\r\nx-stainless-arch: x64\r\nx-stainless-runtime: CPython\r\n"
                        + "x-stainless-runtime-version: 3.11.7\r\nx-stainless-async: false\r\nx-stainless-retry-count: 0\r\n"
                        + "x-stainless-read-timeout: 600\r\n"
                : "Host: 127.0.0.1:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\nContent-Type: application/json\r\n";
        return ("POST /v1/chat/completions HTTP/1.1\r\n" + headers + "Content-Length: " + contentLength + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
    }

}
