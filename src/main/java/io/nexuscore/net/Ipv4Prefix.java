package io.nexuscore.net;

/**
 * An IPv4 prefix such as {@code 192.0.2.0/24}. The address is held as an unsigned 32-bit value in
 * host order; host bits below the prefix length must be zero, so one prefix has one spelling.
 */
public record Ipv4Prefix(int address, int length) {

    public Ipv4Prefix {
        if (length < 0 || length > 32) {
            throw new IllegalArgumentException("prefix length must be in 0..32, got " + length);
        }
        if ((address & ~mask(length)) != 0) {
            throw new IllegalArgumentException("host bits are set below /" + length
                    + " (did you mean " + format(address & mask(length)) + "/" + length + "?)");
        }
    }

    /** The prefix of {@code length} bits that covers {@code address} (host order): host bits dropped. */
    public static Ipv4Prefix covering(int address, int length) {
        if (length < 0 || length > 32) {
            throw new IllegalArgumentException("prefix length must be in 0..32, got " + length);
        }
        return new Ipv4Prefix(address & mask(length), length);
    }

    /** The /32 of one address. */
    public static Ipv4Prefix host(java.net.Inet4Address address) {
        return new Ipv4Prefix(java.nio.ByteBuffer.wrap(address.getAddress()).getInt(), 32);
    }

    /** Parses dotted-quad CIDR notation; the message says what is wrong. */
    public static Ipv4Prefix parse(String text) {
        int slash = text.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("expected a.b.c.d/len, got '" + text + "'");
        }
        String[] octets = text.substring(0, slash).split("\\.", -1);
        if (octets.length != 4) {
            throw new IllegalArgumentException("expected four dotted octets in '" + text + "'");
        }
        int address = 0;
        for (String octet : octets) {
            address = (address << 8) | parseDecimal(octet, 255, "octet", text);
        }
        int length = parseDecimal(text.substring(slash + 1), 32, "prefix length", text);
        return new Ipv4Prefix(address, length);
    }

    /** True when the host-order IPv4 address falls inside this prefix. */
    public boolean contains(int ipv4) {
        return (ipv4 & mask(length)) == address;
    }

    @Override
    public String toString() {
        return format(address) + "/" + length;
    }

    private static int mask(int length) {
        return length == 0 ? 0 : -1 << (32 - length);
    }

    private static int parseDecimal(String digits, int max, String what, String text) {
        if (digits.isEmpty() || digits.length() > 3 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("bad " + what + " '" + digits + "' in '" + text + "'");
        }
        int value = Integer.parseInt(digits);
        if (value > max) {
            throw new IllegalArgumentException(what + " " + value + " exceeds " + max + " in '" + text + "'");
        }
        return value;
    }

    private static String format(int address) {
        return (address >>> 24) + "." + ((address >>> 16) & 0xff) + "." + ((address >>> 8) & 0xff) + "." + (address & 0xff);
    }
}
