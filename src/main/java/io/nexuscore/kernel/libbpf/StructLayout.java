package io.nexuscore.kernel.libbpf;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Size and member offsets of a C struct from nexus_shared.h as the Java code assumes them.
 * BtfLayoutTest compares every layout in {@link SharedStructs#ALL} with the compiled object's BTF.
 */
public record StructLayout(String name, int size, Map<String, Integer> offsets) {

    public StructLayout {
        offsets = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(offsets));
    }

    /** {@code of("flow_key", 12, "src_ip", 0, "dst_ip", 4, ...)}: member names and offsets in order. */
    public static StructLayout of(String name, int size, Object... memberOffsets) {
        Map<String, Integer> offsets = new LinkedHashMap<>();
        for (int i = 0; i < memberOffsets.length; i += 2) {
            offsets.put((String) memberOffsets[i], (Integer) memberOffsets[i + 1]);
        }
        return new StructLayout(name, size, offsets);
    }

    public int offset(String member) {
        Integer offset = offsets.get(member);
        if (offset == null) {
            throw new IllegalArgumentException(name + " has no member " + member);
        }
        return offset;
    }
}
